// The native diff editors over a checkpoint and the current tree: the resources of a change
// summary for the multi-file diff editor (`vscode.changes`), one file's `vscode.diff`, and the
// inline unified diffs the executions view shows. Used by Compare with Current and by the
// executions view (a run's checkpoint against the vault now).
import { createTwoFilesPatch } from 'diff';
import * as vscode from 'vscode';
import type { ChangeSummary } from '../host/protocol/changes';
import type { HostClient } from './client/hostClient';
import { errorMessage } from './errors';
import { toCheckpointUri } from './fs/checkpointFs';
import { toUri } from './fs/vaultFs';
import { basename } from './uris';
import type { FileDiff } from '../webview/protocol';

type Resource = [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined];

/** [label, original (at the checkpoint), modified (now)] for each changed file; undefined on the side where it is missing. */
export function changeResources(vault: string, checkpoint: string, diff: ChangeSummary): Resource[] {
  const then = (path: string) => toCheckpointUri(vault, path, checkpoint);
  const now = (path: string) => toUri(vault, path);
  return [
    ...diff.modified.filter((m) => m.type === 'file' && m.content_changed).map((m): Resource => [now(m.path), then(m.path), now(m.path)]),
    ...diff.renamed.filter((r) => r.type === 'file').map((r): Resource => [now(r.to), then(r.from), now(r.to)]),
    ...diff.added.filter((a) => a.type === 'file').map((a): Resource => [now(a.path), undefined, now(a.path)]),
    ...diff.deleted.filter((d) => d.type === 'file').map((d): Resource => [then(d.path), then(d.path), undefined]),
  ];
}

/**
 * One changed file in the native diff editor: the checkpoint's version against the current one
 * (an added file opens as it is now, a deleted one as it was).
 */
export async function openFileDiff(vault: string, checkpoint: string, diff: ChangeSummary, path: string, label: string): Promise<void> {
  const found = changeResources(vault, checkpoint, diff).find(([l]) => l.path === path || l.path === toUri(vault, path).path);
  const [, before, after] = found ?? [undefined, toCheckpointUri(vault, path, checkpoint), toUri(vault, path)];
  if (before && after) await vscode.commands.executeCommand('vscode.diff', before, after, `${basename(path)} (${label}) ↔ Current`);
  else await vscode.commands.executeCommand('vscode.open', before ?? after);
}

/** Files whose inline diff is computed (the rest open in the diff editor), and the largest side read. */
const INLINE_FILES = 30;
const INLINE_BYTES = 256 * 1024;

/** Unified diffs of the changed text files, checkpoint → now, for the executions view. */
export async function inlineDiffs(host: HostClient, vault: string, checkpoint: string, diff: ChangeSummary): Promise<FileDiff[]> {
  const pairs: { path: string; before: string | null; after: string | null; size: number }[] = [
    ...diff.modified.filter((m) => m.type === 'file').map((m) => ({ path: m.path, before: m.path, after: m.path, size: Math.max(m.size_before, m.size_after) })),
    ...diff.renamed.filter((r) => r.type === 'file').map((r) => ({ path: r.to, before: r.from, after: r.to, size: r.size })),
    ...diff.added.filter((a) => a.type === 'file').map((a) => ({ path: a.path, before: null, after: a.path, size: a.size })),
    ...diff.deleted.filter((d) => d.type === 'file').map((d) => ({ path: d.path, before: d.path, after: null, size: d.size })),
  ];
  const read = async (where: 'then' | 'now', path: string | null): Promise<Buffer> => {
    if (path === null) return Buffer.alloc(0);
    const r = where === 'then' ? await host.request('checkpoint/readFile', { vault, name: checkpoint, path }) : await host.request('fs/readFile', { vault, path });
    return Buffer.from(r.data, 'base64');
  };
  return Promise.all(
    pairs.map(async (p, i): Promise<FileDiff> => {
      if (i >= INLINE_FILES) return { path: p.path, patch: null, note: 'Not shown inline (many files changed): open it in the diff editor.' };
      if (p.size > INLINE_BYTES) return { path: p.path, patch: null, note: 'Too large to show inline: open it in the diff editor.' };
      try {
        const [before, after] = await Promise.all([read('then', p.before), read('now', p.after)]);
        if (before.includes(0) || after.includes(0)) return { path: p.path, patch: null, note: 'Binary file.' };
        const patch = createTwoFilesPatch(p.before ?? '/dev/null', p.after ?? '/dev/null', before.toString('utf8'), after.toString('utf8'), 'before this run', 'now', { context: 3 });
        // From the first hunk: the header lines say what the row already says.
        const at = patch.indexOf('\n@@');
        const body = at < 0 ? '' : patch.slice(at + 1);
        return { path: p.path, patch: body, note: body.includes('@@') ? null : 'The same now as before this run (changed back since).' };
      } catch (e) {
        return { path: p.path, patch: null, note: `Could not read it: ${errorMessage(e)}` };
      }
    }),
  );
}
