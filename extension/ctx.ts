// The extension's one stateful object: it owns the log, the host client, the file systems, the
// Vaults view and the status bar, wires host events to them, and disposes all of it. Commands
// receive it (commands.ts); nothing else keeps state.
import { join } from 'node:path';
import * as vscode from 'vscode';
import { ApprovalCenter } from './approvals/approvals';
import { HostClient } from './client/hostClient';
import { describeState, type HostState } from './client/hostState';
import { config, SETTINGS } from './config';
import { errorMessage } from './errors';
import { plainText } from './format';
import { impactOf } from './events';
import { ExecutionsView } from './executions/executionsView';
import { CheckpointFileSystem } from './fs/checkpointFs';
import { VaultFileSystem } from './fs/vaultFs';
import { HostStatusBar } from './statusBar';
import { CHECKPOINT_SCHEME, VAULT_SCHEME } from './uris';
import { VaultTree } from './views/vaultTree';

/** Context key: the host client's state (idle, starting, ready, restarting, failed, stopped). */
export const HOST_STATE_CONTEXT = 'avfs.hostState';
/** Context key: this window has approval requests waiting for an answer. */
export const PENDING_APPROVALS_CONTEXT = 'avfs.hasPendingApprovals';

export class Ctx implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  readonly host: HostClient;
  readonly tree: VaultTree;
  readonly vaultFs: VaultFileSystem;
  readonly approvals: ApprovalCenter;
  readonly executions: ExecutionsView;
  private readonly statusBar: HostStatusBar;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(readonly extension: vscode.ExtensionContext) {
    // A LogOutputChannel: levelled lines, and the user can change the level with "Set Log Level".
    this.log = vscode.window.createOutputChannel('AVFS', { log: true });
    const clientName = `VS Code (${vscode.env.appName}, pid ${process.pid})`;
    // This window answers approvals: the host asks it about every run that needs one.
    this.approvals = new ApprovalCenter({ by: clientName, log: this.log });
    this.host = new HostClient({
      settings: () => config.host(),
      hostScript: join(extension.extensionPath, 'dist', 'avfs.js'),
      clientName,
      log: this.log,
      mayStart: () => (vscode.workspace.isTrusted ? undefined : 'Restricted Mode: AVFS starts no vault host until the workspace is trusted.'),
      onApprovalRequest: this.approvals.ask,
    });
    this.approvals.attach(this.host);
    this.vaultFs = new VaultFileSystem(this.host);
    this.tree = new VaultTree(this.host, this.log, this.approvals);
    this.statusBar = new HostStatusBar();
    this.executions = new ExecutionsView(this);
    this.disposables.push(
      this.executions,
      // Approved here: the person then watches it run (the run's id is the request's).
      this.approvals.onDidAnswer(({ id, answer }) => answer !== 'deny' && void this.executions.reveal(id)),
      this.log,
      this.statusBar,
      this.approvals,
      this.approvals.onDidChange(() => {
        const count = this.approvals.pending().length;
        this.statusBar.setPending(count);
        // The AVFS icon in the activity bar counts them too, whether or not the view is open.
        this.tree.view.badge = count > 0 ? { value: count, tooltip: count === 1 ? '1 approval request waiting' : `${count} approval requests waiting` } : undefined;
        // The palette offers Approve Once / Always Allow / Deny only while something waits.
        void vscode.commands.executeCommand('setContext', PENDING_APPROVALS_CONTEXT, count > 0);
        this.tree.refresh();
      }),
      this.tree,
      this.vaultFs,
      vscode.workspace.registerFileSystemProvider(VAULT_SCHEME, this.vaultFs, { isCaseSensitive: true }),
      vscode.workspace.registerFileSystemProvider(CHECKPOINT_SCHEME, new CheckpointFileSystem(this.host), { isCaseSensitive: true, isReadonly: true }),
      this.host.onDidChangeState((state) => this.onHostState(state)),
      this.host.onVaultChanged((event) => {
        const impact = impactOf(event);
        this.vaultFs.fire(impact);
        this.tree.refresh({ vault: impact.vault, files: impact.files.length > 0 || impact.wholeTree, checkpoints: impact.checkpoints });
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // A host that has not started yet will read the new settings when it does.
        if (!config.affectsHost(e) || this.host.state.name === 'idle') return;
        this.log.info(`${SETTINGS.nodePath} or ${SETTINGS.home} changed: restarting the vault host`);
        void this.host.restart();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.onHostState(this.host.state);
        this.tree.refresh();
      }),
    );
    this.onHostState(this.host.state);
  }

  /**
   * Runs a command's work; a failure becomes an error notification with the host's message (and a
   * way to the logs), never an unhandled rejection.
   */
  async run<T>(what: string, work: () => Promise<T>): Promise<T | undefined> {
    try {
      return await work();
    } catch (e) {
      const message = errorMessage(e);
      this.log.error(`${what}: ${message}`);
      // The host's message can quote a command or a path: shown as plain text, never as a link.
      void vscode.window.showErrorMessage(`${what}: ${plainText(message)}`, 'Open Logs').then((pick) => pick && this.log.show());
      return undefined;
    }
  }

  async dispose(): Promise<void> {
    for (const d of this.disposables.splice(0).reverse()) d.dispose();
    await this.host.dispose();
  }

  private previous: HostState = { name: 'idle' };

  private onHostState(state: HostState): void {
    const trusted = vscode.workspace.isTrusted;
    this.statusBar.update(state, trusted);
    void vscode.commands.executeCommand('setContext', HOST_STATE_CONTEXT, trusted ? state.name : 'restricted');
    const before = this.previous;
    this.previous = state;
    if (state.name === 'ready' || state.name === 'failed' || state.name === 'restarting') this.tree.refresh();
    if (state.name === 'restarting' && before.name === 'ready') {
      // The reasons quote the host's own output: plain text, never a link.
      void this.notify(`The AVFS vault host exited (${plainText(state.reason)}); restarting it.`, 'Open Logs', 'Restart Host');
    } else if (state.name === 'failed' && before.name !== 'failed') {
      if (state.fix) void this.notify(`${plainText(state.reason)} ${state.fix}`, 'Open Settings', 'Open Logs');
      else void this.notify(plainText(describeState(state)), 'Open Logs', 'Restart Host');
    }
  }

  /** An error notification whose buttons lead somewhere useful. */
  private async notify(message: string, ...actions: ('Open Logs' | 'Restart Host' | 'Open Settings')[]): Promise<void> {
    const pick = await vscode.window.showErrorMessage(message, ...actions);
    if (pick === 'Open Logs') this.log.show();
    else if (pick === 'Restart Host') void this.host.restart();
    else if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', SETTINGS.nodePath);
  }
}
