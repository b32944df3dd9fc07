// Starts code-server (a real VS Code served to a browser) bound to 127.0.0.1, in its own process
// group, and builds workbench URLs that load an extension in development mode. Used by the VS Code
// test runner (scripts/vscode/test.mjs) and meant for `npm start` as well.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { codeServerStateEnv, ensureCodeServer } from './install.mjs';

/**
 * @typedef {object} CodeServer
 * @property {number} port
 * @property {string} url                 http://127.0.0.1:PORT/
 * @property {number} pid                 the process group's id
 * @property {(opts: WorkbenchOptions) => string} workbenchUrl
 * @property {Promise<{ code: number | null, signal: string | null }>} exited   settles when the server exits by itself or is stopped
 * @property {() => Promise<void>} stop   stops the whole process group (idempotent)
 * @property {() => void} killNow          synchronous last resort (SIGKILL to the group), for process 'exit' handlers
 *
 * @typedef {object} WorkbenchOptions
 * @property {string} [folder]                     absolute path of the folder the window opens
 * @property {string} [workspace]                  absolute path of a .code-workspace file the window opens (instead of a folder)
 * @property {string} [extensionDevelopmentPath]   absolute path of an extension to load in development mode
 * @property {string} [extensionTestsPath]         absolute path of a tests entry (exports run()) to run in the extension host
 */

const GROUP_LEADER = join(dirname(fileURLToPath(import.meta.url)), 'groupLeader.mjs');

/**
 * User settings for a window that shows the product and nothing else, and reaches for no network:
 * no welcome page or tips, no chat side bar, no update or extension-gallery checks, no telemetry.
 */
export const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
  'workbench.enableExperiments': false,
  'chat.disableAIFeatures': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
};

/**
 * @param {object} opts
 * @param {string} opts.stateDir   code-server's user data, extensions and own config live here (use a fresh one for tests)
 * @param {number} [opts.port]     0 (default): a free port chosen by the system
 * @param {Record<string, unknown>} [opts.settings]   written as the user's settings.json at each start
 * @param {Record<string, string>} [opts.env]   added to code-server's environment, which its extension host inherits
 * @param {(line: string) => void} [opts.onOutput]   every line code-server prints (stdout and stderr)
 * @param {(line: string) => void} [opts.log]
 * @param {number} [opts.startTimeoutMs]
 * @param {boolean} [opts.smokeTestDriver]   true (default): the workbench takes a development extension and a tests entry from the URL,
 *   and shows no toasts (notifications go only to the Notification Center); false: a window as a person has it, toasts and all,
 *   running the extensions installed in `<stateDir>/extensions` (see installed.mjs)
 * @returns {Promise<CodeServer>}
 */
export async function startCodeServer(opts) {
  const { node, entry } = await ensureCodeServer(opts.log ? { log: opts.log } : {});
  const userDataDir = join(opts.stateDir, 'user-data');
  const extensionsDir = join(opts.stateDir, 'extensions');
  mkdirSync(userDataDir, { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  if (opts.settings) {
    mkdirSync(join(userDataDir, 'User'), { recursive: true });
    writeFileSync(join(userDataDir, 'User', 'settings.json'), `${JSON.stringify(opts.settings, null, 2)}\n`);
  }
  const args = [
    entry,
    '--bind-addr', `127.0.0.1:${opts.port ?? 0}`,
    '--auth', 'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--ignore-last-opened',
    // Without the smoke-test driver the workbench ignores the URL's payload (development extension,
    // tests entry) and never reports the tests' exit code; with it, it shows no toasts.
    ...(opts.smokeTestDriver === false ? [] : ['--vscode-option', 'enable-smoke-test-driver']),
    '--user-data-dir', userDataDir,
    '--extensions-dir', extensionsDir,
  ];
  // code-server runs in a new process group (detached), so stop() reaches the extension host and
  // file watchers too: they outlive a SIGTERM sent to code-server alone. The group's leader
  // (groupLeader.mjs) holds a pipe from this process and stops the group when this process dies
  // without doing so (even by SIGKILL), so nothing outlives its owner.
  const child = spawn(process.execPath, [GROUP_LEADER, node, ...args], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...codeServerStateEnv(join(opts.stateDir, 'code-server')), ...opts.env },
  });
  child.stdin.on('error', () => {});
  const pid = /** @type {number} */ (child.pid);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  let stopping;
  const alive = () => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const killNow = () => {
    if (alive()) process.kill(-pid, 'SIGKILL');
  };
  // SIGTERM to the whole group, up to 5 s for it to exit, then SIGKILL to what remains.
  const stop = () =>
    (stopping ??= (async () => {
      if (!alive()) return;
      process.kill(-pid, 'SIGTERM');
      for (let waited = 0; waited < 5000 && alive(); waited += 50) await new Promise((r) => setTimeout(r, 50));
      killNow();
      for (let waited = 0; waited < 2000 && alive(); waited += 50) await new Promise((r) => setTimeout(r, 50));
    })());

  const listening = new Promise((resolve, reject) => {
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream }).on('line', (line) => {
        opts.onOutput?.(line);
        const m = / HTTP server listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(line);
        if (m) resolve(Number(m[1]));
      });
    }
    child.on('error', reject);
    exited.then(({ code, signal }) => reject(new Error(`code-server exited (${signal ?? `code ${code}`}) before it listened`)));
    setTimeout(() => reject(new Error('code-server did not listen within the start timeout')), opts.startTimeoutMs ?? 60_000).unref();
  });
  let port;
  try {
    port = await listening;
  } catch (e) {
    await stop();
    throw e;
  }
  const url = `http://127.0.0.1:${port}/`;
  const remote = (path) => `vscode-remote://127.0.0.1:${port}${path}`;
  return {
    port,
    url,
    pid,
    exited,
    stop,
    killNow,
    workbenchUrl({ folder, workspace, extensionDevelopmentPath, extensionTestsPath }) {
      const payload = [];
      if (extensionDevelopmentPath) {
        payload.push(['extensionDevelopmentPath', remote(extensionDevelopmentPath)]);
        // The Node extension host (not the browser's web worker host) runs the extension.
        payload.push(['extensionDevelopmentKind', 'workspace']);
      }
      if (extensionTestsPath) payload.push(['extensionTestsPath', remote(extensionTestsPath)]);
      const query = new URLSearchParams();
      if (folder) query.set('folder', folder);
      if (workspace) query.set('workspace', workspace);
      if (payload.length) query.set('payload', JSON.stringify(payload));
      return `${url}?${query}`;
    },
  };
}
