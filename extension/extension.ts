// The extension's entry point: activate() wires the parts together; each part lives in its own module.
import * as vscode from 'vscode';
import { registerCommands } from './commands';
import { registerVaultTree } from './views/vaultTree';

export function activate(context: vscode.ExtensionContext): void {
  // A LogOutputChannel: levelled lines, and the user can change the level with "Set Log Level".
  const log = vscode.window.createOutputChannel('AVFS', { log: true });
  context.subscriptions.push(log);
  registerVaultTree(context);
  registerCommands(context, { log });
  const { version } = context.extension.packageJSON as { version: string };
  const ui = vscode.env.uiKind === vscode.UIKind.Web ? 'web' : 'desktop';
  log.info(`AVFS ${version} activated (VS Code ${vscode.version}, ${ui}, extension host on Node ${process.version})`);
}

// Everything is disposed through context.subscriptions.
export function deactivate(): void {}
