// The `extensionTestsPath` entry: VS Code loads this file in its extension host and calls run(); the
// tests' exit code is 0 when the promise resolves and 1 when it rejects. Mocha runs the bundled
// *.test.js files beside it (scripts/build.mjs buildVscodeTests) and reports each test on stdout.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { UI_DRIVER_ENV } from './ui';

export async function run(): Promise<void> {
  // In the extension host console.log reaches only the browser's console (code-server) or the
  // developer tools (desktop); stdout is what the runners relay to their own stdout.
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => process.stdout.write(`${format(...args)}\n`);
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: 60_000,
    // Under the code-server harness every test can run, so a skipped one is a failure there.
    forbidPending: Boolean(process.env[UI_DRIVER_ENV]),
    forbidOnly: Boolean(process.env.CI),
    ...(process.env.AVFS_VSCODE_GREP ? { grep: process.env.AVFS_VSCODE_GREP } : {}),
  });
  const files = readdirSync(__dirname).filter((f) => f.endsWith('.test.js')).sort();
  for (const file of files) mocha.addFile(join(__dirname, file));
  const ui = vscode.env.uiKind === vscode.UIKind.Web ? 'web' : 'desktop';
  process.stdout.write(`VS Code ${vscode.version} (${ui}), extension host on Node ${process.version}: ${files.join(', ')}\n`);
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} VS Code test${failures === 1 ? '' : 's'} failed`);
}
