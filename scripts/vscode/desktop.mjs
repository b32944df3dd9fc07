// Runs the same VS Code tests (test/vscode) in desktop VS Code (Electron) through @vscode/test-electron.
//
//   npm run test:desktop [-- --grep <text>]      (on Linux without a display: xvfb-run -a npm run test:desktop)
//
// @vscode/test-electron downloads VS Code (stable, or $AVFS_VSCODE_VERSION) from
// update.code.visualstudio.com into the cache (.vscode-test/) the first time, so this needs a machine
// that can reach it; CI and machines with only the npm registry use `npm run test:vscode`
// (code-server) instead. Nothing is downloaded at install time.
//
// Here there is no Playwright driver for the window, so the tests that look at the UI through it
// (requireUi in test/vscode/ui.ts) are reported as pending; everything else runs as under code-server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runTests, TestRunFailedError } from '@vscode/test-electron';
import { buildProduct, buildVscodeTests } from '../build.mjs';
import { cacheRoot } from './install.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values: opt } = parseArgs({ options: { grep: { type: 'string' } } });
const say = (line) => process.stdout.write(`[vscode-desktop] ${line}\n`);

say('building the extension and its tests');
await buildProduct();
const extensionTestsPath = await buildVscodeTests();
const workspace = mkdtempSync(join(tmpdir(), 'avfs-vscode-desktop-'));
let code;
try {
  code = await runTests({
    version: process.env.AVFS_VSCODE_VERSION ?? 'stable',
    cachePath: cacheRoot(),
    extensionDevelopmentPath: root,
    extensionTestsPath,
    // A fresh avfs home, as under code-server: the extension's host and the tests' CLI calls share it.
    extensionTestsEnv: { AVFS_HOME: join(workspace, '.avfs-home'), ...(opt.grep ? { AVFS_VSCODE_GREP: opt.grep } : {}) },
    launchArgs: [workspace, '--disable-extensions'],
  });
} catch (e) {
  if (e instanceof TestRunFailedError) {
    code = e.code ?? 1;
  } else {
    say(`could not run desktop VS Code: ${e instanceof Error ? e.message : String(e)}`);
    say('this needs a download from update.code.visualstudio.com; without it, use npm run test:vscode (code-server)');
    code = 1;
  }
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
say(`exit code ${code}`);
process.exit(code);
