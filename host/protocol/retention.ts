/**
 * Checkpoint retention: which automatic checkpoints a vault keeps. Pure data and parsing, shared
 * by the store (which applies it), the CLI and the editor (which set it through `checkpoint/retention`).
 */
import { z } from 'zod';
import { AvfsError } from './errors';

/**
 * An automatic checkpoint is kept while it is one of the last `keep_last` automatic ones, or
 * younger than `max_age_ms` (either rule keeps it); both null: retention is off, all are kept.
 */
export const RetentionSettings = z.object({
  keep_last: z.number().int().min(1).nullable().describe('keep the last N automatic checkpoints (null: no such rule)'),
  max_age_ms: z.number().int().min(60_000).nullable().describe('keep automatic checkpoints younger than this (null: no such rule)'),
  hold_recent_ms: z
    .number()
    .int()
    .min(0)
    .describe('a run that ended less than this ago is recent: its restore point is held whatever the rules (a pending run holds it until it ends)'),
});
export type RetentionSettings = z.infer<typeof RetentionSettings>;

/** A run's restore point is held this long after the run ended, unless the vault says otherwise. */
export const DEFAULT_HOLD_RECENT_MS = 10 * 60 * 1000;

/** What a vault without settings keeps. */
export const DEFAULT_RETENTION: RetentionSettings = { keep_last: 50, max_age_ms: null, hold_recent_ms: DEFAULT_HOLD_RECENT_MS };

export const KEEP_LAST_MAX = 1_000_000;
const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const AGE_MAX_MS = 100 * 365 * UNITS.d!;

/** `30m`, `12h`, `7d`, `2w` as milliseconds (`0` too where `zero`); anything else is InvalidInput naming `field`. */
export function parseAge(text: string, field = 'max_age', zero = false): number {
  if (zero && text.trim() === '0') return 0;
  const m = /^([1-9][0-9]{0,8})([mhdw])$/.exec(text.trim());
  const ms = m ? Number(m[1]) * UNITS[m[2]!]! : NaN;
  if (!m || ms > AGE_MAX_MS) {
    throw new AvfsError(
      'InvalidInput',
      `invalid ${field} ${JSON.stringify(text)}: use a whole number of minutes, hours, days or weeks (30m, 12h, 7d, 2w)${zero ? ', or 0' : ''}, at most 100 years`,
      { field, value: text },
    );
  }
  return ms;
}

/** The largest whole unit: 604800000 → `1w`, 90 minutes → `90m`. */
export function formatAge(ms: number): string {
  if (ms === 0) return '0';
  for (const u of ['w', 'd', 'h', 'm']) if (ms % UNITS[u]! === 0) return `${ms / UNITS[u]!}${u}`;
  return `${Math.ceil(ms / 60_000)}m`;
}

export function checkKeepLast(n: number): number {
  if (!Number.isInteger(n) || n < 1 || n > KEEP_LAST_MAX) {
    throw new AvfsError('InvalidInput', `invalid keep-last ${JSON.stringify(n)}: use a whole number from 1 to ${KEEP_LAST_MAX.toLocaleString('en')}`, { field: 'keep_last', value: n });
  }
  return n;
}

/** People's words for a retention: `last 50`, `last 10, or younger than 7d`, `off (all kept)`. */
export function describeRetention(r: RetentionSettings): string {
  const parts = [r.keep_last !== null ? `the last ${r.keep_last}` : '', r.max_age_ms !== null ? `those younger than ${formatAge(r.max_age_ms)}` : ''].filter(Boolean);
  const held = r.hold_recent_ms === 0 ? 'a pending run holds its restore point' : `a run holds its restore point until ${formatAge(r.hold_recent_ms)} after it ended`;
  return parts.length === 0 ? 'off: every automatic checkpoint is kept' : `keeps ${parts.join(' and ')}; ${held}`;
}
