/**
 * Checkpoints: a copy of the tree's metadata (inodes, entries, symlinks, extents) taken inside
 * one transaction. Bytes are shared through the content-addressed chunks, so the cost grows with
 * the number of files, not their size. Restore is one transaction that first saves the current
 * tree as an automatic checkpoint and puts inode numbers back as they were.
 */
import { AvfsError } from '../protocol/errors';
import { CHECKPOINT_NAME_RE } from '../protocol/names';
import type { RetentionSettings } from '../protocol/retention';
import { CheckpointRefs } from './checkpointRefs';
import type { Db } from './db';
import { tableNames, writeTxn } from './db';
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

const INODE_COLS = 'ino, mode, uid, gid, nlink, size, atime_s, atime_ns, mtime_s, mtime_ns, ctime_s, ctime_ns';

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
  readonly refs: CheckpointRefs;

  constructor(
    private readonly db: Db,
    private readonly journal: Journal,
    private readonly quotas: QuotaBook,
  ) {
    this.refs = new CheckpointRefs(db);
  }

  /** The checkpoints users see (internal baselines, named with a leading dot, are left out). */
  list(): CheckpointRow[] {
    return this.db.prepare<[], CheckpointRow>("SELECT * FROM checkpoints WHERE name NOT LIKE '.%' ORDER BY id").all();
  }

  /** Internal baselines (a leading dot no user name can have), for clean-up. */
  internal(): CheckpointRow[] {
    return this.db.prepare<[], CheckpointRow>("SELECT * FROM checkpoints WHERE name LIKE '.%' ORDER BY id").all();
  }

  get(name: string): CheckpointRow {
    const row = this.db.prepare<[string], CheckpointRow>('SELECT * FROM checkpoints WHERE name = ?').get(name);
    if (!row) throw new AvfsError('NotFound', `no checkpoint named ${name}`, { checkpoint: name });
    return row;
  }

  /**
   * Saves the current tree. Without a name, the name is `<prefix>-<UTC time to the ms>-<id>`:
   * the id makes it unique even for two checkpoints in the same millisecond.
   */
  save(opts: SaveOptions = {}): CheckpointRow {
    if (opts.name !== undefined) checkCheckpointName(opts.name);
    const row = writeTxn(this.db, () => {
      if (opts.name !== undefined && this.db.prepare('SELECT 1 FROM checkpoints WHERE name = ?').get(opts.name)) {
        throw new AvfsError('AlreadyExists', `a checkpoint named ${opts.name} already exists`, { checkpoint: opts.name });
      }
      const now = Date.now();
      const counters = this.db.prepare('SELECT live_bytes, live_inodes FROM counters WHERE id = 1').get() as {
        live_bytes: number;
        live_inodes: number;
      };
      const seq = (this.db.prepare("SELECT COALESCE(MAX(seq), 0) AS s FROM journal").get() as { s: number }).s;
      // AUTOINCREMENT never reuses an id, so the next one is known inside this write transaction.
      const id =
        (this.db.prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'checkpoints'), 0) + 1 AS id").get() as { id: number }).id;
      // An internal baseline (proxy exec's "before" tree when no checkpoint is asked for) is named
      // with a leading dot: hidden from listings, never journaled, deleted by its run.
      const name = opts.name ?? `${opts.internal ? '.' : ''}${opts.prefix ?? (opts.auto ? 'auto' : 'cp')}-${stamp(now)}-${id}`;
      this.db
        .prepare(
          'INSERT INTO checkpoints (id, name, created_ms, description, auto, file_count, total_bytes, journal_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(id, name, now, opts.description ?? null, opts.auto ? 1 : 0, counters.live_inodes, counters.live_bytes, seq);
      // Files unlinked but still open on a mount (nlink 0) are not part of the tree: leave them out,
      // or a restore would bring back inodes that nothing will ever free.
      const copied = this.db.prepare(`INSERT INTO cp_inodes (cp, ${INODE_COLS}) SELECT ?, ${INODE_COLS} FROM inodes WHERE nlink > 0`).run(id).changes;
      this.db.prepare('INSERT INTO cp_dentries (cp, parent, name, ino) SELECT ?, parent, name, ino FROM dentries').run(id);
      this.db.prepare('INSERT INTO cp_symlinks (cp, ino, target) SELECT ?, ino, target FROM symlinks').run(id);
      // Every inode copied (none is unlinked but open, the usual case): the extents are copied
      // without a lookup each, and the live counters are the tree's totals. Else both are worked out.
      const whole = copied === (this.db.prepare('SELECT COUNT(*) AS n FROM inodes').get() as { n: number }).n;
      if (whole) {
        this.db.prepare('INSERT INTO cp_extents (cp, ino, idx, hash) SELECT ?, ino, idx, hash FROM extents').run(id);
      } else {
        this.db.prepare('INSERT INTO cp_extents (cp, ino, idx, hash) SELECT ?, e.ino, e.idx, e.hash FROM extents e JOIN inodes i ON i.ino = e.ino WHERE i.nlink > 0').run(id);
        const counted = this.db
          .prepare("SELECT COUNT(*) - 1 AS n, COALESCE(SUM(CASE WHEN (mode & 61440) = 32768 THEN size END), 0) AS bytes FROM cp_inodes WHERE cp = ?")
          .get(id) as { n: number; bytes: number };
        this.db.prepare('UPDATE checkpoints SET file_count = ?, total_bytes = ? WHERE id = ?').run(counted.n, counted.bytes, id);
      }
      if (!opts.internal) {
        this.journal.append('checkpoint_save', null, {
          details: { checkpoint: name, auto: !!opts.auto, description: opts.description ?? null, ...(opts.run !== undefined ? { run: opts.run } : {}) },
        });
      }
      return this.get(name);
    });
    // Retention runs after each automatic checkpoint, in a transaction of its own (a restore runs it after its own).
    if (opts.auto && !opts.internal && !this.db.inTransaction) this.applyRetention();
    return row;
  }

  /**
   * Puts the tree back as it was at `name`, after saving the current tree as an automatic
   * checkpoint. A restore that would grow usage past a quota is refused with nothing changed,
   * unless `force` (the quotas then refuse further growth, as for any vault over its quota).
   */
  restore(name: string, opts: { force?: boolean } = {}): { checkpoint: CheckpointRow; undo: CheckpointRow } {
    const restored = writeTxn(this.db, () => {
      const cp = this.get(name);
      const before = this.usage();
      const undo = this.save({ auto: true, prefix: 'before-restore', description: `automatic, before restoring ${name}` });
      for (const t of ['inodes', 'dentries', 'symlinks', 'extents']) this.db.exec(`DELETE FROM ${t}`);
      this.db.prepare(`INSERT INTO inodes (${INODE_COLS}) SELECT ${INODE_COLS} FROM cp_inodes WHERE cp = ?`).run(cp.id);
      this.db.prepare('INSERT INTO dentries (parent, name, ino) SELECT parent, name, ino FROM cp_dentries WHERE cp = ?').run(cp.id);
      this.db.prepare('INSERT INTO symlinks (ino, target) SELECT ino, target FROM cp_symlinks WHERE cp = ?').run(cp.id);
      this.db.prepare('INSERT INTO extents (ino, idx, hash) SELECT ino, idx, hash FROM cp_extents WHERE cp = ?').run(cp.id);
      // Inode numbers are never reused, so next_ino stays where it is. The checkpoint's totals are
      // the restored tree's (counted as the live counters count, when it was saved or edited).
      this.db.prepare('UPDATE counters SET live_bytes = ?, live_inodes = ? WHERE id = 1').run(cp.total_bytes, cp.file_count);
      // Throwing here rolls the whole transaction back, the undo checkpoint included.
      if (!opts.force) this.quotas.checkReplace(before, this.usage(), name);
      this.journal.append('checkpoint_restore', null, { details: { checkpoint: name, undo: undo.name, ...(opts.force ? { force: true } : {}) } });
      return { checkpoint: cp, undo };
    });
    if (!this.db.inTransaction) this.applyRetention();
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
    return writeTxn(this.db, () => {
      const src = this.get(from);
      const id = (this.db.prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'checkpoints'), 0) + 1 AS id").get() as { id: number }).id;
      const name = `.${prefix}-${stamp(Date.now())}-${id}`;
      this.db
        .prepare('INSERT INTO checkpoints (id, name, created_ms, description, auto, file_count, total_bytes, journal_seq) SELECT ?, ?, ?, description, 1, 0, 0, journal_seq FROM checkpoints WHERE id = ?')
        .run(id, name, Date.now(), src.id);
      this.db.prepare(`INSERT INTO cp_inodes (cp, ${INODE_COLS}) SELECT ?, ${INODE_COLS} FROM cp_inodes WHERE cp = ?`).run(id, src.id);
      this.db.prepare('INSERT INTO cp_dentries (cp, parent, name, ino) SELECT ?, parent, name, ino FROM cp_dentries WHERE cp = ?').run(id, src.id);
      this.db.prepare('INSERT INTO cp_symlinks (cp, ino, target) SELECT ?, ino, target FROM cp_symlinks WHERE cp = ?').run(id, src.id);
      this.db.prepare('INSERT INTO cp_extents (cp, ino, idx, hash) SELECT ?, ino, idx, hash FROM cp_extents WHERE cp = ?').run(id, src.id);
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
    return writeTxn(this.db, () => {
      const cp = this.get(name);
      // Its chunk references change under the counts: it is counted again when next needed.
      this.refs.uncount(cp.id);
      this.edit(cp.id, edits, source);
      if (journalSeq !== undefined) this.db.prepare('UPDATE checkpoints SET journal_seq = ? WHERE id = ?').run(journalSeq, cp.id);
      return this.get(name);
    });
  }

  /** Makes `edits` in checkpoint `id`'s rows (inside the caller's transaction), then counts its files and bytes again. */
  private edit(id: number, edits: Edit[], source: CheckpointRow | 'live'): void {
    const db = this.db;
    const child = db.prepare<[number, number, string], { ino: number }>('SELECT ino FROM cp_dentries WHERE cp = ? AND parent = ? AND name = ?');
    const modeIn = db.prepare<[number, number], { mode: number }>('SELECT mode FROM cp_inodes WHERE cp = ? AND ino = ?');
    const links = db.prepare<[number, number], { n: number }>('SELECT COUNT(*) AS n FROM cp_dentries WHERE cp = ? AND ino = ?');
    const inode = db.prepare<[number, number], { mode: number; nlink: number }>('SELECT mode, nlink FROM cp_inodes WHERE cp = ? AND ino = ?');
    const children = db.prepare<[number, number], { name: string; ino: number }>('SELECT name, ino FROM cp_dentries WHERE cp = ? AND parent = ?');
    const unlink = db.prepare('DELETE FROM cp_dentries WHERE cp = ? AND parent = ? AND name = ?');
    const link = db.prepare('INSERT INTO cp_dentries (cp, parent, name, ino) VALUES (?, ?, ?, ?)');
    const forget = ['cp_inodes', 'cp_symlinks', 'cp_extents'].map((t) => db.prepare(`DELETE FROM ${t} WHERE cp = ? AND ino = ?`));
    const [inodes, symlinks, extents, where] = source === 'live' ? ['inodes', 'symlinks', 'extents', ''] : ['cp_inodes', 'cp_symlinks', 'cp_extents', ` AND cp = ${source.id}`];
    const copy = [
      db.prepare(`INSERT INTO cp_inodes (cp, ${INODE_COLS}) SELECT ?, ${INODE_COLS} FROM ${inodes} WHERE ino = ?${where}`),
      db.prepare(`INSERT INTO cp_symlinks (cp, ino, target) SELECT ?, ino, target FROM ${symlinks} WHERE ino = ?${where}`),
      db.prepare(`INSERT INTO cp_extents (cp, ino, idx, hash) SELECT ?, ino, idx, hash FROM ${extents} WHERE ino = ?${where}`),
    ];
    const sourceMode = db.prepare<[number], { mode: number }>(`SELECT mode FROM ${inodes} WHERE ino = ?${where}`);
    const keepDir = db.prepare(
      `UPDATE cp_inodes SET (mode, uid, gid, mtime_s, mtime_ns) = (SELECT mode, uid, gid, mtime_s, mtime_ns FROM ${inodes} WHERE ino = ?${where}) WHERE cp = ? AND ino = ?`,
    );
    const isDir = (mode: number | undefined) => (mode ?? 0) >> 12 === 4;
    const dropInode = (ino: number) => {
      // Another entry can name it only if it is a file with hard links (entries are not indexed by
      // inode: looking for one reads the checkpoint's entries, so only then).
      const n = inode.get(id, ino);
      if (n && n.nlink > 1 && !isDir(n.mode) && links.get(id, ino)!.n > 0) return;
      for (const c of children.all(id, ino)) {
        unlink.run(id, ino, c.name);
        dropInode(c.ino);
      }
      for (const f of forget) f.run(id, ino);
    };
    for (const e of edits) {
      const parts = e.path.split('/').filter(Boolean);
      const leaf = parts.pop();
      if (leaf === undefined) continue;
      let parent = 1;
      for (const c of parts) {
        const next = child.get(id, parent, c);
        if (!next) throw new AvfsError('Internal', `editing a checkpoint: ${e.path} has no parent ${c}`, { path: e.path });
        parent = next.ino;
      }
      const old = child.get(id, parent, leaf)?.ino;
      if (old !== undefined && e.ino !== null && isDir(modeIn.get(id, old)?.mode) && isDir(sourceMode.get(e.ino)?.mode)) {
        // A directory kept: its entries stay, its attributes are the source's.
        keepDir.run(e.ino, id, old);
        continue;
      }
      if (old !== undefined) {
        unlink.run(id, parent, leaf);
        dropInode(old);
      }
      if (e.ino === null) continue;
      for (const f of forget) f.run(id, e.ino);
      for (const c of copy) c.run(id, e.ino);
      link.run(id, parent, leaf, e.ino);
    }
    const counted = db
      .prepare("SELECT COUNT(*) - 1 AS n, COALESCE(SUM(CASE WHEN (mode & 61440) = 32768 THEN size END), 0) AS bytes FROM cp_inodes WHERE cp = ?")
      .get(id) as { n: number; bytes: number };
    db.prepare('UPDATE checkpoints SET file_count = ?, total_bytes = ? WHERE id = ?').run(counted.n, counted.bytes, id);
  }

  /** The tree's usage as the quotas count it; the largest file (a scan) only when a quota bounds it. */
  private usage(): TreeUsage {
    const largest = this.quotas.get().max_file_size_mb === null ? '0' : '(SELECT COALESCE(MAX(size), 0) FROM inodes WHERE (mode & 61440) = 32768)';
    const r = this.db.prepare(`SELECT c.live_bytes AS bytes, c.live_inodes AS files, ${largest} AS largest FROM counters c WHERE id = 1`).get() as {
      bytes: number;
      files: number;
      largest: number;
    };
    return { bytes: r.bytes, files: r.files, largestFile: r.largest };
  }

  delete(name: string, why?: { retention: true }): CheckpointRow {
    return writeTxn(this.db, () => {
      const cp = this.get(name);
      this.refs.uncount(cp.id);
      for (const t of ['cp_inodes', 'cp_dentries', 'cp_symlinks', 'cp_extents']) this.db.prepare(`DELETE FROM ${t} WHERE cp = ?`).run(cp.id);
      this.db.prepare('DELETE FROM checkpoints WHERE id = ?').run(cp.id);
      if (!name.startsWith('.')) this.journal.append('checkpoint_delete', null, { details: { checkpoint: name, ...why } });
      return cp;
    });
  }

  /** The automatic checkpoints users see, oldest first: what retention applies to. */
  private automatic(): CheckpointRow[] {
    return this.db.prepare<[], CheckpointRow>("SELECT * FROM checkpoints WHERE auto = 1 AND name NOT LIKE '.%' ORDER BY id").all();
  }

  retention(): RetentionSettings {
    return readRetention(this.db);
  }

  /** Sets the vault's retention (journaled). It applies from the next automatic checkpoint or prune on. */
  setRetention(settings: RetentionSettings): RetentionSettings {
    writeTxn(this.db, () => writeRetention(this.db, this.journal, settings));
    return this.retention();
  }

  /** What the retention keeps, holds and would prune now. */
  plan(now = Date.now()): RetentionPlan {
    return planRetention(this.db, this.automatic(), this.retention(), now);
  }

  /**
   * Deletes the automatic checkpoints the retention does not keep or hold, in one transaction,
   * with what they held alone (`extra`: the chunks forks reference). Dry run: says, deletes nothing.
   */
  prune(opts: { dryRun?: boolean; extraRefs?: ExtraRefs } = {}): PruneResult {
    if (!this.db.readonly) this.refs.sync();
    const run = () => {
      const plan = this.plan();
      const freed = this.refs.current() ? this.refs.together(plan.prune.map((c) => c.id), opts.extraRefs) : 0;
      if (!opts.dryRun) for (const c of plan.prune) this.delete(c.name, { retention: true });
      return { ...plan, freed_bytes: freed, dry_run: !!opts.dryRun };
    };
    return opts.dryRun && this.db.readonly ? run() : writeTxn(this.db, run);
  }

  /** Prunes what the retention no longer keeps (after an automatic checkpoint). Deletes only: the byte counts are left for later. */
  private applyRetention(): void {
    writeTxn(this.db, () => {
      for (const c of this.plan().prune) this.delete(c.name, { retention: true });
    });
  }

  /** Bytes each checkpoint holds alone, by id (absent: 0); null when the counts cannot be brought up to date (a read-only vault). */
  aloneBytes(extraRefs?: ExtraRefs): Map<number, number> | null {
    // A vault of an older schema opened read-only has no counts at all.
    if (!tableNames(this.db).has('cp_refs')) return null;
    if (!this.db.readonly) this.refs.sync();
    return this.refs.current() ? this.refs.alone(extraRefs) : null;
  }
}
