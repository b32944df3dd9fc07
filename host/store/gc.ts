/**
 * Chunk garbage collection: a chunk is kept while anything can still reach it (a live file,
 * and later a checkpoint or a fork's tree); the rest is deleted in one IMMEDIATE transaction,
 * so a concurrent writer either committed its reference first or sees the chunk gone and
 * stores it again. Freed pages are then returned to the file system.
 */
import type { Db } from './db';
import { writeTxn } from './db';

export interface GcStats {
  chunks_total: number;
  /** Chunks nothing references. */
  orphans_found: number;
  /** Chunks deleted (0 with dry run). */
  orphans_deleted: number;
  bytes_freed: number;
  dry_run: boolean;
}

/** References to this vault's chunks held elsewhere (a fork's trees); called inside the gc transaction. */
export type ExtraRefs = () => Iterable<Buffer>;

export function collectGarbage(db: Db, opts: { dryRun?: boolean; extraRefs?: ExtraRefs } = {}): GcStats {
  const tables = ['extents', 'cp_extents'];
  const stats = writeTxn(db, () => {
    db.exec('CREATE TEMP TABLE IF NOT EXISTS gc_keep (hash BLOB PRIMARY KEY) WITHOUT ROWID');
    db.exec('DELETE FROM gc_keep');
    for (const t of tables) db.exec(`INSERT OR IGNORE INTO gc_keep SELECT hash FROM ${t}`);
    if (opts.extraRefs) {
      const ins = db.prepare('INSERT OR IGNORE INTO gc_keep (hash) VALUES (?)');
      for (const h of opts.extraRefs()) ins.run(h);
    }
    const total = (db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number }).n;
    const dead = db
      .prepare('SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(data)), 0) AS bytes FROM chunks WHERE hash NOT IN (SELECT hash FROM gc_keep)')
      .get() as { n: number; bytes: number };
    if (!opts.dryRun) db.exec('DELETE FROM chunks WHERE hash NOT IN (SELECT hash FROM gc_keep)');
    db.exec('DELETE FROM gc_keep');
    return { chunks_total: total, orphans_found: dead.n, orphans_deleted: opts.dryRun ? 0 : dead.n, bytes_freed: dead.bytes, dry_run: !!opts.dryRun };
  });
  if (stats.orphans_deleted > 0) {
    db.pragma('incremental_vacuum');
    db.pragma('wal_checkpoint(TRUNCATE)');
  }
  return stats;
}
