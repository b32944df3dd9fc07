// Playwright steps that tests inside VS Code ask the runner to perform on their own window (./ui.ts).
// This file runs in the runner's Node process (Node 20, playwright-core), never in the extension host.
// Steps are small and generic (find, click, look, screenshot); the tests keep the assertions.
import type { Frame, Locator, Page } from 'playwright-core';

export interface StepContext {
  page: Page;
  /** Saves a PNG of the window as <screenshots dir>/<name>.png and returns its path (the runner prints it). */
  screenshot(name: string): Promise<string>;
}

/**
 * What to find: an ARIA role and accessible name (a substring, the whole name with `exact`, or a
 * regular expression's source as `pattern`), visible text, or a CSS selector; optionally inside a
 * CSS scope.
 */
export type Target = (
  | { role: Parameters<Page['getByRole']>[0]; name: string }
  | { role: Parameters<Page['getByRole']>[0]; pattern: string }
  | { text: string }
  | { css: string }
) & {
  within?: string;
  exact?: boolean;
  /**
   * Look inside a webview: the frame (at any depth) that holds an element matching this CSS
   * selector, such as the executions view's `#avfs-executions`. Locators pierce shadow roots, so
   * the parts of `@vscode-elements` controls are found as well.
   */
  frame?: string;
};

/** The frame of a webview holding `selector`, waiting up to 10 s for the webview to load. */
async function frameWith(page: Page, selector: string): Promise<Frame> {
  for (const end = Date.now() + 10_000; ; await page.waitForTimeout(100)) {
    for (const f of page.frames()) {
      if (await f.locator(selector).count().catch(() => 0)) return f;
    }
    if (Date.now() > end) throw new Error(`no webview frame holds ${selector}`);
  }
}

/** Every visible element the target matches. */
function locateAll(page: Page | Frame, t: Target): Locator {
  const scope = t.within ? page.locator(t.within) : page;
  const exact = t.exact ?? false;
  const all =
    'pattern' in t
      ? scope.getByRole(t.role, { name: new RegExp(t.pattern) })
      : 'role' in t
        ? scope.getByRole(t.role, { name: t.name, exact })
        : 'text' in t
          ? scope.getByText(t.text, { exact })
          : scope.locator(t.css);
  // The workbench keeps hidden copies of many parts (views of closed containers): skip them.
  return all.filter({ visible: true });
}

function locate(page: Page | Frame, t: Target): Locator {
  return locateAll(page, t).first();
}

/** The page, or the webview frame the target names. */
function scopeOf(ctx: StepContext, t: Target): Promise<Page | Frame> {
  return t.frame ? frameWith(ctx.page, t.frame) : Promise.resolve(ctx.page);
}

