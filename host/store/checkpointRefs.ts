/**
 * What checkpoints hold alone: the bytes of the chunks that no other tree references (not the
 * live tree, not another checkpoint, not a fork's trees), which is what deleting them and then
 * running gc would give back.
 *
 * Kept cheap by a count, per chunk hash, of the checkpoints that reference it (`cp_refs`), with
 * the sum of their ids, which is the one checkpoint's id when the count is 1. The counts are
 * brought up to date on demand: a checkpoint saved since is counted then (O(its extents), so a
 * save or a restore pays nothing for them), and `delete` uncounts one that was counted. Reading
 * what every checkpoint holds alone then costs O(live extents + hashes one checkpoint alone
 * references), never a scan of every checkpoint's extents. Should checkpoints disappear some other
 * way (a file from another version), the counts are rebuilt from the extents, once.
 */
import type { CheckpointRefCounts } from './backend';
import type { Db } from './db';
import { tableNames, writeTxn } from './db';
import type { ExtraRefs } from './gc';

/** The SQLite backend's counts (tables cp_refs and cp_counted). */
export class CheckpointRefs implements CheckpointRefCounts {
  /** `extents()`: where every checkpoint's extents are read from (a restore's parked undo tree is in other tables: sqlite.ts). */
  constructor(
    private readonly db: Db,
    private readonly extents: () => string = () => 'cp_extents',
  ) {}

  available(): boolean {
    return tableNames(this.db).has('cp_refs');
  }

  /** Whether the counts include every checkpoint and nothing else (reads only). */
  current(): boolean {
    return (
      this.db.prepare('SELECT 1 FROM checkpoints WHERE id NOT IN (SELECT cp FROM cp_counted) LIMIT 1').get() === undefined &&
      this.db.prepare('SELECT 1 FROM cp_counted WHERE cp NOT IN (SELECT id FROM checkpoints) LIMIT 1').get() === undefined
    );
  }

  /** Counts the checkpoints saved since the last call (a write transaction). */
  sync(): void {
    if (this.current()) return;
    writeTxn(this.db, () => {
      const lost = this.db.prepare('SELECT 1 FROM cp_counted WHERE cp NOT IN (SELECT id FROM checkpoints) LIMIT 1').get() !== undefined;
      const counted = (this.db.prepare('SELECT COUNT(*) AS n FROM cp_counted').get() as { n: number }).n;
      if (lost || counted === 0) {
        this.db.exec('DELETE FROM cp_refs; DELETE FROM cp_counted');
        // One pass grouped by hash: a hash's distinct checkpoints are counted and their ids summed.
        this.db.exec(`INSERT INTO cp_refs (hash, n, ids) SELECT hash, COUNT(DISTINCT cp), SUM(DISTINCT cp) FROM ${this.extents()} GROUP BY hash`);
        this.db.exec('INSERT INTO cp_counted (cp) SELECT id FROM checkpoints');
        return;
      }
      const add = this.db.prepare<[number]>(
        `INSERT INTO cp_refs (hash, n, ids) SELECT DISTINCT hash, 1, cp FROM ${this.extents()} WHERE cp = ? AND true ON CONFLICT (hash) DO UPDATE SET n = n + 1, ids = ids + excluded.ids`,
      );
      const mark = this.db.prepare<[number]>('INSERT INTO cp_counted (cp) VALUES (?)');
      for (const { id } of this.db.prepare<[], { id: number }>('SELECT id FROM checkpoints WHERE id NOT IN (SELECT cp FROM cp_counted)').all()) {
        add.run(id);
        mark.run(id);
      }
    });
  }

  /** Takes checkpoint `id` out of the counts, if it is in them; inside the transaction that deletes its extents, before it does. */
  uncount(id: number): void {
    if (this.db.prepare('DELETE FROM cp_counted WHERE cp = ?').run(id).changes === 0) return;
    const src = this.extents();
    this.db.prepare(`DELETE FROM cp_refs WHERE n <= 1 AND hash IN (SELECT hash FROM ${src} WHERE cp = ?)`).run(id);
    this.db.prepare(`UPDATE cp_refs SET n = n - 1, ids = ids - ? WHERE hash IN (SELECT hash FROM ${src} WHERE cp = ?)`).run(id, id);
  }

  /** Fills temp.refs_keep with the hashes the live tree and `extra` reference. */
  private keepLive(extra: ExtraRefs | undefined): void {
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS refs_keep (hash BLOB PRIMARY KEY) WITHOUT ROWID');
    this.db.exec('DELETE FROM temp.refs_keep');
    this.db.exec('INSERT OR IGNORE INTO temp.refs_keep SELECT hash FROM extents');
    if (extra) {
      const ins = this.db.prepare('INSERT OR IGNORE INTO temp.refs_keep (hash) VALUES (?)');
      for (const h of extra()) ins.run(h);
    }
  }

  /**
   * Bytes each checkpoint holds alone, by checkpoint id (absent: 0), as this vault file stores
   * them (a fork's chunks read from its parent are not this file's to free). Call after sync.
   */
  alone(extra?: ExtraRefs): Map<number, number> {
    this.keepLive(extra);
    const rows = this.db
      .prepare<[], { cp: number; bytes: number }>(
        'SELECT r.ids AS cp, SUM(LENGTH(c.data)) AS bytes FROM cp_refs r JOIN chunks c ON c.hash = r.hash WHERE r.n = 1 AND r.hash NOT IN (SELECT hash FROM temp.refs_keep) GROUP BY r.ids',
      )
      .all();
    this.db.exec('DELETE FROM temp.refs_keep');
    return new Map(rows.map((r) => [r.cp, r.bytes]));
  }

  /** Bytes the checkpoints `ids` hold together and nothing else does: what deleting all of them frees. Call after sync. */
  together(ids: readonly number[], extra?: ExtraRefs): number {
    if (ids.length === 0) return 0;
    this.keepLive(extra);
    this.db.exec('CREATE TEMP TABLE IF NOT EXISTS refs_set (cp INTEGER PRIMARY KEY)');
    this.db.exec('DELETE FROM temp.refs_set');
    const ins = this.db.prepare('INSERT OR IGNORE INTO temp.refs_set (cp) VALUES (?)');
    for (const id of ids) ins.run(id);
    const r = this.db
      .prepare<[], { bytes: number }>(
        `SELECT COALESCE(SUM(LENGTH(c.data)), 0) AS bytes
           FROM (SELECT hash, COUNT(*) AS k FROM (SELECT DISTINCT cp, hash FROM ${this.extents()} WHERE cp IN (SELECT cp FROM temp.refs_set)) GROUP BY hash) s
           JOIN cp_refs r ON r.hash = s.hash JOIN chunks c ON c.hash = s.hash
          WHERE s.k = r.n AND s.hash NOT IN (SELECT hash FROM temp.refs_keep)`,
      )
      .get()!;
    this.db.exec('DELETE FROM temp.refs_keep; DELETE FROM temp.refs_set');
    return r.bytes;
  }
}
