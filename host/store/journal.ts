/**
 * The change journal: one row per mutation (what, which path, from which surface), append-only
 * and bounded. It is the vault's audit trail; `avfs audit` reads it.
 */
import type { JournalOp } from '../protocol/changes';
import type { Db } from './db';

export type Surface = 'cli' | 'fuse' | 'rpc' | 'editor' | 'exec' | 'system';

export interface JournalEntry {
  seq: number;
  ts_ms: number;
  op: string;
  path: string | null;
  path2: string | null;
  size: number | null;
  surface: string;
  details: string | null;
}

export const DEFAULT_JOURNAL_MAX = 100_000;
const TRIM_EVERY = 1000;

export class Journal {
  private readonly insert;
  private readonly trim;
  private readonly maxStmt;

  constructor(
    private readonly db: Db,
    private readonly surface: Surface,
  ) {
    this.insert = db.prepare<[number, string, string | null, string | null, number | null, string, string | null]>(
      'INSERT INTO journal (ts_ms, op, path, path2, size, surface, details) VALUES (?, ?, ?, ?, ?, ?, ?)',
    );
    this.trim = db.prepare<[number]>('DELETE FROM journal WHERE seq <= (SELECT MAX(seq) FROM journal) - ?');
    this.maxStmt = db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key = 'journal_max_entries'");
  }

  append(op: JournalOp, path: string | null, extra: { path2?: string; size?: number; details?: unknown } = {}): void {
    const r = this.insert.run(
      Date.now(),
      op,
      path,
      extra.path2 ?? null,
      extra.size ?? null,
      this.surface,
      extra.details === undefined ? null : JSON.stringify(extra.details),
    );
    if (Number(r.lastInsertRowid) % TRIM_EVERY === 0) {
      const max = Number(this.maxStmt.get()?.value ?? DEFAULT_JOURNAL_MAX);
      this.trim.run(max);
    }
  }

  /** The sequence number of the newest entry (0 for none): a mark to look for changes after. */
  lastSeq(): number {
    return this.db.prepare<[], { s: number }>('SELECT COALESCE(MAX(seq), 0) AS s FROM journal').get()!.s;
  }

  /**
   * Every path a mutation after `seq` named (both paths of a rename, link or copy), or null when
   * that cannot be known from the trail: entries after `seq` were trimmed, or one replaced the
   * tree without naming paths (a restore). What a caller compares two trees at instead of all of it.
   */
  pathsSince(seq: number): string[] | null {
    const first = this.db.prepare<[number], { s: number | null }>('SELECT MIN(seq) AS s FROM journal WHERE seq > ?').get(seq)?.s ?? null;
    if (first === null) return [];
    if (first !== seq + 1) return null;
    if (this.db.prepare<[number]>("SELECT 1 FROM journal WHERE seq > ? AND op = 'checkpoint_restore' LIMIT 1").get(seq)) return null;
    const rows = this.db.prepare<[number], { path: string | null; path2: string | null }>('SELECT path, path2 FROM journal WHERE seq > ?').all(seq);
    const out = new Set<string>();
    for (const r of rows) {
      if (r.path !== null) out.add(r.path);
      if (r.path2 !== null) out.add(r.path2);
    }
    return [...out];
  }

  /** Whether an entry of one of `ops` names `id` in its details (`details.id`, as exec runs do). Reads the whole trail: not for a hot path. */
  mentions(ops: readonly JournalOp[], id: string): boolean {
    const marks = ops.map(() => '?').join(', ');
    return this.db.prepare(`SELECT 1 FROM journal WHERE op IN (${marks}) AND json_extract(details, '$.id') = ? LIMIT 1`).get(...ops, id) !== undefined;
  }
}
