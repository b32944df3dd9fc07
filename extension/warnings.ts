// The texts of the modal confirmations: what a restore will throw away, what deleting a vault
// deletes, what a prune deletes and gives back. Built from the host's answers; pure (no `vscode` import), unit-tested under node:test.
import type { ChangeSummary } from '../host/protocol/changes';
import type { PruneResult } from '../host/protocol/methods/checkpoint';
import type { VaultInfo } from '../host/protocol/vault';
import { formatBytes, plural } from './format';

export interface Confirmation {
  message: string;
  detail: string;
}

/** Paths listed by name in a confirmation before "and N more". */
const LISTED = 8;

/**
 * `diff` is checkpoint → current: what happened since the checkpoint, which the restore undoes.
 * Undefined when the vault is as it was at the checkpoint (nothing to lose, nothing to do).
 */
export function restoreConfirmation(vault: string, checkpoint: string, diff: ChangeSummary): Confirmation | undefined {
  const t = diff.totals;
  if (t.added + t.deleted + t.modified + t.renamed === 0) return undefined;
  const lines: string[] = [];
  const list = (paths: string[]) => {
    const shown = paths.slice(0, LISTED).map((p) => `  ${p}`);
    if (paths.length > LISTED) shown.push(`  … and ${paths.length - LISTED} more`);
    return shown;
  };
  if (t.modified) lines.push(`${plural(t.modified, 'file')} changed since then lose those changes:`, ...list(diff.modified.map((m) => m.path)));
  if (t.added) lines.push(`${plural(t.added, 'path')} created since then will be deleted:`, ...list(diff.added.map((a) => a.path)));
  if (t.renamed) lines.push(`${plural(t.renamed, 'path')} renamed since then get their old names back:`, ...list(diff.renamed.map((r) => `${r.to} → ${r.from}`)));
  if (t.deleted) lines.push(`${plural(t.deleted, 'path')} deleted since then come back:`, ...list(diff.deleted.map((d) => d.path)));
  lines.push('', 'The current tree is saved first as an automatic checkpoint, so this restore can be undone.');
  return {
    message: `Restore vault "${vault}" to checkpoint "${checkpoint}"? The work done since then will be lost.`,
    detail: lines.join('\n'),
  };
}

export function deleteVaultConfirmation(info: VaultInfo): Confirmation {
  const lines = [
    `${plural(info.files, 'file')} (${formatBytes(info.size)}) and ${plural(info.checkpoints.length, 'checkpoint')} are deleted with it, and ${info.path} is removed. This cannot be undone.`,
  ];
  if (info.forks.length > 0) {
    lines.push(
      '',
      `Its ${plural(info.forks.length, 'fork')} (${info.forks.join(', ')}) read${info.forks.length === 1 ? 's' : ''} unchanged files from it: ` +
        '"Delete and Flatten Forks" first copies what they need into them, so they keep working.',
    );
  }
  return { message: `Delete vault "${info.name}"?`, detail: lines.join('\n') };
}

/**
 * `plan` is a dry run of checkpoint/prune with gc: what goes, what is held and why, and the bytes
 * that come back (what the pruned checkpoints held alone, plus chunks nothing references already).
 * Undefined when nothing would go and nothing would come back.
 */
export function pruneConfirmation(vault: string, plan: PruneResult): Confirmation | undefined {
  const orphans = plan.gc?.bytes_freed ?? 0;
  const back = plan.freed_size + orphans;
  if (plan.pruned.length === 0 && back === 0) return undefined;
  const lines: string[] = [`Retention: ${plan.retention.description}.`, ''];
  if (plan.pruned.length > 0) {
    lines.push(`${plural(plan.pruned.length, 'automatic checkpoint')} past it will be deleted:`);
    const shown = plan.pruned.slice(0, LISTED).map((c) => `  ${c.name}${c.alone_size ? ` (${formatBytes(c.alone_size)} alone)` : ''}`);
    if (plan.pruned.length > LISTED) shown.push(`  … and ${plan.pruned.length - LISTED} more`);
    lines.push(...shown);
  }
  if (plan.held.length > 0) lines.push(`${plural(plan.held.length, 'checkpoint')} past it ${plan.held.length === 1 ? 'is' : 'are'} kept for now: ${plan.held[0]!.reason}${plan.held.length > 1 ? ', …' : ''}`);
  lines.push(
    '',
    `${formatBytes(back)} come back to the disk${orphans > 0 ? ` (${formatBytes(plan.freed_size)} the deleted checkpoints held alone, ${formatBytes(orphans)} nothing references already)` : ''}.`,
    'Named checkpoints and the files are not touched.',
  );
  return {
    message:
      plan.pruned.length > 0
        ? `Prune ${plural(plan.pruned.length, 'automatic checkpoint')} of vault "${vault}" and reclaim ${formatBytes(back)}?`
        : `Reclaim ${formatBytes(back)} of vault "${vault}"?`,
    detail: lines.join('\n'),
  };
}
