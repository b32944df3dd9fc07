// Runs the extension's tests inside a real VS Code: code-server (VS Code 1.139 in a browser) with the
// extension in development mode, opened by headless Chromium through playwright-core. Offline.
//
//   npm run test:vscode [-- --grep <text>] [--timeout <s>] [--keep] [--screenshots <dir>] [--verbose]
//
// The tests (test/vscode/*.test.ts, mocha) run in VS Code's extension host; their report, written to
// the extension host's stdout, is relayed here, and this process exits with their exit code. When a
// test needs to act on or look at the UI, it asks this runner to run a Playwright step against the
// same window (test/vscode/ui.ts → scripts/vscode/uiDriver.mjs → test/vscode/uiSteps.ts).
// Everything it starts (code-server's process group, Chromium) is stopped at the end, whatever happens.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildProduct, buildVscodeTests } from '../build.mjs';
import { launchBrowser } from './browser.mjs';
import { QUIET_SETTINGS, startCodeServer } from './codeServer.mjs';
import { cacheRoot, ensureCodeServer } from './install.mjs';
import { peakMemory } from './proc.mjs';
import { startUiDriver } from './uiDriver.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: opt } = parseArgs({
  options: {
    grep: { type: 'string' },
    timeout: { type: 'string', default: process.env.AVFS_VSCODE_TIMEOUT ?? '900' },
    keep: { type: 'boolean', default: false },
    screenshots: { type: 'string', default: join(cacheRoot(), 'screenshots') },
    verbose: { type: 'boolean', default: false },
  },
});
const say = (line) => process.stdout.write(`[vscode-test] ${line}\n`);
const started = Date.now();
const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
const memory = peakMemory(process.pid);

const runDir = mkdtempSync(join(tmpdir(), 'avfs-vscode-'));
const screenshotDir = resolve(opt.screenshots);
const cleanups = [];
let server;
let page;

