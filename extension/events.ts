// What a `vault/changed` notification means for the editor: which files of the `avfs` file system
// were created, changed or deleted (open editors and the Explorer follow those), and whether the
// whole tree must be re-read (a restore, an import, or more changes than the host listed). Pure:
// unit-tested under node:test.
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

/** Journal operations that replace more than the paths they name. */
const WHOLE_TREE_OPS = new Set(['checkpoint_restore', 'import', 'fork_flatten']);

export function impactOf(event: VaultChanged): ChangeImpact {
  const files: FileChange[] = [];
  let wholeTree = event.truncated || event.kind === 'created' || event.kind === 'deleted';
  const add = (kind: FileChangeKind, path: string | null) => {
    if (path !== null) files.push({ kind, path });
  };
  for (const c of event.changes) {
    if (WHOLE_TREE_OPS.has(c.op)) wholeTree = true;
    switch (c.op) {
      case 'create':
      case 'mkdir':
      case 'symlink':
      case 'link':
      case 'import':
        add('created', c.path);
        break;
      case 'copy':
        // path: the source, path2: the new copy.
        add('created', c.path2);
        break;
      case 'unlink':
      case 'rmdir':
        add('deleted', c.path);
        break;
      case 'rename':
        add('deleted', c.path);
        add('created', c.path2);
        break;
      default:
        // write, append, truncate, setattr, and operations this version does not know yet.
        add('changed', c.path);
        add('changed', c.path2);
    }
  }
  // A deleted vault: everything under its root is gone.
  if (event.kind === 'deleted') files.push({ kind: 'deleted', path: '/' });
  const checkpoints = event.kind === 'checkpoints' || event.changes.some((c) => c.op.startsWith('checkpoint_'));
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
