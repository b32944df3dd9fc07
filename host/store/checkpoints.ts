/**
 * Checkpoints: a copy of the tree's metadata (inodes, entries, symlinks, extents) taken inside
 * one transaction. Bytes are shared through the content-addressed chunks, so the cost grows with
 * the number of files, not their size. Restore is one transaction that first saves the current
 * tree as an automatic checkpoint and puts inode numbers back as they were.
 */
import { AvfsError } from '../protocol/errors';
import { CHECKPOINT_NAME_RE } from '../protocol/names';
import type { RetentionSettings } from '../protocol/retention';
import { type CheckpointRefCounts, LIVE, type MetaStore, type TreeId } from './backend';
import type { ExtraRefs } from './gc';
import type { Journal } from './journal';
import type { QuotaBook, TreeUsage } from './quota';
import { planRetention, readRetention, type RetentionPlan, writeRetention } from './retention';

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

/** One path of an edited checkpoint and the inode it takes from the source (null: the path goes). */
export interface Edit {
  path: string;
  ino: number | null;
}

export interface SaveOptions {
  name?: string;
  description?: string;
  auto?: boolean;
  prefix?: string;
  /** A baseline of proxy exec: named with a leading dot, hidden from listings, never journaled. */
  internal?: boolean;
  /** The run (proxy exec's id) whose restore point this is: retention holds it while the run is pending or recent. */
  run?: string;
}

export interface PruneResult extends RetentionPlan {
  /** Bytes the pruned checkpoints held alone, together: what gc gives back for them. */
  freed_bytes: number;
  dry_run: boolean;
}

export class Checkpoints {
  constructor(
    private readonly meta: MetaStore,
    private readonly journal: Journal,
    private readonly quotas: QuotaBook,
  ) {}

