/** Checkpoint operations every surface shares, with their guards. */
import { assertNotMounted } from '../fuse/registry';
import type { RestoreResult } from '../protocol/changes';
import { diffTrees } from '../store/diff';
import type { AvfsHome } from '../store/home';

/**
 * Restores checkpoint `name` of vault `vault`. Refused while the vault is mounted (the mount's
 * open files would point into a tree that no longer exists), and when the restored tree would
 * pass a quota, unless `force`.
 */
export function restoreCheckpoint(home: AvfsHome, vault: string, name: string, opts: { force?: boolean } = {}): RestoreResult {
  assertNotMounted(home, vault, 'restore a checkpoint');
  const v = home.open(vault);
  try {
    const { checkpoint, undo } = v.checkpoints.restore(name, { force: !!opts.force });
    const changes = diffTrees(v.db, v.inodes.chunks, { kind: 'checkpoint', id: undo.id, name: undo.name }, { kind: 'live' });
    const dirs = (v.db.prepare('SELECT COUNT(*) AS n FROM inodes WHERE (mode & 61440) = 16384 AND ino != 1').get() as { n: number }).n;
    return {
      checkpoint: checkpoint.name,
      undo_checkpoint: undo.name,
      files_restored: checkpoint.file_count - dirs,
      dirs_restored: dirs,
      changes: changes.totals,
      forced: !!opts.force,
    };
  } finally {
    v.close();
  }
}
