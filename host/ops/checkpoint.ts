/**
 * Checkpoint operations (`checkpoint/*`): save, list, restore (with its guards), delete, diff,
 * and reading a path as it was at a checkpoint.
 */
import { assertNotMounted } from '../fuse/registry';
import type { CheckpointInfo } from '../protocol/changes';
import { AvfsError } from '../protocol/errors';
import type { MethodParamsParsed } from '../protocol/methods';
import type { RetentionInfo } from '../protocol/methods/checkpoint';
import { checkKeepLast, describeRetention, formatAge, parseAge, type RetentionSettings } from '../protocol/retention';
import type { CheckpointRow } from '../store/checkpoints';
import { CheckpointTree } from '../store/checkpointTree';
import { diffTrees, type TreeRef } from '../store/diff';
import { descendantRefs } from '../store/forks';
import { collectGarbage } from '../store/gc';
import type { Vault } from '../store/vault';
import { checkVaultPath, splitPath } from '../vfs/paths';
import { dirEntryOf, statOf } from '../vfs/vfs';
import type { OpsContext, OpsTable } from './context';
import { humanBytes } from './format';
import { reading, writing } from './vaultAccess';

export function checkpointInfo(row: CheckpointRow, alone: Map<number, number> | null = null): CheckpointInfo {
  const held = alone === null ? null : (alone.get(row.id) ?? 0);
  return {
    name: row.name,
    created_at: new Date(row.created_ms).toISOString(),
    description: row.description,
    auto: row.auto === 1,
    file_count: row.file_count,
    total_size: row.total_bytes,
    total_size_human: humanBytes(row.total_bytes),
    alone_size: held,
    alone_size_human: held === null ? null : humanBytes(held),
  };
}

/**
 * What each checkpoint holds alone, counting the chunks the vault's forks reference as held by
 * them. Null when it cannot be known: the vault is read-only (the counts cannot be brought up to
 * date) or a fork cannot be read.
 */
function aloneBytes(ctx: OpsContext, v: Vault): Map<number, number> | null {
  try {
    return v.checkpoints.aloneBytes(() => descendantRefs(ctx.home, v.name));
  } catch (e) {
    if (e instanceof AvfsError && (e.kind === 'StorageError' || e.kind === 'ReadOnly')) return null;
    throw e;
  }
}

export function retentionInfo(r: RetentionSettings): RetentionInfo {
  return {
    keep_last: r.keep_last,
    max_age_ms: r.max_age_ms,
    max_age: r.max_age_ms === null ? null : formatAge(r.max_age_ms),
    off: r.keep_last === null && r.max_age_ms === null,
    hold_recent_ms: r.hold_recent_ms,
    hold_recent: formatAge(r.hold_recent_ms),
    description: describeRetention(r),
  };
}

/** The settings a `checkpoint/retention` call asks for (undefined: it only reads them); bad values are InvalidInput. */
function askedRetention(current: RetentionSettings, p: MethodParamsParsed<'checkpoint/retention'>): RetentionSettings | undefined {
  const given = p.keep_last !== undefined || p.max_age !== undefined;
  if (p.off && given) throw new AvfsError('InvalidInput', 'off drops both rules: give it alone, without keep_last or max_age', { field: 'off' });
  const hold_recent_ms = p.hold_recent === undefined ? current.hold_recent_ms : parseAge(p.hold_recent, 'hold_recent', true);
  if (p.off) return { keep_last: null, max_age_ms: null, hold_recent_ms };
  if (!given && p.hold_recent === undefined) return undefined;
  return {
    keep_last: p.keep_last === undefined ? current.keep_last : p.keep_last === null ? null : checkKeepLast(p.keep_last),
    max_age_ms: p.max_age === undefined ? current.max_age_ms : p.max_age === null ? null : parseAge(p.max_age),
    hold_recent_ms,
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

  // Writing: the counts behind alone_size are brought up to date first (a read-only vault lists without them).
  'checkpoint/list': (ctx, p) =>
    writing(ctx, p.vault, (v) => {
      const alone = aloneBytes(ctx, v);
      return { checkpoints: v.checkpoints.list().map((c) => checkpointInfo(c, alone)) };
    }),

  'checkpoint/info': (ctx, p) => writing(ctx, p.vault, (v) => checkpointInfo(v.checkpoints.get(p.name), aloneBytes(ctx, v))),

  'checkpoint/retention': (ctx, p) =>
    writing(ctx, p.vault, (v) => {
      const asked = askedRetention(v.checkpoints.retention(), p);
      return retentionInfo(asked === undefined ? v.checkpoints.retention() : v.checkpoints.setRetention(asked));
    }),

  'checkpoint/prune': (ctx, p) =>
    writing(ctx, p.vault, (v) => {
      const extraRefs = () => descendantRefs(ctx.home, v.name);
      const alone = aloneBytes(ctx, v);
      const r = v.checkpoints.prune({ dryRun: p.dry_run, extraRefs });
      const gc = p.gc ? collectGarbage(v.store, { dryRun: p.dry_run, extraRefs }) : null;
      return {
        dry_run: r.dry_run,
        retention: retentionInfo(r.settings),
        pruned: r.prune.map((c) => checkpointInfo(c, alone)),
        held: r.held.map((h) => ({ name: h.row.name, reason: h.reason })),
        kept: r.kept.length,
        freed_size: r.freed_bytes,
        freed_size_human: humanBytes(r.freed_bytes),
        gc,
      };
    }),

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

