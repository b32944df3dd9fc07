/** Checkpoints: save, list, restore, diff, and reading a checkpoint's tree (the contract: ../methods.ts). */
import { z } from 'zod';
import { ChangeSummary, CheckpointInfo, RestoreResult } from '../changes';
import { DirEntry, Stat } from '../vault';
import { Base64, VaultRef, define } from './define';

export const CHECKPOINT_METHODS = {
  'checkpoint/save': define(VaultRef.extend({ name: z.string().optional(), description: z.string().optional() }), CheckpointInfo, 'save the current tree (metadata only)'),
  'checkpoint/list': define(VaultRef, z.object({ checkpoints: z.array(CheckpointInfo) }), 'checkpoints, oldest first'),
  'checkpoint/info': define(VaultRef.extend({ name: z.string() }), CheckpointInfo, 'one checkpoint'),
  'checkpoint/restore': define(
    VaultRef.extend({ name: z.string(), force: z.boolean().default(false) }),
    RestoreResult,
    'put the tree back as it was (the current tree is saved first, as undo_checkpoint)',
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
