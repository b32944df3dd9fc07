// `npm start` opens the product: the script prints an address, and that address shows VS Code with
// the AVFS view open on the demo vaults, served by a running vault host; its scripted agent then
// asks for an approval, which pops up as a toast and is answered there, and its run shows in the
// Executions view; a run in flight survives a reload of that window. Checked with the real script, the real code-server and headless Chromium, as a person opening the printed
// URL would; Ctrl-C leaves no process of it behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test } from 'node:test';
import { launchBrowser } from '../scripts/vscode/browser.mjs';
import { cacheRoot } from '../scripts/vscode/install.mjs';
import { alive, ROOT, tempDir } from './helpers';

/** Where the toast's picture goes (docs/screenshots/approval-notification.png is a copy of it). */
const SCREENSHOTS = join(cacheRoot(), 'screenshots');

test('npm start prints an address that shows the vault tree of the demo; its agent asks, in a toast, and is approved there; Ctrl-C stops everything', { timeout: 600_000 }, async () => {
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
    mkdirSync(SCREENSHOTS, { recursive: true });
    browser = await launchBrowser({ userDataDir: join(t.dir, 'chromium') });
    const page = browser.page;
    page.setDefaultTimeout(60_000);
    await page.goto(url);
    const sideBar = page.locator('#workbench\\.parts\\.sidebar');
    await sideBar.getByText('AVFS: Vaults').waitFor();
    for (const vault of ['demo', 'demo-try-async', 'scratch']) {
      await sideBar.getByRole('treeitem', { name: new RegExp(`^${vault} `) }).waitFor();
    }
    await page.locator('#workbench\\.parts\\.statusbar').getByRole('button', { name: /^AVFS vault host: ready/ }).waitFor();
    // The agent's third command needs approval: it pops up as a toast (the window runs the installed
    // extension, with no smoke-test driver to suppress toasts), the Notification Center closed.
    const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: /Agent wants to run .* in vault demo: / });
    await toast.waitFor({ timeout: 120_000 });
    assert.equal(await page.locator('.notifications-center').isVisible(), false, 'the Notification Center was opened');
    const text = (await toast.textContent()) ?? '';
    assert.match(text, /Agent wants to run `python3 -c .*getsockname.*` in vault demo: reaches the network and runs code the policy does not read\./);
    await toast.hover();
    await page.screenshot({ path: join(SCREENSHOTS, 'approval-toast.png') });
    // A person answers in the toast itself.
    await toast.getByRole('button', { name: 'Approve Once', exact: true }).click();
    await waitForLine(() => output, /\[agent\] {3}completed \(exit 0, approved by vscode client/);
    await waitForLine(() => output, /\[agent\] done:/);
    // The runs are in the Executions view (the AVFS tab of the panel): every command the agent ran.
    await page.locator('#workbench\\.parts\\.panel').getByRole('tab', { name: /AVFS/ }).first().click();
    // The agent says how many commands it runs, and each as "[agent] <why>: <its first line>".
    const count = Number(/\[agent\] pid \d+: .* then it runs (\d+) commands/.exec(output)?.[1]);
    assert.ok(count >= 4, `the agent said how many commands it runs:\n${output}`);
    const commands = await executionsCommands(page, count);
    assert.equal(commands.length, count, JSON.stringify(commands));
    for (const c of commands) {
      const first = c.split('\n')[0]!;
      assert.ok(output.split('\n').some((line) => line.startsWith('[agent] ') && line.endsWith(`: ${first}${c.includes('\n') ? ' …' : ''}`)), `the agent ran \`${first}\`:\n${output}`);
    }

    // A run in flight survives the reload of the window that started the host: the reload ends
    // that window's extension host (its connection to the host goes), the host and the agent's run
    // stay, and the reloaded window connects to the same host.
    const home = join(t.dir, 'state', 'home');
    const status = () => cliJson<{ pid: number; clients: { name: string; kind: string }[] }>(home, 'host', 'status');
    const windows = async () => (await status()).clients.filter((c) => c.kind === 'vscode').map((c) => c.name);
    const [first, ...others] = await windows();
    assert.ok(first && others.length === 0, `one window is connected: ${JSON.stringify(await status())}`);
    const hostPid = (await status()).pid;
    // The command waits for a file the test writes only once the window that started the host is gone.
    const run = cli(home, '--json', '--vault', 'demo', 'proxy', 'exec', '--shell', 'while [ ! -e go ]; do sleep 0.2; done; echo survived > reloaded.txt');
    for (const end = Date.now() + 30_000; (await cliJson<{ running_execs: number }>(home, 'host', 'status')).running_execs === 0; await new Promise((r) => setTimeout(r, 250))) {
      if (Date.now() > end) assert.fail(`the run did not start: ${JSON.stringify(await status())}`);
    }
    await page.reload();
    for (const end = Date.now() + 60_000; (await windows()).includes(first); await new Promise((r) => setTimeout(r, 250))) {
      if (Date.now() > end) assert.fail(`the reloaded window's old extension host is still connected: ${JSON.stringify(await status())}`);
    }
    await page.locator('#workbench\\.parts\\.statusbar').getByRole('button', { name: /^AVFS vault host: ready/ }).waitFor();
    assert.equal((await status()).pid, hostPid, 'the same host serves the reloaded window');
    await cliJson(home, '--vault', 'demo', 'write', '/go', '');
    const survived = await run;
    assert.equal(survived.code, 0, `the run through the reload: ${survived.stdout}${survived.stderr}`);
    const envelope = JSON.parse(survived.stdout) as { result: { state: string; exit_code: number | null } };
    assert.deepEqual([envelope.result.state, envelope.result.exit_code], ['completed', 0]);
    assert.equal((await cli(home, '--vault', 'demo', 'cat', '/reloaded.txt')).stdout, 'survived\n');
  } finally {
    await browser?.context.close();
    start.kill('SIGINT');
    const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 20_000))]);
    if (code === 'timeout') start.kill('SIGKILL');
    t.cleanup();
    assert.equal(code, 0, `npm start did not stop cleanly on Ctrl-C:\n${output}`);
    const agentPid = Number(/\[agent\] pid (\d+)/.exec(output)?.[1]);
    assert.ok(agentPid > 0, `the agent said its pid:\n${output}`);
    assert.equal(alive(agentPid), false, 'the agent stopped with npm start');
  }
});

