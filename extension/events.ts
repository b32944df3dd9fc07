// What a `vault/changed` notification means for the editor: which files of the `avfs` file system
// were created, changed or deleted (open editors and the Explorer follow those), and whether the
// whole tree must be re-read (a restore, an import, or more changes than the host listed). Pure:
// unit-tested under node:test.
import { isJournalOp, type JournalOp } from '../host/protocol/changes';
import type { VaultChanged } from './client/hostClient';

export type FileChangeKind = 'created' | 'changed' | 'deleted';

export interface FileChange {
  kind: FileChangeKind;
  path: string;
}

export interface ChangeImpact {
  vault: string;
  files: FileChange[];
  /** Anything in the vault may have changed: re-read every open file of it and its root. */
  wholeTree: boolean;
  /** A checkpoint was saved, restored or deleted: the vault's checkpoint list changed. */
  checkpoints: boolean;
}

/** What one journal operation means for the editor's view of the vault's files. */
type Effect = 'created' | 'copied' | 'deleted' | 'renamed' | 'changed' | 'whole_tree' | 'checkpoints' | 'none';

/** Exhaustive over the protocol's JournalOp: a new operation does not compile until it is placed here. */
function effectOf(op: JournalOp): Effect {
  switch (op) {
    case 'create':
    case 'mknod':
    case 'mkdir':
    case 'symlink':
    case 'link':
      return 'created';
    case 'copy':
      return 'copied';
    case 'unlink':
    case 'rmdir':
      return 'deleted';
    case 'rename':
      return 'renamed';
    case 'write':
    case 'append':
    case 'truncate':
    case 'setattr':
      return 'changed';
    // Replace more than the paths they name (an import names its root).
    case 'import':
    case 'checkpoint_restore':
    case 'fork_flatten':
      return 'whole_tree';
    case 'checkpoint_save':
    case 'checkpoint_delete':
    case 'checkpoint_retention':
      return 'checkpoints';
    case 'fork_create':
    case 'quota_set':
    case 'quota_clear':
    case 'exec_request':
    case 'exec_denied':
    case 'exec_approval':
    case 'exec_result':
    case 'exec_failed':
    // A sync's writes are journaled one by one; an apply writes the project, not the vault.
    case 'project_apply':
    case 'project_sync':
      return 'none';
    default:
      return op satisfies never;
  }
}

export function impactOf(event: VaultChanged): ChangeImpact {
  const files: FileChange[] = [];
  let wholeTree = event.truncated || event.kind === 'created' || event.kind === 'deleted';
  let checkpoints = event.kind === 'checkpoints';
  const add = (kind: FileChangeKind, path: string | null) => {
    if (path !== null) files.push({ kind, path });
  };
  for (const c of event.changes) {
    // An operation of another avfs version: whatever it names may have changed.
    const effect = isJournalOp(c.op) ? effectOf(c.op) : 'changed';
    switch (effect) {
      case 'created':
        add('created', c.path);
        break;
      case 'copied':
        // path: the source, path2: the new copy.
        add('created', c.path2);
        break;
      case 'deleted':
        add('deleted', c.path);
        break;
      case 'renamed':
        add('deleted', c.path);
        add('created', c.path2);
        break;
      case 'changed':
        add('changed', c.path);
        add('changed', c.path2);
        break;
      case 'whole_tree':
        wholeTree = true;
        add('created', c.path);
        if (c.op === 'checkpoint_restore') checkpoints = true;
        break;
      case 'checkpoints':
        checkpoints = true;
        break;
      case 'none':
        break;
    }
  }
  // A deleted vault: everything under its root is gone.
  if (event.kind === 'deleted') files.push({ kind: 'deleted', path: '/' });
  return { vault: event.vault, files: dedupe(files), wholeTree, checkpoints };
}

/** One entry per path, the last kind winning (a file created then written is "created"; deleted then created is "created"). */
function dedupe(files: FileChange[]): FileChange[] {
  const last = new Map<string, FileChange>();
  for (const f of files) {
    const before = last.get(f.path);
    last.delete(f.path);
    last.set(f.path, before?.kind === 'created' && f.kind === 'changed' ? before : f);
  }
  return [...last.values()];
}
