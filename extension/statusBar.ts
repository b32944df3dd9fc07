// The status bar item: the vault host's state at a glance, with Open Logs and Restart Host in its
// tooltip (as rust-analyzer's server status). A click opens the logs when something is wrong, and
// the Vaults view otherwise.
import * as vscode from 'vscode';
import { describeState, type HostState } from './client/hostState';

export class HostStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('avfs.host', vscode.StatusBarAlignment.Left, 0);

  constructor() {
    this.item.name = 'AVFS Vault Host';
  }

  private state: HostState = { name: 'idle' };
  private trusted = true;
  /** Approval requests waiting in this window (one is shown as a notification, the rest counted here). */
  private pending = 0;

  setPending(count: number): void {
    this.pending = count;
    this.update(this.state, this.trusted);
  }

  update(state: HostState, trusted: boolean): void {
    this.state = state;
    this.trusted = trusted;
    const item = this.item;
    const look = trusted ? LOOK[state.name] : { icon: 'shield', background: undefined };
    item.text = `$(${look.icon}) AVFS${this.pending > 0 ? ` $(bell-dot) ${this.pending}` : ''}`;
    item.backgroundColor = look.background ? new vscode.ThemeColor(look.background) : undefined;
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.isTrusted = { enabledCommands: ['avfs.showLogs', 'avfs.restartHost'] };
    tooltip.appendMarkdown(`**AVFS vault host**\n\n`);
    tooltip.appendText(trusted ? describeState(state) : 'Restricted Mode: no vault host runs until the workspace is trusted.');
    tooltip.appendMarkdown(`\n\n[$(output) Open Logs](command:avfs.showLogs "Show the AVFS log")`);
    if (trusted) tooltip.appendMarkdown(` · [$(debug-restart) Restart Host](command:avfs.restartHost "Stop and start the vault host")`);
    if (this.pending > 0) {
      tooltip.appendMarkdown(`\n\n$(bell-dot) `);
      tooltip.appendText(`${this.pending === 1 ? '1 approval request waits' : `${this.pending} approval requests wait`} for an answer (under Pending Approvals in the Vaults view).`);
    }
    item.tooltip = tooltip;
    const unhealthy = state.name === 'failed' || state.name === 'restarting';
    item.command = unhealthy ? 'avfs.showLogs' : 'workbench.view.extension.avfs';
    item.accessibilityInformation = { label: `AVFS vault host: ${state.name}${this.pending > 0 ? `, ${this.pending} approval requests waiting` : ''}` };
    if (state.name === 'stopped') item.hide();
    else item.show();
  }

  dispose(): void {
    this.item.dispose();
  }
}

const LOOK: Record<HostState['name'], { icon: string; background: string | undefined }> = {
  idle: { icon: 'database', background: undefined },
  starting: { icon: 'loading~spin', background: undefined },
  ready: { icon: 'database', background: undefined },
  restarting: { icon: 'sync~spin', background: 'statusBarItem.warningBackground' },
  failed: { icon: 'error', background: 'statusBarItem.errorBackground' },
  stopped: { icon: 'circle-slash', background: undefined },
};