async function main() {
  say('building the extension and its tests');
  await buildProduct();
  const testsEntry = await buildVscodeTests();

  const { uiSteps } = await import('../../test/vscode/uiSteps.ts');
  const driver = await startUiDriver({
    steps: uiSteps,
    context: () => ({
      page,
      async screenshot(name) {
        mkdirSync(screenshotDir, { recursive: true });
        const path = join(screenshotDir, `${name}.png`);
        await page.screenshot({ path });
        say(`screenshot: ${path}`);
        return path;
      },
    }),
    log: (line) => opt.verbose && say(line),
  });
  cleanups.push(() => driver.close());

  const folder = join(runDir, 'workspace');
  mkdirSync(folder, { recursive: true });
  // A multi-root workspace (of one folder) from the start: adding a folder to it (Add Vault to
  // Workspace) then keeps the extension host running, where turning a single-folder window into a
  // workspace would restart it under the tests.
  const workspace = join(runDir, 'tests.code-workspace');
  writeFileSync(workspace, `${JSON.stringify({ folders: [{ path: folder }] }, null, 2)}\n`);
  // The window's vault host outlives code-server (it is nobody's child: docs/extension.md); once
  // code-server is stopped (clean-ups run in reverse), the run's host is stopped too.
  cleanups.push(async () => {
    const avfsHome = join(runDir, 'avfs-home');
    spawnSync(process.execPath, [join(root, 'dist', 'avfs.js'), 'host', 'stop'], { env: { ...process.env, AVFS_HOME: avfsHome }, stdio: 'ignore', timeout: 30_000 });
    for (let i = 0; i < 200 && existsSync(join(avfsHome, 'host.json')); i++) await new Promise((r) => setTimeout(r, 50));
  });
  server = await startCodeServer({
    stateDir: join(runDir, 'code-server'),
    // A fixed theme, so screenshots look the same on every machine.
    settings: { ...QUIET_SETTINGS, 'workbench.colorTheme': 'Default Dark Modern' },
    env: {
      AVFS_UI_DRIVER: driver.url,
      // The vaults of this run: the extension's host and the tests' CLI calls share this home.
      AVFS_HOME: join(runDir, 'avfs-home'),
      ...(opt.grep ? { AVFS_VSCODE_GREP: opt.grep } : {}),
      // VS Code's device id goes to $XDG_CACHE_HOME/Microsoft: a test run leaves nothing in the home.
      XDG_CACHE_HOME: join(runDir, 'xdg-cache'),
    },
    onOutput: relay,
  });
  cleanups.push(() => server.stop());
  say(`code-server ${server.url} (process group ${server.pid}) after ${seconds()} s`);

  const browser = await launchBrowser({ userDataDir: join(runDir, 'chromium') });
  cleanups.push(() => browser.context.close());
  page = browser.page;
  // Below the UI driver's 30 s step timeout, so a step that waits in vain fails with Playwright's
  // own message (which names the locator) rather than the driver's.
  page.setDefaultTimeout(20_000);
  if (opt.verbose) page.on('console', (m) => say(`browser console ${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => say(`browser page error: ${e.message}`));

  // The workbench calls window.codeAutomationExit(code) when the tests entry's run() settles.
  const testsDone = new Promise((resolve) => page.exposeFunction('codeAutomationExit', (code) => resolve(Number(code))));
  await page.goto(server.workbenchUrl({ workspace, extensionDevelopmentPath: root, extensionTestsPath: testsEntry }));
  say(`workbench loaded after ${seconds()} s; running the tests in the extension host`);

  // The first to happen decides; the others are ignored (the clean-up closes Chromium and stops
  // code-server, which would otherwise look like failures).
  return Promise.race([
    testsDone.then((code) => ({ code })),
    server.exited.then(({ code, signal }) => ({ failure: `code-server exited (${signal ?? `code ${code}`}) before the tests finished` })),
    new Promise((resolve) => browser.context.on('close', resolve)).then(() => ({ failure: 'Chromium closed before the tests finished' })),
  ]);
}

async function fail(why) {
  if (interrupted) return interrupted.code;
  say(`FAILED: ${why}`);
  if (page && !page.isClosed()) {
    try {
      mkdirSync(screenshotDir, { recursive: true });
      const path = join(screenshotDir, 'failure.png');
      await page.screenshot({ path, timeout: 5000 });
      say(`screenshot of the window at the failure: ${path}`);
    } catch {
      // The page is gone; nothing to show.
    }
  }
  return 1;
}

// code-server logs each chunk the extension host writes as one entry:
//   [HH:MM:SS] [127.0.0.1][<session>][ExtensionHostConnection] <pid> <chunk>\n   (stdout)
//   [HH:MM:SS] [127.0.0.1][<session>][ExtensionHostConnection] <pid><stderr> <chunk>\n
// The chunk's own lines follow unprefixed, and the entry ends with one newline more than the chunk
// had. relay() prints the chunks as the extension host wrote them (stderr to stderr) and hides
// code-server's own log (unless --verbose): blank lines are held back, to drop that extra newline.
const EXT_HOST_ENTRY = /^\[\d\d:\d\d:\d\d\] \[[^\]]*\]\[[^\]]*\]\[ExtensionHostConnection\] <\d+>(<stderr>)? ?(.*)$/;
const LOG_ENTRY = /^\[(\d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT[\d:.]+Z)\] /;
// Entries code-server itself writes in the extension host's format (the exit code is not the tests').
const EXT_HOST_LIFECYCLE = /^(Launched Extension Host Process\.|Extension Host Process exited with code: .*)$/;
let chunk; // the stream the current chunk goes to, while its lines arrive
let heldBlanks = 0;
function relay(line) {
  const entry = EXT_HOST_ENTRY.exec(line);
  if (entry || LOG_ENTRY.test(line)) flushRelay();
  if (entry && !EXT_HOST_LIFECYCLE.test(entry[2])) {
    chunk = entry[1] ? process.stderr : process.stdout;
    relayChunkLine(entry[2]);
  } else if (chunk && !entry && !LOG_ENTRY.test(line)) {
    relayChunkLine(line);
  } else {
    chunk = undefined;
    if (opt.verbose) say(`code-server: ${line}`);
  }
}
function relayChunkLine(text) {
  if (text === '') return void heldBlanks++;
  chunk.write('\n'.repeat(heldBlanks) + `${text}\n`);
  heldBlanks = 0;
}
function flushRelay() {
  chunk?.write('\n'.repeat(Math.max(0, heldBlanks - 1)));
  heldBlanks = 0;
}

async function cleanup() {
  for (const fn of cleanups.reverse()) {
    try {
      const t = Date.now();
      await fn();
      if (opt.verbose) say(`clean-up step done in ${Date.now() - t} ms`);
    } catch (e) {
      say(`clean-up: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  cleanups.length = 0;
  if (opt.keep) return say(`kept ${runDir}`);
  // A mount left up under the run's avfs home is detached first; the folder is not removed through a
  // mount. A run whose host was killed no longer leaves one (its guard releases it: docs/exec.md),
  // but a host stopped by force at the end keeps the kept mounts it would have unmounted.
  const mounts = readFileSync('/proc/self/mounts', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[1]?.replace(/\\040/g, ' '))
    .filter((mp) => mp && mp.startsWith(runDir + '/'));
  for (const mp of mounts.reverse()) {
    say(`clean-up: a mount left up at ${mp}: detached`);
    spawnSync('fusermount', ['-uz', mp], { stdio: 'ignore' });
  }
  // And the servers of such mounts (named by their mountpoint in the run's folder): none outlives the run.
  if (mounts.length > 0) spawnSync('pkill', ['-f', '--', `mount .* ${runDir}/`], { stdio: 'ignore' });
  try {
    rmSync(runDir, { recursive: true, force: true });
  } catch (e) {
    say(`clean-up: ${runDir} not removed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

// Interrupted: stop everything, then exit as the signal would have.
let interrupted;
for (const [signal, number] of [['SIGHUP', 1], ['SIGINT', 2], ['SIGTERM', 15]]) {
  process.once(signal, () => {
    interrupted = { code: 128 + number };
    say(`${signal}: stopping code-server and Chromium`);
    void cleanup().finally(() => process.exit(interrupted.code));
  });
}
// Last resort if the runner dies without its clean-up running (an uncaught error in a callback).
process.on('exit', () => server?.killNow());

let code;
try {
  // Installing is not part of a run: the timeout starts once code-server is in the cache.
  await ensureCodeServer({ log: say });
  const timeout = new Promise((resolve) => setTimeout(resolve, Number(opt.timeout) * 1000).unref());
  const outcome = await Promise.race([main(), timeout.then(() => ({ failure: `timed out after ${opt.timeout} s` }))]);
  flushRelay();
  if (!('failure' in outcome)) say(`the tests finished with exit code ${outcome.code} after ${seconds()} s; stopping code-server and Chromium`);
  code = 'failure' in outcome ? await fail(outcome.failure) : outcome.code;
} catch (e) {
  code = await fail(e instanceof Error ? (e.stack ?? e.message) : String(e));
} finally {
  const peak = memory.stop();
  await cleanup();
  const gib = (n) => (n / 2 ** 30).toFixed(2);
  say(`exit code ${code}; ${seconds()} s wall; peak memory of the runner, code-server and Chromium: ` +
    `${gib(peak.pss)} GiB PSS (${gib(peak.rss)} GiB RSS, ${peak.processes} processes)`);
}
process.exit(code);
