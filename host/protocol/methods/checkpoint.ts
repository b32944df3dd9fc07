/** Checkpoints: save, list, restore, diff, and reading a checkpoint's tree (the contract: ../methods.ts). */
import { z } from 'zod';
import { ChangeSummary, CheckpointInfo, RestoreResult } from '../changes';
import { KEEP_LAST_MAX } from '../retention';
import { DirEntry, Stat } from '../vault';
import { Base64, VaultRef, define } from './define';
import { GcResult } from './store';

export const RetentionInfo = z.object({
  keep_last: z.number().nullable().describe('the last N automatic checkpoints are kept (null: no such rule)'),
  max_age_ms: z.number().nullable().describe('automatic checkpoints younger than this are kept (null: no such rule)'),
  max_age: z.string().nullable().describe('max_age_ms as written: 30m, 12h, 7d, 2w'),
  off: z.boolean().describe('no rule: every automatic checkpoint is kept'),
  hold_recent_ms: z.number().describe("a run's restore point is held this long after the run ended, whatever the rules (a pending run's until it ends)"),
  hold_recent: z.string().describe('hold_recent_ms as written: 10m, 1h, 0'),
  description: z.string(),
});
export type RetentionInfo = z.infer<typeof RetentionInfo>;

export const PruneResult = z.object({
  dry_run: z.boolean(),
  retention: RetentionInfo,
  pruned: z.array(CheckpointInfo).describe('deleted (dry run: would be), oldest first'),
  held: z.array(z.object({ name: z.string(), reason: z.string() })).describe('past the retention but kept: a pending or recent run names it, a recent restore, a base checkpoint'),
  kept: z.number().describe('automatic checkpoints the retention keeps'),
  freed_size: z.number().describe('bytes the pruned checkpoints held alone (together): what gc gives back for them'),
  freed_size_human: z.string(),
  gc: GcResult.nullable().describe('with gc: the gc run after the prune (dry run: what it would find)'),
});
export type PruneResult = z.infer<typeof PruneResult>;

export const CHECKPOINT_METHODS = {
  'checkpoint/save': define(VaultRef.extend({ name: z.string().optional(), description: z.string().optional() }), CheckpointInfo, 'save the current tree (metadata only)'),
  'checkpoint/list': define(VaultRef, z.object({ checkpoints: z.array(CheckpointInfo) }), 'checkpoints, oldest first'),
  'checkpoint/info': define(VaultRef.extend({ name: z.string() }), CheckpointInfo, 'one checkpoint'),
  'checkpoint/restore': define(
    VaultRef.extend({ name: z.string(), force: z.boolean().default(false) }),
    RestoreResult,
    'put the tree back as it was (the current tree is saved first, as undo_checkpoint)',
  ),
  'checkpoint/retention': define(
    VaultRef.extend({
      keep_last: z.number().int().min(1).max(KEEP_LAST_MAX).nullable().optional().describe('keep the last N automatic checkpoints (null: drop that rule)'),
      max_age: z.string().nullable().optional().describe('keep automatic checkpoints younger than this: 30m, 12h, 7d, 2w (null: drop that rule)'),
      off: z.boolean().default(false).describe('drop both rules: keep every automatic checkpoint'),
      hold_recent: z.string().optional().describe("how long after a run ended its restore point stays held: 10m, 1h, 0 (only while it runs)"),
    }),
    RetentionInfo,
    'the vault\'s retention of automatic checkpoints; with keep_last, max_age, hold_recent or off, set it (applied after each automatic checkpoint, and by checkpoint/prune)',
  ),
  'checkpoint/prune': define(
    VaultRef.extend({ dry_run: z.boolean().default(false), gc: z.boolean().default(false).describe('then run gc, giving the space back') }),
    PruneResult,
    'delete the automatic checkpoints the retention does not keep (named ones stay; held ones are listed with why)',
  ),
  'checkpoint/delete': define(VaultRef.extend({ name: z.string() }), z.object({ action: z.literal('delete'), name: z.string() }), 'delete a checkpoint'),
  'checkpoint/diff': define(
    VaultRef.extend({ from: z.string(), to: z.string().default('current'), patch: z.boolean().default(false) }),
    ChangeSummary,
    'what changed between two checkpoints, or from one to the current tree',
  ),
  'checkpoint/stat': define(VaultRef.extend({ name: z.string(), path: z.string() }), Stat, 'a path as it was at a checkpoint'),
  'checkpoint/readDirectory': define(VaultRef.extend({ name: z.string(), path: z.string() }), z.object({ path: z.string(), entries: z.array(DirEntry) }), 'a directory as it was at a checkpoint'),
  'checkpoint/readFile': define(
    VaultRef.extend({ name: z.string(), path: z.string() }),
    z.object({ path: z.string(), size: z.number(), data: Base64 }),
    'a file as it was at a checkpoint',
  ),
} as const;
