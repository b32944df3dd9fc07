// The extension's commands: one factory per command id, each given only what it needs.
import * as vscode from 'vscode';

export interface CommandDeps {
  log: vscode.LogOutputChannel;
}

// Every id here is contributed in package.json (commands, category "AVFS") and nothing else is:
// a test inside VS Code checks the two lists are equal.
const factories: Record<string, (deps: CommandDeps) => () => unknown> = {
  'avfs.showLogs': ({ log }) => () => log.show(),
};

export function registerCommands(context: vscode.ExtensionContext, deps: CommandDeps): void {
  for (const [id, factory] of Object.entries(factories)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, factory(deps)));
  }
}
