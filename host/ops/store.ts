/** Whole-vault operations: quotas, stats, garbage collection (across forks), the audit trail. */
import type { AuditEntry } from '../protocol/changes';
import type { QuotaStatus } from '../protocol/vault';
import { writeTxn } from '../store/db';
import { descendantRefs } from '../store/forks';
import { collectGarbage } from '../store/gc';
import type { JournalEntry } from '../store/journal';
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
      writeTxn(v.db, () => {
        v.inodes.quotas.set(p.key, p.value);
        v.journal.append('quota_set', null, { details: { key: p.key, value: p.value } });
        return { action: 'set' as const, key: p.key, value: p.value };
      }),
    ),

  'quota/clear': (ctx, p) =>
    writing(ctx, p.vault, (v) =>
      writeTxn(v.db, () => {
        v.inodes.quotas.clear(p.key);
        v.journal.append('quota_clear', null, { details: { key: p.key } });
        return { action: 'clear' as const, key: p.key };
      }),
    ),

  'vault/stats': (ctx, p) =>
    reading(ctx, p.vault, (v) => {
      const count = (sql: string) => (v.db.prepare(sql).get() as { n: number }).n;
      return {
        files: count('SELECT COUNT(*) AS n FROM inodes WHERE (mode & 61440) = 32768'),
        directories: count('SELECT COUNT(*) AS n FROM inodes WHERE (mode & 61440) = 16384 AND ino != 1'),
        symlinks: count('SELECT COUNT(*) AS n FROM inodes WHERE (mode & 61440) = 40960'),
        total_size_bytes: v.inodes.counters().liveBytes,
        content_chunks: count('SELECT COUNT(*) AS n FROM chunks'),
        stored_bytes: count('SELECT COALESCE(SUM(LENGTH(data)), 0) AS n FROM chunks'),
        checkpoints: count('SELECT COUNT(*) AS n FROM checkpoints'),
        journal_entries: count('SELECT COUNT(*) AS n FROM journal'),
        size_on_disk: ctx.home.sizeOnDisk(v.name),
      };
    }),

  /** Keeps every chunk that a fork (or a fork's fork) still reads from this vault. */
  'vault/gc': (ctx, p) =>
    writing(ctx, p.vault, (v) => collectGarbage(v.db, { dryRun: p.dry_run, extraRefs: () => descendantRefs(ctx.home, v.name) })),

  'audit/list': (ctx, p) =>
    reading(ctx, p.vault, (v) => {
      const rows = v.db
        .prepare<[number, number], JournalEntry>('SELECT seq, ts_ms, op, path, path2, size, surface, details FROM journal WHERE ts_ms >= ? ORDER BY seq DESC LIMIT ?')
        .all(p.since_ms, p.limit);
      const total = v.db.prepare<[number], { n: number }>('SELECT COUNT(*) AS n FROM journal WHERE ts_ms >= ?').get(p.since_ms)!.n;
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
