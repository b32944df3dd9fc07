// The `extensionTestsPath` entry: VS Code loads this file in its extension host and calls run(); the
// tests' exit code is 0 when the promise resolves and 1 when it rejects. Mocha runs the bundled
// *.test.js files beside it (scripts/build.mjs buildVscodeTests) and reports each test on stdout.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { extension } from './helpers';
import { ui, UI_DRIVER_ENV } from './ui';

export async function run(): Promise<void> {
  // In the extension host console.log reaches only the browser's console (code-server) or the
  // developer tools (desktop); stdout is what the runners relay to their own stdout.
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => process.stdout.write(`${format(...args)}\n`);
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: 60_000,
    // One more try for a test that fails: on a loaded 2-core machine a wait for a live update was
    // seen to run out once in a whole run (each retry starts from a fresh vault); a behaviour that
    // does not work fails both tries.
    retries: 1,
    // Under the code-server harness every test can run, so a skipped one is a failure there.
    forbidPending: Boolean(process.env[UI_DRIVER_ENV]),
    forbidOnly: Boolean(process.env.CI),
    ...(process.env.AVFS_VSCODE_GREP ? { grep: process.env.AVFS_VSCODE_GREP } : {}),
  });
  // extension.test.js first: it checks activation and the welcome view of a fresh avfs home, before
  // any other test has activated the extension or made a vault.
  const first = (f: string) => (f === 'extension.test.js' ? 0 : 1);
  const files = readdirSync(__dirname)
    .filter((f) => f.endsWith('.test.js'))
    .sort((a, b) => first(a) - first(b) || a.localeCompare(b));
  for (const file of files) mocha.addFile(join(__dirname, file));
  // A failed test leaves what it saw: a screenshot of the window and the end of the AVFS log. So
  // does a failed try that mocha runs again (it reports only the last try's error, and a second
  // try failing on what the first left behind would hide why the first failed): its error too.
  let retried: { test: Mocha.Runnable; err: unknown } | undefined;
  mocha.suite.afterEach(async function () {
    const test = this.currentTest;
    const retry = retried?.test === test ? retried : undefined;
    retried = undefined;
    if (!test || (test.state !== 'failed' && !retry)) return;
    const slug = test.fullTitle().replace(/[^A-Za-z0-9]+/g, '-').slice(0, 80);
    if (retry) process.stdout.write(`      a try failed, mocha runs it again: ${errorText(retry.err).replace(/\n/g, '\n        ')}\n`);
    if (process.env[UI_DRIVER_ENV]) await ui('screenshot', { name: `failed-${slug}${retry ? '-retried' : ''}` }).catch(() => undefined);
    process.stdout.write(`      the AVFS log at the failure:\n${logTail(40).replace(/^/gm, '        ')}\n`);
  });
  const kind = vscode.env.uiKind === vscode.UIKind.Web ? 'web' : 'desktop';
  process.stdout.write(`VS Code ${vscode.version} (${kind}), extension host on Node ${process.version}: ${files.join(', ')}\n`);
  const failures = await new Promise<number>((resolve) => {
    mocha.run(resolve).on(Mocha.Runner.constants.EVENT_TEST_RETRY, (test: Mocha.Runnable, err: unknown) => (retried = { test, err }));
  });
  if (failures > 0) throw new Error(`${failures} VS Code test${failures === 1 ? '' : 's'} failed`);
}

/** The last lines of the extension's AVFS log (VS Code keeps a LogOutputChannel in a file under the extension's log folder). */
function logTail(lines: number): string {
  const dir = extension().isActive ? extension().exports.logUri.fsPath : undefined;
  const file = dir && join(dir, 'AVFS.log');
  if (!file || !existsSync(file)) return `(no log file at ${file ?? 'the extension log folder'})`;
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

function errorText(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message).split('\n').slice(0, 6).join('\n') : String(err);
}
