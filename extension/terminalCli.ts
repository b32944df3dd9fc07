// The `avfs` CLI in VS Code's integrated terminals: an agent (or a person) in a terminal of this
// window runs `avfs …` with nothing installed. The VSIX ships bin/avfs, which runs the CLI on the
// extension's own Node; its folder goes first on the terminals' PATH through the extension's
// environment variable collection, with AVFS_HOME when avfs.home is set, so the terminals' CLI sees
// the vaults the view shows. Only in a trusted workspace (Restricted Mode runs none of AVFS).
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import * as vscode from 'vscode';
import { config, SETTINGS } from './config';

export function exposeCliToTerminals(context: vscode.ExtensionContext): vscode.Disposable {
  const bin = join(context.extensionPath, 'bin');
  const collection = context.environmentVariableCollection;
  const apply = () => {
    collection.clear();
    // A checkout has no bin/avfs (`npm run package` writes it into the VSIX).
    if (!vscode.workspace.isTrusted || !existsSync(join(bin, 'avfs'))) return;
    collection.description = 'Puts the `avfs` CLI (on the AVFS extension\'s own Node) on PATH, with the avfs home the AVFS view shows.';
    collection.prepend('PATH', `${bin}${delimiter}`);
    const { home } = config.host();
    if (home) collection.replace('AVFS_HOME', home);
  };
  apply();
  return vscode.Disposable.from(
    vscode.workspace.onDidGrantWorkspaceTrust(apply),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(SETTINGS.home)) apply();
    }),
  );
}
