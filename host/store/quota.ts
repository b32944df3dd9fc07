/**
 * Per-vault quotas. "Size" is the logical size of the live tree: the sum of the sizes of the
 * regular files reachable now (a hard-linked file counts once; directories, symlinks, checkpoints
 * and old chunks count nothing). "Files" counts every inode but the root: files, directories and
 * symlinks. Checked inside the write's own transaction, so a refused write leaves nothing behind.
 */
import { AvfsError } from '../protocol/errors';
import type { QuotaKey, Quotas } from '../protocol/vault';
import type { Db } from './db';

export const QUOTA_KEYS: readonly QuotaKey[] = ['max_size_mb', 'max_files', 'max_file_size_mb'];
const MiB = 1024 * 1024;

export class QuotaBook {
  private readonly readAll;
  private readonly setStmt;
  private readonly clearStmt;
  private readonly dataVersion;
  /** Quotas as last read, and the `data_version` they were read at (it moves when another connection commits). */
  private cached: { version: number; quotas: Quotas } | undefined;

  constructor(private readonly db: Db) {
    this.readAll = db.prepare<[], { key: string; value: string }>("SELECT key, value FROM meta WHERE key LIKE 'quota.%'");
    this.setStmt = db.prepare<[string, string]>('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
    this.clearStmt = db.prepare<[string]>('DELETE FROM meta WHERE key = ?');
    this.dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  }

  get(): Quotas {
    const version = this.dataVersion.get()!;
    if (this.cached?.version === version) return this.cached.quotas;
    const q: Quotas = { max_size_mb: null, max_files: null, max_file_size_mb: null };
    for (const row of this.readAll.all()) {
      const key = row.key.slice('quota.'.length) as QuotaKey;
      if (QUOTA_KEYS.includes(key)) q[key] = Number(row.value);
    }
    this.cached = { version, quotas: q };
    return q;
  }

  set(key: QuotaKey, value: number): void {
    this.setStmt.run(`quota.${key}`, String(value));
    this.cached = undefined;
  }

  clear(key: QuotaKey): void {
    this.clearStmt.run(`quota.${key}`);
    this.cached = undefined;
  }

  /** Refuses growing the live size by `delta` bytes, or a file to `fileSize` bytes, past the quotas. */
  checkBytes(current: () => number, delta: number, fileSize: number, oldFileSize: number, path: string): void {
    const q = this.get();
    if (q.max_file_size_mb !== null && fileSize > oldFileSize && fileSize > q.max_file_size_mb * MiB) {
      throw quotaError('max_file_size_mb', q.max_file_size_mb * MiB, oldFileSize, fileSize, 'bytes', path);
    }
    if (q.max_size_mb !== null && delta > 0) {
      const used = current();
      if (used + delta > q.max_size_mb * MiB) throw quotaError('max_size_mb', q.max_size_mb * MiB, used, delta, 'bytes', path);
    }
  }

  /** Refuses adding `count` inodes past `max_files`. */
  checkInodes(current: () => number, count: number, path: string): void {
    const q = this.get();
    if (q.max_files !== null && count > 0) {
      const used = current();
      if (used + count > q.max_files) throw quotaError('max_files', q.max_files, used, count, 'files', path);
    }
  }
}

function quotaError(
  quota: QuotaKey,
  limit: number,
  current: number,
  requested: number,
  unit: 'bytes' | 'files',
  path: string,
): AvfsError {
  const what = quota === 'max_file_size_mb' ? `file would grow to ${requested} bytes` : `needs ${requested} more ${unit}, ${current} in use`;
  return new AvfsError('QuotaExceeded', `quota exceeded: ${quota} is ${limit} ${unit}; ${what} (${path})`, {
    quota,
    limit,
    current,
    requested,
    unit,
    path,
  });
}
