// The Vaults view in the AVFS activity-bar container. It lists nothing until the extension talks to
// the vault host; while it is empty, VS Code shows the welcome content contributed in package.json.
import * as vscode from 'vscode';

export const VAULTS_VIEW = 'avfs.vaults';

class VaultTreeProvider implements vscode.TreeDataProvider<vscode.TreeItem> {
  getTreeItem(item: vscode.TreeItem): vscode.TreeItem {
    return item;
  }

  getChildren(): vscode.TreeItem[] {
    return [];
  }
}

export function registerVaultTree(context: vscode.ExtensionContext): void {
  const view = vscode.window.createTreeView(VAULTS_VIEW, { treeDataProvider: new VaultTreeProvider() });
  context.subscriptions.push(view);
}
