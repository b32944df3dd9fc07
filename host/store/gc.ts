/**
 * Chunk garbage collection: a chunk is kept while anything can still reach it (a live file,
 * and later a checkpoint or a fork's tree); the rest is deleted in one IMMEDIATE transaction,
 * so a concurrent writer either committed its reference first or sees the chunk gone and
 * stores it again. Freed pages are then returned to the file system.
 */
import type { MetaStore } from './backend';

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

export function collectGarbage(meta: MetaStore, opts: { dryRun?: boolean; extraRefs?: ExtraRefs } = {}): GcStats {
  const stats = meta.write(() => {
    const keep = new Set<string>();
    for (const h of meta.referencedHashes()) keep.add(h.toString('hex'));
    if (opts.extraRefs) for (const h of opts.extraRefs()) keep.add(h.toString('hex'));
    const r = meta.chunkSweep(keep, !!opts.dryRun);
    // The damaged mark (host/store/chunks.ts) goes with the chunk it names: once nothing holds it,
    // it is swept, and a write of the same bytes stores them whole again.
    const damaged = /chunk ([0-9a-f]{64})/.exec(meta.getMeta('damaged') ?? '')?.[1];
    if (damaged && !opts.dryRun && !keep.has(damaged)) meta.setMeta('damaged', null);
    return { chunks_total: r.total, orphans_found: r.dead, orphans_deleted: opts.dryRun ? 0 : r.dead, bytes_freed: r.bytes, dry_run: !!opts.dryRun };
  });
  if (stats.orphans_deleted > 0) meta.compact();
  return stats;
}
