/**
 * Which automatic checkpoints a vault keeps (host/protocol/retention.ts says what the settings
 * mean), and pruning the rest. Named checkpoints and internal ones (a leading dot: proxy exec's
 * baselines, a project's or a `vault create --from` base) are never candidates. A candidate is
 * still held, whatever the settings, when:
 * - the vault's settings name it (`meta` keys ending in `checkpoint`: a base a fork or an apply needs);
 * - it is a run's restore point and the run has not ended, or is recent: ended less than
 *   `hold_recent_ms` ago (its envelope, which says "restore this to undo", is still being read);
 * - a restore less than `hold_recent_ms` ago restored it or saved it as its undo point.
 * What pruning frees is given back by gc (chunks only those checkpoints referenced).
 */
import { DEFAULT_HOLD_RECENT_MS, DEFAULT_RETENTION, formatAge, RetentionSettings } from '../protocol/retention';
import type { CheckpointRow } from './checkpoints';
import type { Db } from './db';
import type { Journal } from './journal';

const SETTINGS_KEY = 'checkpoint_retention';
const RUN_ENDS = "'exec_result', 'exec_failed'";

export interface HeldCheckpoint {
  row: CheckpointRow;
  reason: string;
}

export interface RetentionPlan {
  settings: RetentionSettings;
  /** Automatic checkpoints the settings keep. */
  kept: CheckpointRow[];
  /** Automatic checkpoints past the settings that are held anyway, with why. */
  held: HeldCheckpoint[];
  /** What pruning deletes, oldest first. */
  prune: CheckpointRow[];
}

export function readRetention(db: Db): RetentionSettings {
  const raw = db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(SETTINGS_KEY)?.value;
  if (raw === undefined) return DEFAULT_RETENTION;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  const r = RetentionSettings.safeParse(typeof parsed === 'object' && parsed !== null ? { hold_recent_ms: DEFAULT_HOLD_RECENT_MS, ...parsed } : parsed);
  // Unreadable settings keep everything: pruning on a guess could delete what someone wanted kept.
  return r.success ? r.data : { keep_last: null, max_age_ms: null, hold_recent_ms: DEFAULT_HOLD_RECENT_MS };
}

export function writeRetention(db: Db, journal: Journal, settings: RetentionSettings): void {
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(SETTINGS_KEY, JSON.stringify(settings));
  journal.append('checkpoint_retention', null, { details: settings });
}

/** The names the vault's settings hold (a project's base, the base of `vault create --from`). */
function namedBySettings(db: Db): Set<string> {
  return new Set(db.prepare<[], { value: string }>("SELECT value FROM meta WHERE key LIKE '%checkpoint'").all().map((r) => r.value));
}

/** Names restores since `since` restored or saved as undo points, newest first until older. */
function recentlyRestored(db: Db, since: number): Set<string> {
  const out = new Set<string>();
  const rows = db.prepare<[], { ts_ms: number; details: string | null }>("SELECT ts_ms, details FROM journal WHERE op = 'checkpoint_restore' ORDER BY seq DESC").iterate();
  for (const r of rows) {
    if (r.ts_ms < since) break;
    try {
      const d = JSON.parse(r.details ?? '{}') as { checkpoint?: unknown; undo?: unknown };
      for (const n of [d.checkpoint, d.undo]) if (typeof n === 'string') out.add(n);
    } catch {
      /* an entry another version wrote */
    }
  }
  return out;
}

/**
 * Why a run's restore point is held, or null. The checkpoint's own save entry (journaled right
 * after `journal_seq`) names its run; the run's end is the first exec_result or exec_failed after it
 * naming the run or the checkpoint. A trail trimmed past the save entry holds nothing: the run is
 * long over.
 */
function runHold(db: Db, row: CheckpointRow, since: number, recent: string): string | null {
  const save = db.prepare<[number], { details: string | null }>("SELECT details FROM journal WHERE seq = ? AND op = 'checkpoint_save'").get(row.journal_seq + 1);
  let run: string | null = null;
  try {
    const d = JSON.parse(save?.details ?? '{}') as { run?: unknown };
    if (typeof d.run === 'string') run = d.run;
  } catch {
    /* an entry another version wrote */
  }
  const end = db
    .prepare<[number, string, string], { ts_ms: number }>(
      `SELECT ts_ms FROM journal WHERE seq > ? AND op IN (${RUN_ENDS}) AND (json_extract(details, '$.id') = ? OR json_extract(details, '$.checkpoint') = ?) ORDER BY seq LIMIT 1`,
    )
    .get(row.journal_seq, run ?? '', row.name);
  if (!end) return run !== null && save ? `the run ${run} that took it has not ended` : null;
  if (end.ts_ms >= since) return `its run ended less than ${recent} ago`;
  return null;
}

/** What the settings keep, hold and prune now. `autos`: the automatic checkpoints, oldest first. */
export function planRetention(db: Db, autos: CheckpointRow[], settings: RetentionSettings, now = Date.now()): RetentionPlan {
  const plan: RetentionPlan = { settings, kept: [], held: [], prune: [] };
  if (settings.keep_last === null && settings.max_age_ms === null) return { ...plan, kept: autos };
  const lastFrom = settings.keep_last === null ? Infinity : autos.length - settings.keep_last;
  let named: Set<string> | undefined;
  let restored: Set<string> | undefined;
  autos.forEach((row, i) => {
    const young = settings.max_age_ms !== null && row.created_ms >= now - settings.max_age_ms;
    if (i >= lastFrom || young) return void plan.kept.push(row);
    const since = now - settings.hold_recent_ms;
    const recent = formatAge(settings.hold_recent_ms);
    named ??= namedBySettings(db);
    restored ??= recentlyRestored(db, since);
    const reason = named.has(row.name)
      ? "the vault's settings name it (a base checkpoint)"
      : restored.has(row.name)
        ? `a restore less than ${recent} ago restored it or saved it as its undo point`
        : runHold(db, row, since, recent);
    if (reason !== null) plan.held.push({ row, reason });
    else plan.prune.push(row);
  });
  return plan;
}
