// Restoring a checkpoint, from the Vaults view (Restore Checkpoint…) or the executions view
// ("Restore to before this run"): a modal that lists what will be lost, the restore with progress,
// an Undo in the message, and "Restore Anyway" past a quota.
import * as vscode from 'vscode';
import type { Ctx } from './ctx';
import { HostCallError } from './errors';
import { plainText } from './format';
import { restoreConfirmation } from './warnings';

/** Operations that grow with the vault (diff, delete, mount, restore) get longer than the default timeout. */
export const LONG_MS = 120_000;

/** Asks (modal) and restores; `what` names the restore in the question (default: the checkpoint). */
export async function confirmAndRestore(ctx: Pick<Ctx, 'host' | 'tree'>, vault: string, name: string, what?: string): Promise<boolean> {
  const diff = await ctx.host.request('checkpoint/diff', { vault, from: name, to: 'current' }, { timeoutMs: LONG_MS });
  const confirm = restoreConfirmation(vault, name, diff);
  if (!confirm) {
    void vscode.window.showInformationMessage(`Vault ${vault} is as it was at checkpoint ${name}: nothing to restore.`);
    return false;
  }
  const message = what ? `${what} The work done since then will be lost.` : confirm.message;
  if ((await vscode.window.showWarningMessage(message, { modal: true, detail: confirm.detail }, 'Restore')) !== 'Restore') return false;
  await restore(ctx, vault, name);
  return true;
}

export async function restore(ctx: Pick<Ctx, 'host' | 'tree'>, vault: string, name: string, force = false): Promise<void> {
  try {
    const done = await withProgress(`Restoring ${vault} to ${name}…`, () =>
      ctx.host.request('checkpoint/restore', { vault, name, force }, { timeoutMs: LONG_MS }),
    );
    ctx.tree.refresh({ vault, files: true, checkpoints: true });
    const pick = await vscode.window.showInformationMessage(
      `Vault ${vault} restored to checkpoint ${name}; the tree before it is saved as checkpoint ${done.undo_checkpoint}.`,
      'Undo',
    );
    if (pick === 'Undo') await restore(ctx, vault, done.undo_checkpoint);
  } catch (e) {
    if (!force && e instanceof HostCallError && e.kind === 'QuotaExceeded') {
      const pick = await vscode.window.showWarningMessage(plainText(e.message), { modal: true, detail: 'Restore anyway, leaving the vault over its quota?' }, 'Restore Anyway');
      if (pick) return restore(ctx, vault, name, true);
      return;
    }
    throw e;
  }
}

export function withProgress<T>(title: string, work: () => Promise<T>): Promise<T> {
  return Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, work));
}
