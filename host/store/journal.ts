/**
 * The change journal: one row per mutation (what, which path, from which surface), append-only
 * and bounded. It is the vault's audit trail; `avfs audit` reads it.
 */
import type { JournalOp } from '../protocol/changes';
import type { JournalRow, MetaStore } from './backend';

export type Surface = 'cli' | 'fuse' | 'rpc' | 'editor' | 'exec' | 'system';

export type JournalEntry = JournalRow;

export const DEFAULT_JOURNAL_MAX = 100_000;
const TRIM_EVERY = 1000;

export class Journal {
  constructor(
    private readonly meta: MetaStore,
    private readonly surface: Surface,
  ) {}

  append(op: JournalOp, path: string | null, extra: { path2?: string; size?: number; details?: unknown } = {}): void {
    const seq = this.meta.appendJournal(
      Date.now(),
      op,
      path,
      extra.path2 ?? null,
      extra.size ?? null,
      this.surface,
      extra.details === undefined ? null : JSON.stringify(extra.details),
    );
    if (seq % TRIM_EVERY === 0) this.meta.trimJournal(Number(this.meta.getMeta('journal_max_entries') ?? DEFAULT_JOURNAL_MAX));
  }

  /** The sequence number of the newest entry (0 for none): a mark to look for changes after. */
  lastSeq(): number {
    return this.meta.journalMaxSeq();
  }

  /**
   * Every path a mutation after `seq` named (both paths of a rename, link or copy), or null when
   * that cannot be known from the trail: entries after `seq` were trimmed, or one replaced the
   * tree without naming paths (a restore). What a caller compares two trees at instead of all of it.
   */
  pathsSince(seq: number): string[] | null {
    const first = this.meta.journalFirstAfter(seq);
    if (first === null) return [];
    if (first !== seq + 1) return null;
    const rows = this.meta.journalAfter(seq);
    if (rows.some((r) => r.op === 'checkpoint_restore')) return null;
    const out = new Set<string>();
    for (const r of rows) {
      if (r.path !== null) out.add(r.path);
      if (r.path2 !== null) out.add(r.path2);
    }
    return [...out];
  }

  /** The newest entry's sequence number (0 for an empty journal). */
  maxSeq(): number {
    return this.meta.journalMaxSeq();
  }

  /** Entries after `seq`, oldest first, at most `limit`. */
  after(seq: number, limit?: number): JournalEntry[] {
    return this.meta.journalAfter(seq, limit);
  }

  /** Entries at or after `sinceMs`, newest first, at most `limit`, and how many there are. */
  recent(sinceMs: number, limit: number): { rows: JournalEntry[]; total: number } {
    return this.meta.journalRecent(sinceMs, limit);
  }

  count(): number {
    return this.meta.journalCount();
  }

  /** Whether an entry of one of `ops` names `id` in its details (`details.id`, as exec runs do). Reads the whole trail: not for a hot path. */
  mentions(ops: readonly JournalOp[], id: string): boolean {
    return this.meta.journalMentions(ops, id);
  }
}
