// `npm start` opens the product: the script prints an address, and that address shows VS Code with
// the AVFS view open on the demo vaults, served by a running vault host. Checked with the real
// script, the real code-server and headless Chromium, as a person opening the printed URL would.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { launchBrowser } from '../scripts/vscode/browser.mjs';
import { ROOT, tempDir } from './helpers';

test('npm start prints an address that shows the vault tree of the demo, and Ctrl-C stops everything', { timeout: 600_000 }, async () => {
  const t = tempDir('avfs-start-');
  const start = spawn(process.execPath, [join(ROOT, 'scripts', 'start.mjs'), '--dir', join(t.dir, 'state')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => start.on('exit', (code) => resolve(code)));
  let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      for (const stream of [start.stdout, start.stderr]) {
        createInterface({ input: stream }).on('line', (line) => {
          output += `${line}\n`;
          const m = /^\s+(http:\/\/127\.0\.0\.1:\d+\/\S+)$/.exec(line);
          if (m?.[1]) resolve(m[1]);
        });
      }
      void exited.then((code) => reject(new Error(`npm start exited (${code}) before it printed an address:\n${output}`)));
    });
    assert.match(output, /AVFS in VS Code is ready \(\d+\.\d s\)/);
    browser = await launchBrowser({ userDataDir: join(t.dir, 'chromium') });
    const page = browser.page;
    page.setDefaultTimeout(60_000);
    await page.goto(url);
    const sideBar = page.locator('#workbench\\.parts\\.sidebar');
    await sideBar.getByText('AVFS: Vaults').waitFor();
    for (const vault of ['demo', 'demo-try-async', 'scratch']) {
      await sideBar.getByRole('treeitem', { name: new RegExp(`^${vault} `) }).waitFor();
    }
    await page.locator('#workbench\\.parts\\.statusbar').getByRole('button', { name: 'AVFS vault host: ready', exact: true }).waitFor();
  } finally {
    await browser?.context.close();
    start.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
    if (code === 'timeout') start.kill('SIGKILL');
    t.cleanup();
    assert.equal(code, 0, `npm start did not stop cleanly on Ctrl-C:\n${output}`);
  }
});