async function waitForLine(output: () => string, line: RegExp, ms = 60_000): Promise<void> {
  for (const end = Date.now() + ms; !line.test(output()); await new Promise((r) => setTimeout(r, 250))) {
    if (Date.now() > end) assert.fail(`no line matches ${line} within ${ms / 1000} s:\n${output()}`);
  }
}

/** The commands the Executions webview lists (its rows' titles), once it lists at least `n`. */
async function executionsCommands(page: Awaited<ReturnType<typeof launchBrowser>>['page'], n: number, ms = 60_000): Promise<string[]> {
  for (const end = Date.now() + ms; ; await page.waitForTimeout(500)) {
    for (const frame of page.frames()) {
      const cells = frame.locator('#avfs-executions tr.run td.command');
      const titles = await cells.evaluateAll((all) => all.map((e) => e.getAttribute('title') ?? '')).catch(() => [] as string[]);
      if (titles.length >= n) return titles;
    }
    if (Date.now() > end) assert.fail(`the Executions view did not list ${n} runs within ${ms / 1000} s`);
  }
}

/** The checkout's CLI on the demo home, to its end. */
function cli(home: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'dist', 'avfs.js'), ...args], { env: { ...process.env, AVFS_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `avfs --json …` on the demo home, which must succeed: its one JSON document. */
async function cliJson<T>(home: string, ...args: string[]): Promise<T> {
  const r = await cli(home, '--json', ...args);
  assert.equal(r.code, 0, `avfs ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}
