// The module VS Code loads first (dist/extension.js): a few lines, no zod, no protocol. VS Code
// counts as the extension's activation time what loading this module and calling activate() take
// ("Developer: Show Running Extensions": code loading + activate call); the rest of the extension
// (extension.ts and all it imports, dist/extension-core.js, mostly zod and the protocol's schemas)
// is loaded once activate() has returned, and the promise it returned resolves with what the core's
// activate() returns. Until then VS Code holds back whatever waits for the extension (a command,
// an avfs: file, the view's tree), so nothing is asked of a half-started extension.
import * as vscode from 'vscode';
import type * as Core from './extension';

let core: typeof Core | undefined;

export function activate(context: vscode.ExtensionContext): Promise<Core.AvfsTestApi> {
  const called = performance.now();
  let callMs = 0;
  const loaded = new Promise<Core.AvfsTestApi>((resolve, reject) => {
    setImmediate(() => {
      const loading = performance.now();
      try {
        // scripts/build.mjs makes this require of dist/extension-core.js (the core bundle).
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded after activate() returns, see above
        core = require('./extension') as typeof Core;
      } catch (e) {
        // VS Code does not tell the person when an extension fails to activate, so we do.
        void vscode.window.showErrorMessage(`AVFS could not start: ${e instanceof Error ? e.message : String(e)}`);
        reject(e);
        return;
      }
      try {
        // The core's activate() says itself when it fails.
        resolve(core.activate(context, { calledAt: called, callMs, coreLoadMs: performance.now() - loading }));
      } catch (e) {
        reject(e);
      }
    });
  });
  callMs = performance.now() - called;
  return loaded;
}

export async function deactivate(): Promise<void> {
  await core?.deactivate();
}
