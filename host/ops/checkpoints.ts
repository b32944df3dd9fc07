/**
 * Checkpoint operations (`checkpoint/*`): save, list, restore (with its guards), delete, diff,
 * and reading a path as it was at a checkpoint.
 */
import { assertNotMounted } from '../fuse/registry';
import type { CheckpointInfo } from '../protocol/changes';
import type { CheckpointRow } from '../store/checkpoints';
import { CheckpointTree } from '../store/checkpointTree';
import { diffTrees, type TreeRef } from '../store/diff';
import type { Vault } from '../store/vault';
import { checkVaultPath, splitPath } from '../vfs/paths';
import { dirEntryOf, statOf } from '../vfs/vfs';
import type { OpsContext, OpsTable } from './context';
import { humanBytes } from './format';
import { reading, writing } from './vaultAccess';

export function checkpointInfo(row: CheckpointRow): CheckpointInfo {
  return {
    name: row.name,
    created_at: new Date(row.created_ms).toISOString(),
    description: row.description,
    auto: row.auto === 1,
    file_count: row.file_count,
    total_size: row.total_bytes,
    total_size_human: humanBytes(row.total_bytes),
  };
}

function treeRef(v: Vault, name: string): TreeRef {
  if (name === 'current') return { kind: 'live' };
  const row = v.checkpoints.get(name);
  return { kind: 'checkpoint', id: row.id, name: row.name };
}

/** A path at checkpoint `name`, resolved; `fn` reads what it needs from the checkpoint's tree. */
function atCheckpoint<T>(
  ctx: OpsContext,
  p: { vault?: string | undefined; name: string; path: string },
  follow: boolean,
  fn: (tree: CheckpointTree, entry: ReturnType<CheckpointTree['lookup']>) => T,
): T {
  const parts = splitPath(checkVaultPath(p.path));
  return reading(ctx, p.vault, (v) => {
    const tree = new CheckpointTree(v.store, v.inodes.chunks, v.checkpoints.get(p.name));
    return fn(tree, tree.lookup(parts, follow));
  });
}

export const checkpointOps = {
  'checkpoint/save': (ctx, p) =>
    writing(ctx, p.vault, (v) =>
      checkpointInfo(v.checkpoints.save({ ...(p.name !== undefined ? { name: p.name } : {}), ...(p.description !== undefined ? { description: p.description } : {}) })),
    ),

  'checkpoint/list': (ctx, p) => reading(ctx, p.vault, (v) => ({ checkpoints: v.checkpoints.list().map(checkpointInfo) })),

  'checkpoint/info': (ctx, p) => reading(ctx, p.vault, (v) => checkpointInfo(v.checkpoints.get(p.name))),

  /**
   * Refused while the vault is mounted (the mount's open files would point into a tree that no
   * longer exists), and when the restored tree would pass a quota, unless `force`.
   */
  'checkpoint/restore': (ctx, p) => {
    const vault = ctx.home.resolve(p.vault);
    assertNotMounted(ctx.home, vault, 'restore a checkpoint');
    return writing(ctx, vault, (v) => {
      const { checkpoint, undo } = v.checkpoints.restore(p.name, { force: p.force });
      const changes = diffTrees(v.store, v.inodes.chunks, { kind: 'checkpoint', id: undo.id, name: undo.name }, { kind: 'live' });
      const dirs = v.store.countByType().directories;
      return {
        checkpoint: checkpoint.name,
        undo_checkpoint: undo.name,
        files_restored: checkpoint.file_count - dirs,
        dirs_restored: dirs,
        changes: changes.totals,
        forced: p.force,
      };
    });
  },

  'checkpoint/delete': (ctx, p) =>
    writing(ctx, p.vault, (v) => {
      v.checkpoints.delete(p.name);
      return { action: 'delete' as const, name: p.name };
    }),

  'checkpoint/diff': (ctx, p) => reading(ctx, p.vault, (v) => diffTrees(v.store, v.inodes.chunks, treeRef(v, p.from), treeRef(v, p.to), { patch: p.patch })),

  'checkpoint/stat': (ctx, p) => atCheckpoint(ctx, p, false, (_tree, e) => statOf('/' + splitPath(e.path).join('/'), e.attr, e.target)),

  'checkpoint/readDirectory': (ctx, p) =>
    atCheckpoint(ctx, p, true, (tree, dir) => ({
      path: '/' + splitPath(dir.path).join('/'),
      entries: tree.entries(dir).map((e) => dirEntryOf(e.name, e.attr, e.target)),
    })),

  'checkpoint/readFile': (ctx, p) =>
    atCheckpoint(ctx, p, true, (tree, file) => {
      const data = tree.read(file);
      return { path: '/' + splitPath(file.path).join('/'), size: data.length, data: data.toString('base64') };
    }),

} satisfies Partial<OpsTable>;

