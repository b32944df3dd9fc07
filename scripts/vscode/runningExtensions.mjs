// VS Code's own count of an extension's activation time, read where a person reads it: the
// "Developer: Show Running Extensions" editor of the window `page` shows. Each row's time there is
// the extension host's `codeLoadingTime + activateCallTime` (loading the extension's main module and
// the synchronous activate() call; a promise activate() returns is not counted).

/**
 * Opens Show Running Extensions in the window on `page` and returns the activation time (ms) of the
 * extension whose display name is `displayName`, and what the row says ("Activation: 12ms").
 * @param {import('playwright-core').Page} page
 * @param {string} displayName
 * `others`: every running extension's row, name and time, as the editor lists them.
 * @returns {Promise<{ ms: number, text: string, others: { name: string, text: string }[] }>}
 */
export async function runningExtensionActivation(page, displayName) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor();
  await input.fill('>Developer: Show Running Extensions');
  await page.locator('.quick-input-list').getByRole('option', { name: /Developer: Show Running Extensions/ }).first().waitFor();
  await page.keyboard.press('Enter');
  // The list renders the rows in view only: the window is made tall enough for all of them (see launchBrowser's height).
  const row = page.locator('.runtime-extensions-editor .extension').filter({ has: page.locator('.name', { hasText: displayName }) });
  const time = row.locator('.activation-time');
  for (const end = Date.now() + 60_000; ; await page.waitForTimeout(250)) {
    const text = ((await time.textContent({ timeout: 60_000 })) ?? '').trim();
    const m = /Activation: (\d+)ms/.exec(text);
    if (m) {
      const others = await page.locator('.runtime-extensions-editor .extension').evaluateAll((rows) =>
        rows.map((r) => ({ name: r.querySelector('.name')?.textContent ?? '', text: r.querySelector('.activation-time')?.textContent ?? '' })),
      );
      return { ms: Number(m[1]), text, others };
    }
    if (Date.now() > end) throw new Error(`Show Running Extensions gives no activation time for ${displayName}: "${text}"`);
  }
}
