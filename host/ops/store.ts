/** Whole-vault operations: quotas, stats, garbage collection (across forks), the audit trail. */
import type { AuditEntry } from '../protocol/changes';
import type { QuotaStatus } from '../protocol/vault';
import { descendantRefs } from '../store/forks';
import { collectGarbage } from '../store/gc';
import type { Vault } from '../store/vault';
import type { OpsTable } from './context';
import { humanBytes } from './format';
import { reading, writing } from './vaultAccess';

function quotaStatus(v: Vault): QuotaStatus {
  const q = v.inodes.quotas.get();
  const c = v.inodes.counters();
  const pct = (used: number, limit: number | null) => (limit === null || limit === 0 ? null : Math.round((used / limit) * 1000) / 10);
  return {
    ...q,
    current_size_bytes: c.liveBytes,
    current_size_human: humanBytes(c.liveBytes),
    current_files: c.liveInodes,
    size_usage_percent: pct(c.liveBytes, q.max_size_mb === null ? null : q.max_size_mb * 1024 * 1024),
    files_usage_percent: pct(c.liveInodes, q.max_files),
  };
}

export const storeOps = {
  'quota/get': (ctx, p) => reading(ctx, p.vault, quotaStatus),

  'quota/set': (ctx, p) =>
    writing(ctx, p.vault, (v) =>
      v.store.write(() => {
        v.inodes.quotas.set(p.key, p.value);
        v.journal.append('quota_set', null, { details: { key: p.key, value: p.value } });
        return { action: 'set' as const, key: p.key, value: p.value };
      }),
    ),

  'quota/clear': (ctx, p) =>
    writing(ctx, p.vault, (v) =>
      v.store.write(() => {
        v.inodes.quotas.clear(p.key);
        v.journal.append('quota_clear', null, { details: { key: p.key } });
        return { action: 'clear' as const, key: p.key };
      }),
    ),

  'vault/stats': (ctx, p) =>
    reading(ctx, p.vault, (v) => {
      const types = v.store.countByType();
      const chunks = v.store.chunkStats();
      return {
        files: types.files,
        directories: types.directories,
        symlinks: types.symlinks,
        total_size_bytes: v.inodes.counters().liveBytes,
        content_chunks: chunks.count,
        stored_bytes: chunks.bytes,
        checkpoints: v.store.checkpointRows().length,
        journal_entries: v.journal.count(),
        size_on_disk: ctx.home.sizeOnDisk(v.name),
      };
    }),

  /** Keeps every chunk that a fork (or a fork's fork) still reads from this vault. */
  'vault/gc': (ctx, p) =>
    writing(ctx, p.vault, (v) => collectGarbage(v.store, { dryRun: p.dry_run, extraRefs: () => descendantRefs(ctx.home, v.name) })),

  'audit/list': (ctx, p) =>
    reading(ctx, p.vault, (v) => {
      const { rows, total } = v.journal.recent(p.since_ms, p.limit);
      const entries: AuditEntry[] = rows.map((r) => ({
        id: r.seq,
        timestamp: new Date(r.ts_ms).toISOString(),
        operation: r.op,
        path: r.path,
        path2: r.path2,
        size: r.size,
        surface: r.surface,
        details: r.details === null ? null : (JSON.parse(r.details) as unknown),
      }));
      return { entries, total_count: total };
    }),
} satisfies Partial<OpsTable>;
