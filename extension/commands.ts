// The extension's commands: one factory per command id, given the context. A command called from
// the Vaults view gets the node it was called on; from the Command Palette it asks for the vault
// (and checkpoint) instead; from an editor or the Explorer it gets the file's URI.
import * as vscode from 'vscode';
import type { ApprovalAnswerKind } from '../host/protocol/exec';
import type { QuotaKey } from '../host/protocol/vault';
import { applyFactories } from './apply/applyCommands';
import { approvalRow } from './approvals/model';
import type { Ctx } from './ctx';
import { HostCallError } from './errors';
import { toCheckpointUri } from './fs/checkpointFs';
import { toUri } from './fs/vaultFs';
import { formatBytes, plural } from './format';
import { type Arg, askVaultName, checkpointOf, fileOf, pathToCopy, pickCheckpoint, vaultOf } from './targets';
import { basename } from './uris';
import { changeResources } from './diffs';
import { confirmAndRestore, LONG_MS, withProgress } from './restore';
import { deleteVaultConfirmation, pruneConfirmation } from './warnings';

type Command = (arg?: Arg) => unknown;

// Every id here is contributed in package.json (commands, category "AVFS") and nothing else is:
// a test inside VS Code checks the two lists are equal.
const factories: Record<string, (ctx: Ctx) => Command> = {
  ...applyFactories,
  'avfs.createVault': (ctx) => () =>
    ctx.run('New Vault', async () => {
      const name = await askVaultName(ctx, 'Name of the new vault', '');
      if (!name) return;
      await withProgress(`Creating vault ${name}…`, () => ctx.host.request('vault/create', { name }));
      ctx.tree.refresh({ vault: name, files: false, checkpoints: false });
    }),

  'avfs.forkVault': (ctx) => (arg) =>
    ctx.run('Fork Vault', async () => {
      const source = await vaultOf(ctx, arg, 'Vault to fork');
      if (!source) return;
      const name = await askVaultName(ctx, `Name of the fork of ${source} (a task copy: it costs metadata only)`, `${source}-fork`);
      if (!name) return;
      await withProgress(`Forking ${source} as ${name}…`, () => ctx.host.request('vault/fork', { source, name }));
      ctx.tree.refresh({ vault: name, files: false, checkpoints: false });
    }),

  'avfs.deleteVault': (ctx) => (arg) =>
    ctx.run('Delete Vault', async () => {
      const name = await vaultOf(ctx, arg, 'Vault to delete');
      if (!name) return;
      const summary = (await ctx.tree.snapshot()).forest.get(name);
      const info = summary?.status === 'ok' ? await ctx.host.request('vault/info', { name }) : undefined;
      const { message, detail } = info
        ? deleteVaultConfirmation(info)
        : { message: `Delete vault file "${name}"?`, detail: `It cannot be read as a vault${summary?.status === 'unreadable' ? ` (${summary.reason})` : ''}. Deleting it cannot be undone.` };
      const flatten = 'Delete and Flatten Forks';
      const pick = await vscode.window.showWarningMessage(message, { modal: true, detail }, info && info.forks.length > 0 ? flatten : 'Delete');
      if (!pick) return;
      await withProgress(`Deleting vault ${name}…`, () => ctx.host.request('vault/delete', { name, flatten: pick === flatten }, { timeoutMs: LONG_MS }));
      ctx.tree.refresh({ vault: name, files: false, checkpoints: false });
    }),

  'avfs.checkpointNow': (ctx) => (arg) =>
    ctx.run('Checkpoint Now', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault to checkpoint');
      if (!vault) return;
      const cp = await vscode.window.withProgress({ location: { viewId: 'avfs.vaults' } }, () => ctx.host.request('checkpoint/save', { vault }, { timeoutMs: LONG_MS }));
      vscode.window.setStatusBarMessage(`$(check) Checkpoint ${cp.name} of ${vault} saved (${plural(cp.file_count, 'entry', 'entries')})`, 5000);
      ctx.tree.refresh({ vault, files: false, checkpoints: true });
    }),

  'avfs.restoreCheckpoint': (ctx) => (arg) =>
    ctx.run('Restore Checkpoint', async () => {
      const cp = await checkpointOf(ctx, arg, 'Checkpoint to restore');
      if (!cp) return;
      await confirmAndRestore(ctx, cp.vault, cp.name);
    }),

  'avfs.compareWithCurrent': (ctx) => (arg) =>
    ctx.run('Compare with Current', async () => {
      const cp = await checkpointOf(ctx, arg, 'Checkpoint to compare with the current tree');
      if (!cp) return;
      const diff = await ctx.host.request('checkpoint/diff', { vault: cp.vault, from: cp.name, to: 'current' }, { timeoutMs: LONG_MS });
      const resources = changeResources(cp.vault, cp.name, diff);
      if (resources.length === 0) {
        void vscode.window.showInformationMessage(`No file of vault ${cp.vault} changed since checkpoint ${cp.name}.`);
        return;
      }
      await vscode.commands.executeCommand('vscode.changes', `${cp.vault}: ${cp.name} ↔ Current`, resources);
    }),

  'avfs.compareWithCheckpoint': (ctx) => (arg) =>
    ctx.run('Compare with Checkpoint', async () => {
      const file = fileOf(arg);
      if (!file) {
        void vscode.window.showInformationMessage('Compare with Checkpoint works on a vault file: run it from an avfs:// editor or the Vaults view.');
        return;
      }
      const cp = await pickCheckpoint(ctx, file.vault, `Checkpoint of ${file.vault} to compare ${file.path} with`);
      if (!cp) return;
      const exists = await ctx.host.request('checkpoint/stat', { vault: file.vault, name: cp, path: file.path }).then(
        () => true,
        (e: unknown) => (e instanceof HostCallError && e.kind === 'NotFound' ? false : Promise.reject(e)),
      );
      if (!exists) {
        void vscode.window.showInformationMessage(`${file.path} did not exist at checkpoint ${cp}.`);
        return;
      }
      const title = `${basename(file.path)} (${cp}) ↔ Current`;
      await vscode.commands.executeCommand('vscode.diff', toCheckpointUri(file.vault, file.path, cp), toUri(file.vault, file.path), title);
    }),

  'avfs.deleteCheckpoint': (ctx) => (arg) =>
    ctx.run('Delete Checkpoint', async () => {
      const cp = await checkpointOf(ctx, arg, 'Checkpoint to delete');
      if (!cp) return;
      const detail = 'Files are not changed. The space only this checkpoint used is freed by the next garbage collection (avfs gc).';
      if ((await vscode.window.showWarningMessage(`Delete checkpoint "${cp.name}" of vault "${cp.vault}"?`, { modal: true, detail }, 'Delete')) !== 'Delete') return;
      await ctx.host.request('checkpoint/delete', { vault: cp.vault, name: cp.name });
      ctx.tree.refresh({ vault: cp.vault, files: false, checkpoints: true });
    }),

  'avfs.mountVault': (ctx) => (arg) =>
    ctx.run('Mount', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault to mount');
      if (!vault) return;
      const mount = await mountVault(ctx, vault);
      const pick = await vscode.window.showInformationMessage(`Vault ${vault} is mounted at ${mount}.`, 'Open Terminal');
      if (pick) openTerminal(vault, mount);
    }),

  'avfs.unmountVault': (ctx) => (arg) =>
    ctx.run('Unmount', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault to unmount');
      if (!vault) return;
      const mount = (await ctx.tree.snapshot()).mounts.get(vault);
      if (!mount) {
        void vscode.window.showInformationMessage(`Vault ${vault} is not mounted.`);
        return;
      }
      await withProgress(`Unmounting ${vault}…`, () => ctx.host.request('mount/unmount', { mountpoint: mount.mountpoint }, { timeoutMs: LONG_MS }));
      ctx.tree.refresh({ vault, files: false, checkpoints: false });
    }),

  'avfs.openTerminal': (ctx) => (arg) =>
    ctx.run('Open Terminal in Mount', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault to open a terminal in');
      if (!vault) return;
      const mounted = (await ctx.tree.snapshot()).mounts.get(vault)?.mountpoint;
      openTerminal(vault, mounted ?? (await mountVault(ctx, vault)));
    }),

  'avfs.setQuota': (ctx) => (arg) =>
    ctx.run('Set Quota', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault whose quota to set');
      if (!vault) return;
      const { quotas } = await ctx.host.request('vault/info', { name: vault });
      const items: (vscode.QuickPickItem & { key: QuotaKey; unit: string })[] = [
        { key: 'max_size_mb', unit: 'MiB', label: 'Total size', description: show(quotas.max_size_mb, 'MiB'), detail: 'The bytes of all files together' },
        { key: 'max_files', unit: 'files', label: 'Number of files', description: show(quotas.max_files, 'files'), detail: 'Files, directories and symlinks' },
        { key: 'max_file_size_mb', unit: 'MiB', label: 'Size of one file', description: show(quotas.max_file_size_mb, 'MiB'), detail: 'The largest any one file may grow' },
      ];
      const item = await vscode.window.showQuickPick(items, { title: `Quotas of ${vault}`, placeHolder: 'Quota to set or clear' });
      if (!item) return;
      const text = await vscode.window.showInputBox({
        title: `${item.label} quota of ${vault}`,
        prompt: `A whole number of ${item.unit}; empty clears the quota`,
        value: quotas[item.key] === null ? '' : String(quotas[item.key]),
        validateInput: (v) => (v.trim() === '' || /^\d+$/.test(v.trim()) ? undefined : `A whole number of ${item.unit}, or empty`),
      });
      if (text === undefined) return;
      if (text.trim() === '') await ctx.host.request('quota/clear', { vault, key: item.key });
      else await ctx.host.request('quota/set', { vault, key: item.key, value: Number(text.trim()) });
      ctx.tree.refresh({ vault, files: false, checkpoints: false });
    }),

  'avfs.checkpointRetention': (ctx) => (arg) =>
    ctx.run('Checkpoint Retention', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault whose automatic checkpoints to keep');
      if (!vault) return;
      const r = await ctx.host.request('checkpoint/retention', { vault });
      const items: (vscode.QuickPickItem & { key: 'keep_last' | 'max_age' | 'hold_recent' | 'off' })[] = [
        { key: 'keep_last', label: 'Keep the Last…', description: r.keep_last === null ? 'no such rule' : String(r.keep_last), detail: 'How many automatic checkpoints to keep, newest first' },
        { key: 'max_age', label: 'Keep Those Younger Than…', description: r.max_age ?? 'no such rule', detail: 'An age: 30m, 12h, 7d, 2w' },
        { key: 'hold_recent', label: "Hold a Run's Restore Point For…", description: r.hold_recent, detail: 'After the run ended, whatever the rules (a pending run holds it until it ends)' },
        { key: 'off', label: 'Keep Every Automatic Checkpoint', description: r.off ? 'now' : '', detail: 'Retention off' },
      ];
      const item = await vscode.window.showQuickPick(items, { title: `Checkpoint retention of ${vault}: ${r.description}`, placeHolder: 'Rule to set' });
      if (!item) return;
      let asked: { keep_last?: number | null; max_age?: string | null; hold_recent?: string; off?: boolean } = { off: true };
      if (item.key !== 'off') {
        const current = item.key === 'keep_last' ? (r.keep_last === null ? '' : String(r.keep_last)) : item.key === 'max_age' ? (r.max_age ?? '') : r.hold_recent;
        const text = await vscode.window.showInputBox({
          title: `${item.label.replace(/…$/, '')} (vault ${vault})`,
          prompt: item.key === 'keep_last' ? 'A whole number; empty drops this rule' : item.key === 'max_age' ? '30m, 12h, 7d or 2w; empty drops this rule' : '10m, 1h, or 0',
          value: current,
        });
        if (text === undefined) return;
        const v = text.trim();
        // A number is sent as one; anything else as typed, for the host to judge (its typed error is shown).
        if (item.key === 'keep_last') asked = { keep_last: v === '' ? null : /^\d+$/.test(v) ? Number(v) : (v as unknown as number) };
        else if (item.key === 'max_age') asked = { max_age: v === '' ? null : v };
        else asked = { hold_recent: v };
      }
      const next = await ctx.host.request('checkpoint/retention', { vault, ...asked });
      vscode.window.setStatusBarMessage(`$(check) Checkpoint retention of ${vault}: ${next.description}`, 5000);
      ctx.tree.refresh({ vault, files: false, checkpoints: true });
    }),

  'avfs.pruneCheckpoints': (ctx) => (arg) =>
    ctx.run('Prune and Reclaim Space', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault whose automatic checkpoints to prune');
      if (!vault) return;
      const plan = await withProgress(`Looking at the checkpoints of ${vault}…`, () =>
        ctx.host.request('checkpoint/prune', { vault, dry_run: true, gc: true }, { timeoutMs: LONG_MS }),
      );
      const ask = pruneConfirmation(vault, plan);
      if (!ask) {
        const held = plan.held.length > 0 ? ` (${plural(plan.held.length, 'checkpoint')} past it kept for now: ${plan.held[0]!.reason})` : '';
        void vscode.window.showInformationMessage(`Nothing to prune in vault ${vault}: its retention ${plan.retention.description}${held}.`);
        return;
      }
      if ((await vscode.window.showWarningMessage(ask.message, { modal: true, detail: ask.detail }, 'Prune and Reclaim')) !== 'Prune and Reclaim') return;
      const done = await withProgress(`Pruning the checkpoints of ${vault}…`, () => ctx.host.request('checkpoint/prune', { vault, gc: true }, { timeoutMs: LONG_MS }));
      const freed = done.gc?.bytes_freed ?? 0;
      vscode.window.setStatusBarMessage(`$(check) Pruned ${plural(done.pruned.length, 'checkpoint')} of ${vault}; ${formatBytes(freed)} reclaimed`, 8000);
      ctx.tree.refresh({ vault, files: false, checkpoints: true });
    }),

  'avfs.copyPath': (ctx) => (arg) =>
    ctx.run('Copy Path', async () => {
      const text = await pathToCopy(ctx, arg);
      if (text === undefined) return;
      await vscode.env.clipboard.writeText(text);
      vscode.window.setStatusBarMessage(`$(copy) Copied ${text}`, 3000);
    }),

  'avfs.addToWorkspace': (ctx) => (arg) =>
    ctx.run('Add Vault to Workspace', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault to add to the workspace');
      if (!vault) return;
      const uri = toUri(vault, '/');
      const folders = vscode.workspace.workspaceFolders ?? [];
      if (folders.some((f) => f.uri.toString() === uri.toString())) {
        void vscode.window.showInformationMessage(`Vault ${vault} is already a folder of this workspace.`);
        return;
      }
      vscode.workspace.updateWorkspaceFolders(folders.length, 0, { uri, name: `${vault} (vault)` });
    }),

  'avfs.approveOnce': (ctx) => (arg) => ctx.run('Approve Once', () => answerApproval(ctx, arg, 'approve_once')),
  'avfs.alwaysAllow': (ctx) => (arg) => ctx.run('Always Allow', () => answerApproval(ctx, arg, 'always_allow')),
  'avfs.deny': (ctx) => (arg) => ctx.run('Deny', () => answerApproval(ctx, arg, 'deny')),
  'avfs.showExecutions': (ctx) => () => ctx.executions.reveal(),

  'avfs.refresh': (ctx) => () => ctx.tree.refresh(),
  'avfs.showLogs': (ctx) => () => ctx.log.show(),
  'avfs.restartHost': (ctx) => () => ctx.host.restart(),
};

