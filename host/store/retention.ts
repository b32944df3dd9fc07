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
import type { MetaStore } from './backend';
import type { Journal } from './journal';

const SETTINGS_KEY = 'checkpoint_retention';
const RUN_ENDS = ['exec_result', 'exec_failed'];

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

export function readRetention(db: MetaStore): RetentionSettings {
  const raw = db.getMeta(SETTINGS_KEY);
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

export function writeRetention(db: MetaStore, journal: Journal, settings: RetentionSettings): void {
  db.setMeta(SETTINGS_KEY, JSON.stringify(settings));
  journal.append('checkpoint_retention', null, { details: settings });
}

/** The names the vault's settings hold (a project's base, the base of `vault create --from`). */
function namedBySettings(db: MetaStore): Set<string> {
  return new Set(db.metaWithPrefix('').filter((r) => r.key.endsWith('checkpoint')).map((r) => r.value));
}

/** Names restores since `since` restored or saved as undo points, newest first until older. */
function recentlyRestored(db: MetaStore, since: number): Set<string> {
  const out = new Set<string>();
  for (const r of db.journalRecent(since, Number.MAX_SAFE_INTEGER).rows) {
    if (r.op !== 'checkpoint_restore') continue;
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
function runHold(db: MetaStore, row: CheckpointRow, since: number, recent: string): string | null {
  const next = db.journalAfter(row.journal_seq, 1)[0];
  const save = next && next.seq === row.journal_seq + 1 && next.op === 'checkpoint_save' ? next : undefined;
  let run: string | null = null;
  try {
    const d = JSON.parse(save?.details ?? '{}') as { run?: unknown };
    if (typeof d.run === 'string') run = d.run;
  } catch {
    /* an entry another version wrote */
  }
  const end = db.journalAfter(row.journal_seq).find((r) => {
    if (!RUN_ENDS.includes(r.op)) return false;
    try {
      const d = JSON.parse(r.details ?? '{}') as { id?: unknown; checkpoint?: unknown };
      return d.id === (run ?? '') || d.checkpoint === row.name;
    } catch {
      return false;
    }
  });
  if (!end) return run !== null && save ? `the run ${run} that took it has not ended` : null;
  if (end.ts_ms >= since) return `its run ended less than ${recent} ago`;
  return null;
}

/** What the settings keep, hold and prune now. `autos`: the automatic checkpoints, oldest first. */
export function planRetention(db: MetaStore, autos: CheckpointRow[], settings: RetentionSettings, now = Date.now()): RetentionPlan {
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