export const uiSteps = {
  /** Waits until the target is visible; returns its text (whitespace collapsed). */
  async visible(ctx: StepContext, t: Target): Promise<string> {
    const l = locate(await scopeOf(ctx, t), t);
    await l.waitFor({ state: 'visible' });
    return (await l.innerText()).replace(/\s+/g, ' ').trim();
  },
  /** Clicks the target once it is visible. */
  async click(ctx: StepContext, t: Target): Promise<void> {
    await locate(await scopeOf(ctx, t), t).click();
  },
  /** Expands a tree row (a click, then the Right key if the click only selected it); waits until it is expanded. */
  async expand(ctx: StepContext, t: Target): Promise<void> {
    const l = locate(await scopeOf(ctx, t), t);
    const expanded = async () => (await l.getAttribute('aria-expanded')) === 'true';
    if (await expanded()) return;
    await l.click();
    for (let i = 0; i < 20 && !(await expanded()); i++) {
      if (i === 4) await ctx.page.keyboard.press('ArrowRight');
      await ctx.page.waitForTimeout(100);
    }
    if (!(await expanded())) throw new Error('the row did not expand');
  },
  /** Attribute values of the target (for example aria-selected of an activity-bar tab). */
  async attributes(ctx: StepContext, args: Target & { names: string[] }): Promise<Record<string, string | null>> {
    const l = locate(await scopeOf(ctx, args), args);
    await l.waitFor({ state: 'attached' });
    const out: Record<string, string | null> = {};
    for (const n of args.names) out[n] = await l.getAttribute(n);
    return out;
  },
  /** Moves the mouse over the target (inline tree actions and hovers appear on hover). */
  async hover(ctx: StepContext, t: Target): Promise<void> {
    await locate(await scopeOf(ctx, t), t).hover();
  },
  /**
   * Right-clicks the target and returns the labels of the context menu that opens (it stays open:
   * click an item with `click`, or close it with `press` Escape).
   */
  async contextMenu(ctx: StepContext, t: Target): Promise<string[]> {
    await locate(await scopeOf(ctx, t), t).click({ button: 'right' });
    const menu = ctx.page.locator('.context-view .monaco-menu').filter({ visible: true }).first();
    await menu.waitFor({ state: 'visible' });
    const items = await menu.getByRole('menuitem').allInnerTexts();
    return items.map((s) => s.split('\n')[0]!.trim()).filter(Boolean);
  },
  /** Drags the side bar's edge until it is `width` pixels wide, as a person resizes it; returns the width it had. */
  async resizeSideBar(ctx: StepContext, args: { width: number }): Promise<number> {
    const box = await ctx.page.locator('#workbench\\.parts\\.sidebar').boundingBox();
    if (!box) throw new Error('the side bar is not shown');
    const y = box.y + box.height / 2;
    await ctx.page.mouse.move(box.x + box.width + 1, y);
    await ctx.page.mouse.down();
    await ctx.page.mouse.move(box.x + args.width, y, { steps: 5 });
    await ctx.page.mouse.up();
    return Math.round(box.width);
  },
  /** Moves the mouse to a point of the window (away from anything, so no hover stays open). */
  async moveMouse(ctx: StepContext, args: { x: number; y: number }): Promise<void> {
    await ctx.page.mouse.move(args.x, args.y);
  },
  /**
   * Runs the item `item` of the target's context menu, as a person does: right-click, click the
   * item, and the menu closes (a menu redrawn under the pointer can swallow a click: then again).
   */
  async menu(ctx: StepContext, args: Target & { item: string }): Promise<void> {
    const open = ctx.page.locator('.context-view .monaco-menu').filter({ visible: true });
    for (let attempt = 0; ; attempt++) {
      if ((await open.count()) === 0) await locate(await scopeOf(ctx, args), args).click({ button: 'right' });
      await open.first().getByRole('menuitem', { name: args.item, exact: true }).click();
      try {
        await open.first().waitFor({ state: 'hidden', timeout: 2000 });
        return;
      } catch (e) {
        if (attempt === 2) throw e;
      }
    }
  },
  /** Presses a key or chord on the focused element (Playwright names: "Control+S", "Escape", "End"). */
  async press(ctx: StepContext, args: { key: string }): Promise<void> {
    await ctx.page.keyboard.press(args.key);
  },
  /** Types text into the focused element, key by key, as a person would. */
  async type(ctx: StepContext, args: { text: string }): Promise<void> {
    await ctx.page.keyboard.type(args.text);
  },
  /** The texts of every visible element the target's selector matches (whitespace collapsed). */
  async texts(ctx: StepContext, t: Target): Promise<string[]> {
    const texts = await locateAll(await scopeOf(ctx, t), t).allInnerTexts();
    return texts.map((s) => s.replace(/\s+/g, ' ').trim());
  },
  /** Waits until the target is gone (hidden or detached). */
  async gone(ctx: StepContext, t: Target): Promise<void> {
    await locate(await scopeOf(ctx, t), t).waitFor({ state: 'hidden' });
  },
  /** The value of an input or the selected option of a select (for example the Output panel's channel). */
  async value(ctx: StepContext, t: Target): Promise<string> {
    return locate(await scopeOf(ctx, t), t).inputValue();
  },
  /** The target's HTML: for finding selectors while writing a test. */
  async html(ctx: StepContext, t: Target): Promise<string> {
    return locate(await scopeOf(ctx, t), t).evaluate((e) => e.outerHTML);
  },
  /** The target's scroll position and height, after scrolling it to `top` when given (as a person's wheel would). */
  async scroll(ctx: StepContext, args: Target & { top?: number }): Promise<{ top: number; height: number }> {
    return locate(await scopeOf(ctx, args), args).evaluate((e, top) => {
      if (top !== null) e.scrollTop = top;
      return { top: e.scrollTop, height: e.scrollHeight };
    }, args.top ?? null);
  },
  /** Saves a screenshot of the whole window. */
  async screenshot(ctx: StepContext, args: { name: string }): Promise<string> {
    return ctx.screenshot(args.name);
  },
} satisfies Record<string, (ctx: StepContext, args: never) => Promise<unknown>>;

export type UiSteps = typeof uiSteps;