export function registerCommands(ctx: Ctx): vscode.Disposable[] {
  return Object.entries(factories).map(([id, factory]) => {
    const command = factory(ctx);
    return vscode.commands.registerCommand(id, (arg?: Arg) => {
      // A command can be run from the palette or a keybinding even where the UI hides it.
      if (!vscode.workspace.isTrusted && id !== 'avfs.showLogs') {
        void vscode.window.showWarningMessage('AVFS runs no vault host in Restricted Mode: trust this workspace to use vaults.', 'Manage Workspace Trust').then(
          (pick) => pick && vscode.commands.executeCommand('workbench.trust.manage'),
        );
        return;
      }
      return command(arg);
    });
  });
}

/** Answers the approval of the node it was run on, or (from the palette) one the person picks. */
async function answerApproval(ctx: Ctx, arg: Arg, answer: ApprovalAnswerKind): Promise<void> {
  let id = arg && !(arg instanceof vscode.Uri) && arg.kind === 'approval' ? arg.id : undefined;
  if (!id) {
    const pending = ctx.approvals.pending();
    if (pending.length === 0) {
      void vscode.window.showInformationMessage('No approval request is waiting.');
      return;
    }
    const pick = await vscode.window.showQuickPick(
      pending.map((req) => ({ id: req.id, ...approvalRow(req) })).map((r) => ({ id: r.id, label: r.label, description: r.description })),
      { placeHolder: 'Approval request to answer' },
    );
    id = pick?.id;
  }
  if (id) await ctx.approvals.answer(id, answer);
}

async function mountVault(ctx: Ctx, vault: string): Promise<string> {
  const mount = await withProgress(`Mounting ${vault}…`, () => ctx.host.request('mount/mount', { vault }, { timeoutMs: LONG_MS }));
  ctx.tree.refresh({ vault, files: false, checkpoints: false });
  return mount.mountpoint;
}

function openTerminal(vault: string, cwd: string): void {
  vscode.window.createTerminal({ name: `AVFS: ${vault}`, cwd, iconPath: new vscode.ThemeIcon('database') }).show();
}

function show(value: number | null, unit: string): string {
  return value === null ? 'no quota' : `${value} ${unit}`;
}