  /** What each checkpoint holds alone, counted by the backend (checkpointRefs.ts on SQLite). */
  get refs(): CheckpointRefCounts {
    return this.meta.refs;
  }

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
    return this.saveTree(opts, false);
  }

  /** `save`; with `moveOut`, the live tree's rows may move into the checkpoint and leave it empty (a restore's undo point, refilled at once). */
  private saveTree(opts: SaveOptions, moveOut: boolean): CheckpointRow {
    if (opts.name !== undefined) checkCheckpointName(opts.name);
    const row = this.meta.write(() => {
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
      // Every inode copied (none is unlinked but open, the usual case): the live counters are the
      // tree's totals. Else they are worked out.
      if (!this.meta.snapshotLive(id, moveOut)) {
        const counted = this.meta.treeCounts(id);
        this.meta.setCheckpointCounts(id, counted.files, counted.bytes);
      }
      if (!opts.internal) {
        this.journal.append('checkpoint_save', null, {
          details: { checkpoint: name, auto: !!opts.auto, description: opts.description ?? null, ...(opts.run !== undefined ? { run: opts.run } : {}) },
        });
      }
      return this.get(name);
    });

    // Retention runs after each automatic checkpoint, in a transaction of its own (a restore runs it after its own).
    if (opts.auto && !opts.internal && !this.meta.inTransaction) this.applyRetention();
    return row;
  }

  /**
   * Puts the tree back as it was at `name`, after saving the current tree as an automatic
   * checkpoint. A restore that would grow usage past a quota is refused with nothing changed,
   * unless `force` (the quotas then refuse further growth, as for any vault over its quota).
   */
  restore(name: string, opts: { force?: boolean } = {}): { checkpoint: CheckpointRow; undo: CheckpointRow } {
    const restored = this.meta.write(() => {
      const cp = this.get(name);
      const before = this.usage();
      // The undo point takes the live tree's rows as they are (SQLite renames the tables instead
      // of copying them), and the restored tree is copied into the emptied live tree.
      const undo = this.saveTree({ auto: true, prefix: 'before-restore', description: `automatic, before restoring ${name}` }, true);
      this.meta.restoreTree(cp.id);
      // Inode numbers are never reused, so next_ino stays where it is. The checkpoint's totals are
      // the restored tree's (counted as the live counters count, when it was saved or edited).
      this.meta.setCounters({ ...this.meta.counters()!, live_bytes: cp.total_bytes, live_inodes: cp.file_count });
      // Throwing here rolls the whole transaction back, the undo checkpoint included.
      if (!opts.force) this.quotas.checkReplace(before, this.usage(), name);
      this.journal.append('checkpoint_restore', null, { details: { checkpoint: name, undo: undo.name, ...(opts.force ? { force: true } : {}) } });
      return { checkpoint: cp, undo };
    });
    if (!this.meta.inTransaction) this.applyRetention();
    return restored;
  }

  /**
   * Saves, as a new internal checkpoint, the tree of checkpoint `from` with some paths taken from
   * the live tree (or the checkpoint `source`) instead: each edit names a path and the inode there
   * (null: the path is absent). Edits run in order (removals deepest first, then additions parents first). What a
   * sync makes its new base from: the old base with the project's changes, which the live tree now
   * holds, and none of the vault's own.
   */
  derive(from: string, edits: Edit[], prefix: string, source: CheckpointRow | 'live' = 'live'): CheckpointRow {
    const m = this.meta;
    return m.write(() => {
      const src = this.get(from);
      const id = m.nextCheckpointId();
      const name = `.${prefix}-${stamp(Date.now())}-${id}`;
      m.insertCheckpoint({ ...src, id, name, created_ms: Date.now(), auto: 1, file_count: 0, total_bytes: 0 });
      m.copyTree(src.id, id);
      this.edit(id, edits, source);
      return this.get(name);
    });
  }

  /**
   * Edits checkpoint `name` in place, as `derive` would edit its copy: the work grows with the
   * edits, not with the tree. Only for an internal checkpoint that one owner holds (a vault's
   * base, which moves forward at every apply); `journal_seq`, if given, becomes the checkpoint's.
   */
  amend(name: string, edits: Edit[], source: CheckpointRow | 'live' = 'live', journalSeq?: number): CheckpointRow {
    if (!name.startsWith('.')) throw new AvfsError('Internal', `only an internal checkpoint is edited in place, not ${name}`, { checkpoint: name });
    return this.meta.write(() => {
      const cp = this.get(name);
      // Its chunk references change under the counts: it is counted again when next needed.
      this.refs.uncount(cp.id);
      this.edit(cp.id, edits, source);
      if (journalSeq !== undefined) this.meta.setCheckpointJournalSeq(cp.id, journalSeq);
      return this.get(name);
    });
  }

  /** Makes `edits` in checkpoint `id`'s rows (inside the caller's transaction), then counts its files and bytes again. */
  private edit(id: number, edits: Edit[], source: CheckpointRow | 'live'): void {
    const m = this.meta;
    const from: TreeId = source === 'live' ? LIVE : source.id;
    const isDir = (mode: number | undefined) => (mode ?? 0) >> 12 === 4;
    const dropInode = (ino: number) => {
      // Another entry can name it only if it is a file with hard links (entries are not indexed by
      // inode: looking for one reads the checkpoint's entries, so only then).
      const n = m.inode(id, ino);
      if (n && n.nlink > 1 && !isDir(n.mode) && m.cpLinks(id, ino) > 0) return;
      for (const c of m.children(id, ino)) {
        m.cpDeleteDentry(id, ino, c.name);
        dropInode(c.ino);
      }
      m.cpDropInode(id, ino);
    };
    for (const e of edits) {
      const parts = e.path.split('/').filter(Boolean);
      const leaf = parts.pop();
      if (leaf === undefined) continue;
      let parent = 1;
      for (const c of parts) {
        const next = m.child(id, parent, c);
        if (next === undefined) throw new AvfsError('Internal', `editing a checkpoint: ${e.path} has no parent ${c}`, { path: e.path });
        parent = next;
      }
      const old = m.child(id, parent, leaf);
      if (old !== undefined && e.ino !== null && isDir(m.inode(id, old)?.mode) && isDir(m.inode(from, e.ino)?.mode)) {
        // A directory kept: its entries stay, its attributes are the source's.
        m.cpSetDirAttrs(id, old, from, e.ino);
        continue;
      }
      if (old !== undefined) {
        m.cpDeleteDentry(id, parent, leaf);
        dropInode(old);
      }
      if (e.ino === null) continue;
      m.cpCopyInode(id, from, e.ino);
      m.cpInsertDentry(id, parent, leaf, e.ino);
    }
    const counted = m.treeCounts(id);
    m.setCheckpointCounts(id, counted.files, counted.bytes);
  }

  private usage(): TreeUsage {
    const c = this.meta.counters()!;
    const largestFile = this.quotas.get().max_file_size_mb === null ? 0 : this.meta.largestFile();
    return { bytes: c.live_bytes, files: c.live_inodes, largestFile };
  }

  delete(name: string, why?: { retention: true }): CheckpointRow {
    return this.meta.write(() => {
      const cp = this.get(name);
      this.refs.uncount(cp.id);
      this.meta.dropTree(cp.id);
      this.meta.deleteCheckpointRow(cp.id);
      if (!name.startsWith('.')) this.journal.append('checkpoint_delete', null, { details: { checkpoint: name, ...why } });
      return cp;
    });
  }

  /** The automatic checkpoints users see, oldest first: what retention applies to. */
  private automatic(): CheckpointRow[] {
    return this.meta.checkpointRows().filter((c) => c.auto === 1 && !c.name.startsWith('.'));
  }

  retention(): RetentionSettings {
    return readRetention(this.meta);
  }

  /** Sets the vault's retention (journaled). It applies from the next automatic checkpoint or prune on. */
  setRetention(settings: RetentionSettings): RetentionSettings {
    this.meta.write(() => writeRetention(this.meta, this.journal, settings));
    return this.retention();
  }

  /** What the retention keeps, holds and would prune now. */
  plan(now = Date.now()): RetentionPlan {
    return planRetention(this.meta, this.automatic(), this.retention(), now);
  }

  /**
   * Deletes the automatic checkpoints the retention does not keep or hold, in one transaction,
   * with what they held alone (`extra`: the chunks forks reference). Dry run: says, deletes nothing.
   */
  prune(opts: { dryRun?: boolean; extraRefs?: ExtraRefs } = {}): PruneResult {
    if (!this.meta.readonly) this.refs.sync();
    const run = () => {
      const plan = this.plan();
      const freed = this.refs.current() ? this.refs.together(plan.prune.map((c) => c.id), opts.extraRefs) : 0;
      if (!opts.dryRun) for (const c of plan.prune) this.delete(c.name, { retention: true });
      return { ...plan, freed_bytes: freed, dry_run: !!opts.dryRun };
    };
    return opts.dryRun && this.meta.readonly ? run() : this.meta.write(run);
  }

  /** Prunes what the retention no longer keeps (after an automatic checkpoint). Deletes only: the byte counts are left for later. */
  private applyRetention(): void {
    this.meta.write(() => {
      for (const c of this.plan().prune) this.delete(c.name, { retention: true });
    });
  }

  /** Bytes each checkpoint holds alone, by id (absent: 0); null when the counts cannot be brought up to date (a read-only vault). */
  aloneBytes(extraRefs?: ExtraRefs): Map<number, number> | null {
    // A vault of an older schema opened read-only has no counts at all.
    if (!this.refs.available()) return null;
    if (!this.meta.readonly) this.refs.sync();
    return this.refs.current() ? this.refs.alone(extraRefs) : null;
  }
}
