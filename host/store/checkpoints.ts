/**
 * Checkpoints: a copy of the tree's metadata (inodes, entries, symlinks, extents) taken inside
 * one transaction. Bytes are shared through the content-addressed chunks, so the cost grows with
 * the number of files, not their size. Restore is one transaction that first saves the current
 * tree as an automatic checkpoint and puts inode numbers back as they were.
 */
import { AvfsError } from '../protocol/errors';
import { CHECKPOINT_NAME_RE } from '../protocol/names';
import { LIVE, type MetaStore, type TreeId } from './backend';
import type { Journal } from './journal';
import type { QuotaBook, TreeUsage } from './quota';

export interface CheckpointRow {
  id: number;
  name: string;
  created_ms: number;
  description: string | null;
  auto: number;
  file_count: number;
  total_bytes: number;
  journal_seq: number;
}

function stamp(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${d.getUTCFullYear()}${p(d.getUTCMonth() + 1)}${p(d.getUTCDate())}-${p(d.getUTCHours())}${p(d.getUTCMinutes())}${p(d.getUTCSeconds())}-${p(d.getUTCMilliseconds(), 3)}`;
}

export function checkCheckpointName(name: string): string {
  if (!CHECKPOINT_NAME_RE.test(name)) {
    throw new AvfsError(
      'InvalidInput',
      `invalid checkpoint name ${JSON.stringify(name)}: use 1-128 characters of A-Z a-z 0-9 . _ -, not starting with . or -`,
      { checkpoint: name },
    );
  }
  return name;
}

export interface SaveOptions {
  name?: string;
  description?: string;
  auto?: boolean;
  prefix?: string;
  /** A baseline of proxy exec: named with a leading dot, hidden from listings, never journaled. */
  internal?: boolean;
}

export class Checkpoints {
  constructor(
    private readonly meta: MetaStore,
    private readonly journal: Journal,
    private readonly quotas: QuotaBook,
  ) {}

  /** The checkpoints users see (internal baselines, named with a leading dot, are left out). */
  list(): CheckpointRow[] {
    return this.meta.checkpointRows().filter((c) => !c.name.startsWith('.'));
  }

  /** Internal baselines (a leading dot no user name can have), for clean-up. */
  internal(): CheckpointRow[] {
    return this.meta.checkpointRows().filter((c) => c.name.startsWith('.'));
  }

  get(name: string): CheckpointRow {
    const row = this.meta.checkpointByName(name);
    if (!row) throw new AvfsError('NotFound', `no checkpoint named ${name}`, { checkpoint: name });
    return row;
  }

  /**
   * Saves the current tree. Without a name, the name is `<prefix>-<UTC time to the ms>-<id>`:
   * the id makes it unique even for two checkpoints in the same millisecond.
   */
  save(opts: SaveOptions = {}): CheckpointRow {
    if (opts.name !== undefined) checkCheckpointName(opts.name);
    return this.meta.write(() => {
      if (opts.name !== undefined && this.meta.checkpointByName(opts.name)) {
        throw new AvfsError('AlreadyExists', `a checkpoint named ${opts.name} already exists`, { checkpoint: opts.name });
      }
      const now = Date.now();
      const counters = this.meta.counters()!;
      const seq = this.meta.journalMaxSeq();
      const id = this.meta.nextCheckpointId();
      // An internal baseline (proxy exec's "before" tree when no checkpoint is asked for) is named
      // with a leading dot: hidden from listings, never journaled, deleted by its run.
      const name = opts.name ?? `${opts.internal ? '.' : ''}${opts.prefix ?? (opts.auto ? 'auto' : 'cp')}-${stamp(now)}-${id}`;
      this.meta.insertCheckpoint({
        id,
        name,
        created_ms: now,
        description: opts.description ?? null,
        auto: opts.auto ? 1 : 0,
        file_count: counters.live_inodes,
        total_bytes: counters.live_bytes,
        journal_seq: seq,
      });
      this.meta.snapshotLive(id);
      const counted = this.meta.treeCounts(id);
      this.meta.setCheckpointCounts(id, counted.files, counted.bytes);
      if (!opts.internal) this.journal.append('checkpoint_save', null, { details: { checkpoint: name, auto: !!opts.auto, description: opts.description ?? null } });
      return this.get(name);
    });
  }

  /**
   * Puts the tree back as it was at `name`, after saving the current tree as an automatic
   * checkpoint. A restore that would grow usage past a quota is refused with nothing changed,
   * unless `force` (the quotas then refuse further growth, as for any vault over its quota).
   */
  restore(name: string, opts: { force?: boolean } = {}): { checkpoint: CheckpointRow; undo: CheckpointRow } {
    return this.meta.write(() => {
      const cp = this.get(name);
      const before = this.usage();
      const undo = this.save({ auto: true, prefix: 'before-restore', description: `automatic, before restoring ${name}` });
      this.meta.restoreTree(cp.id);
      // Inode numbers are never reused, so next_ino stays where it is.
      this.meta.recount();
      // Throwing here rolls the whole transaction back, the undo checkpoint included.
      if (!opts.force) this.quotas.checkReplace(before, this.usage(), name);
      this.journal.append('checkpoint_restore', null, { details: { checkpoint: name, undo: undo.name, ...(opts.force ? { force: true } : {}) } });
      return { checkpoint: cp, undo };
    });
  }

  /**
   * Saves, as a new internal checkpoint, the tree of checkpoint `from` with some paths taken from
   * the live tree (or the checkpoint `source`) instead: each edit names a path and the inode there
   * (null: the path is absent). Edits run in order (removals deepest first, then additions parents first). What a
   * sync makes its new base from: the old base with the project's changes, which the live tree now
   * holds, and none of the vault's own.
   */
  derive(from: string, edits: Array<{ path: string; ino: number | null }>, prefix: string, source: CheckpointRow | 'live' = 'live'): CheckpointRow {
    const m = this.meta;
    return m.write(() => {
      const src = this.get(from);
      const id = m.nextCheckpointId();
      const name = `.${prefix}-${stamp(Date.now())}-${id}`;
      m.insertCheckpoint({ ...src, id, name, created_ms: Date.now(), auto: 1, file_count: 0, total_bytes: 0 });
      m.copyTree(src.id, id);
      const isDir = (ino: number) => ((m.inode(id, ino)?.mode ?? 0) >> 12) === 4;
      const dropInode = (ino: number) => {
        if (m.cpLinks(id, ino) > 0) return;
        for (const c of m.children(id, ino)) {
          m.cpDeleteDentry(id, ino, c.name);
          dropInode(c.ino);
        }
        m.cpDropInode(id, ino);
      };
      const srcTree: TreeId = source === 'live' ? LIVE : source.id;
      const isDirAt = (ino: number) => ((m.inode(srcTree, ino)?.mode ?? 0) >> 12) === 4;
      for (const e of edits) {
        const parts = e.path.split('/').filter(Boolean);
        const leaf = parts.pop();
        if (leaf === undefined) continue;
        let parent = 1;
        for (const c of parts) {
          const next = m.child(id, parent, c);
          if (next === undefined) throw new AvfsError('Internal', `deriving a checkpoint: ${e.path} has no parent ${c}`, { path: e.path });
          parent = next;
        }
        const old = m.child(id, parent, leaf);
        if (old !== undefined && e.ino !== null && isDir(old) && isDirAt(e.ino)) {
          // A directory kept: its entries stay, its attributes are the source's.
          m.cpSetDirAttrs(id, old, srcTree, e.ino);
          continue;
        }
        if (old !== undefined) {
          m.cpDeleteDentry(id, parent, leaf);
          dropInode(old);
        }
        if (e.ino === null) continue;
        m.cpCopyInode(id, srcTree, e.ino);
        m.cpInsertDentry(id, parent, leaf, e.ino);
      }
      const counted = m.treeCounts(id);
      m.setCheckpointCounts(id, counted.files, counted.bytes);
      return this.get(name);
    });
  }

  private usage(): TreeUsage {
    const c = this.meta.counters()!;
    return { bytes: c.live_bytes, files: c.live_inodes, largestFile: this.meta.largestFile() };
  }

  delete(name: string): CheckpointRow {
    return this.meta.write(() => {
      const cp = this.get(name);
      this.meta.dropTree(cp.id);
      this.meta.deleteCheckpointRow(cp.id);
      if (!name.startsWith('.')) this.journal.append('checkpoint_delete', null, { details: { checkpoint: name } });
      return cp;
    });
  }
}
