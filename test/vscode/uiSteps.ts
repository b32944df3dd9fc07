// Playwright steps that tests inside VS Code ask the runner to perform on their own window (./ui.ts).
// This file runs in the runner's Node process (Node 20, playwright-core), never in the extension host.
// Steps are small and generic (find, click, look, screenshot); the tests keep the assertions.
import type { Locator, Page } from 'playwright-core';

export interface StepContext {
  page: Page;
  /** Saves a PNG of the window as <screenshots dir>/<name>.png and returns its path (the runner prints it). */
  screenshot(name: string): Promise<string>;
}

/** What to find: an ARIA role and accessible name, visible text, or a CSS selector; optionally inside a CSS scope. */
export type Target = ({ role: Parameters<Page['getByRole']>[0]; name: string } | { text: string } | { css: string }) & {
  within?: string;
  exact?: boolean;
};

function locate(page: Page, t: Target): Locator {
  const scope = t.within ? page.locator(t.within) : page;
  const exact = t.exact ?? false;
  const all = 'role' in t ? scope.getByRole(t.role, { name: t.name, exact }) : 'text' in t ? scope.getByText(t.text, { exact }) : scope.locator(t.css);
  // The workbench keeps hidden copies of many parts (views of closed containers): skip them.
  return all.filter({ visible: true }).first();
}

export const uiSteps = {
  /** Waits until the target is visible; returns its text (whitespace collapsed). */
  async visible(ctx: StepContext, t: Target): Promise<string> {
    const l = locate(ctx.page, t);
    await l.waitFor({ state: 'visible' });
    return (await l.innerText()).replace(/\s+/g, ' ').trim();
  },
  /** Clicks the target once it is visible. */
  async click(ctx: StepContext, t: Target): Promise<void> {
    await locate(ctx.page, t).click();
  },
  /** Attribute values of the target (for example aria-selected of an activity-bar tab). */
  async attributes(ctx: StepContext, args: Target & { names: string[] }): Promise<Record<string, string | null>> {
    const l = locate(ctx.page, args);
    await l.waitFor({ state: 'attached' });
    const out: Record<string, string | null> = {};
    for (const n of args.names) out[n] = await l.getAttribute(n);
    return out;
  },
  /** The value of an input or the selected option of a select (for example the Output panel's channel). */
  async value(ctx: StepContext, t: Target): Promise<string> {
    return locate(ctx.page, t).inputValue();
  },
  /** The target's HTML: for finding selectors while writing a test. */
  async html(ctx: StepContext, t: Target): Promise<string> {
    return locate(ctx.page, t).evaluate((e) => e.outerHTML);
  },
  /** Saves a screenshot of the whole window. */
  async screenshot(ctx: StepContext, args: { name: string }): Promise<string> {
    return ctx.screenshot(args.name);
  },
} satisfies Record<string, (ctx: StepContext, args: never) => Promise<unknown>>;

export type UiSteps = typeof uiSteps;
