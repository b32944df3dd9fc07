/**
 * Per-vault quotas. "Size" is the logical size of the live tree: the sum of the sizes of the
 * regular files reachable now (a hard-linked file counts once; directories, symlinks, checkpoints
 * and old chunks count nothing). "Files" counts every inode but the root: files, directories and
 * symlinks. Checked inside the write's own transaction, so a refused write leaves nothing behind.
 */
import { AvfsError } from '../protocol/errors';
import type { QuotaKey, Quotas } from '../protocol/vault';
import type { MetaStore } from './backend';

export const QUOTA_KEYS: readonly QuotaKey[] = ['max_size_mb', 'max_files', 'max_file_size_mb'];
const MiB = 1024 * 1024;

export class QuotaBook {
  /** Quotas as last read, and the change version they were read at (it moves when another connection commits). */
  private cached: { version: number; quotas: Quotas } | undefined;

  constructor(private readonly meta: MetaStore) {}

  get(): Quotas {
    const version = this.meta.changeVersion();
    if (this.cached?.version === version) return this.cached.quotas;
    const q: Quotas = { max_size_mb: null, max_files: null, max_file_size_mb: null };
    for (const row of this.meta.metaWithPrefix('quota.')) {
      const key = row.key.slice('quota.'.length) as QuotaKey;
      if (QUOTA_KEYS.includes(key)) q[key] = Number(row.value);
    }
    this.cached = { version, quotas: q };
    return q;
  }

  set(key: QuotaKey, value: number): void {
    this.meta.setMeta(`quota.${key}`, String(value));
    this.cached = undefined;
  }

  clear(key: QuotaKey): void {
    this.meta.setMeta(`quota.${key}`, null);
    this.cached = undefined;
  }

  /** Refuses growing the live size by `delta` bytes, or a file to `fileSize` bytes, past the quotas. */
  checkBytes(current: () => number, delta: number, fileSize: number, oldFileSize: number, path: string, q: Quotas = this.get()): void {
    if (q.max_file_size_mb !== null && fileSize > oldFileSize && fileSize > q.max_file_size_mb * MiB) {
      throw quotaError('max_file_size_mb', q.max_file_size_mb * MiB, oldFileSize, fileSize, 'bytes', { path });
    }
    if (q.max_size_mb !== null && delta > 0) {
      const used = current();
      if (used + delta > q.max_size_mb * MiB) throw quotaError('max_size_mb', q.max_size_mb * MiB, used, delta, 'bytes', { path });
    }
  }

  /**
   * Refuses replacing the whole tree (a checkpoint restore) when that grows any usage past its
   * quota, as a write would be refused; usage that is over a quota already but does not grow is
   * let through, as for writes.
   */
  checkReplace(before: TreeUsage, after: TreeUsage, checkpoint: string): void {
    const q = this.get();
    const over = (limit: number | null, b: number, a: number) => limit !== null && a > limit && a > b;
    if (over(q.max_size_mb === null ? null : q.max_size_mb * MiB, before.bytes, after.bytes)) {
      throw quotaError('max_size_mb', q.max_size_mb! * MiB, before.bytes, after.bytes - before.bytes, 'bytes', { checkpoint });
    }
    if (over(q.max_files, before.files, after.files)) throw quotaError('max_files', q.max_files!, before.files, after.files - before.files, 'files', { checkpoint });
    if (over(q.max_file_size_mb === null ? null : q.max_file_size_mb * MiB, before.largestFile, after.largestFile)) {
      throw quotaError('max_file_size_mb', q.max_file_size_mb! * MiB, before.largestFile, after.largestFile, 'bytes', { checkpoint });
    }
  }

  /** Refuses adding `count` inodes past `max_files`. */
  checkInodes(current: () => number, count: number, path: string, q: Quotas = this.get()): void {
    if (q.max_files !== null && count > 0) {
      const used = current();
      if (used + count > q.max_files) throw quotaError('max_files', q.max_files, used, count, 'files', { path });
    }
  }
}

/** What the quotas count, for a whole tree. */
export interface TreeUsage {
  bytes: number;
  files: number;
  largestFile: number;
}

/** Where a refused change was: a path, or a checkpoint being restored (the whole tree). */
type Where = { path: string } | { checkpoint: string };

function quotaError(quota: QuotaKey, limit: number, current: number, requested: number, unit: 'bytes' | 'files', where: Where): AvfsError {
  const what = quota === 'max_file_size_mb' ? `file would grow to ${requested} bytes` : `needs ${requested} more ${unit}, ${current} in use`;
  const at = 'path' in where ? where.path : `restoring checkpoint ${where.checkpoint}`;
  return new AvfsError('QuotaExceeded', `quota exceeded: ${quota} is ${limit} ${unit}; ${what} (${at})`, {
    quota,
    limit,
    current,
    requested,
    unit,
    ...where,
  });
}
