/** Checkpoints, change summaries and the audit trail: the shapes agents and the editor read. */
import { z } from 'zod';
import { CHECKPOINT_NAME_RE } from './names';
import { FileType } from './vault';

export { CHECKPOINT_NAME_RE };
export const CheckpointName = z
  .string()
  .regex(CHECKPOINT_NAME_RE, 'a checkpoint name is 1-128 characters of A-Z a-z 0-9 . _ -, not starting with . or -');

export const CheckpointInfo = z.object({
  name: z.string(),
  created_at: z.string(),
  description: z.string().nullable(),
  auto: z.boolean().describe('made automatically (before a restore, or by proxy exec)'),
  file_count: z.number().describe('entries in the tree: files, directories, symlinks'),
  total_size: z.number().describe('logical bytes of the files in the tree'),
  total_size_human: z.string(),
  alone_size: z
    .number()
    .nullable()
    .describe('bytes of the chunks only this checkpoint references (not the current tree, another checkpoint or a fork): what deleting it and running gc gives back; null where not computed'),
  alone_size_human: z.string().nullable(),
});
export type CheckpointInfo = z.infer<typeof CheckpointInfo>;

const Entry = z.object({
  path: z.string(),
  type: FileType,
  size: z.number(),
  hard_link_to: z.string().optional().describe('an added name of a file that has another name: that name (proxy exec --materialize)'),
  target: z.string().optional().describe("an added symlink's target (proxy exec --materialize)"),
});

export const ChangeSummary = z.object({
  from: z.string().describe('checkpoint name'),
  to: z.string().describe('checkpoint name, or "current" for the live tree'),
  added: z.array(Entry),
  deleted: z.array(Entry),
  modified: z.array(
    z.object({
      path: z.string(),
      type: FileType,
      size_before: z.number(),
      size_after: z.number(),
      content_changed: z.boolean(),
      mode_before: z.string().optional(),
      mode_after: z.string().optional(),
    }),
  ),
  renamed: z.array(z.object({ from: z.string(), to: z.string(), type: FileType, size: z.number(), content_changed: z.boolean() })),
  totals: z.object({
    added: z.number(),
    deleted: z.number(),
    modified: z.number(),
    renamed: z.number(),
    bytes_before: z.number(),
    bytes_after: z.number(),
  }),
  patch: z.string().optional().describe('unified diff of the text files that changed (with --patch)'),
});
export type ChangeSummary = z.infer<typeof ChangeSummary>;

export const RestoreResult = z.object({
  checkpoint: z.string(),
  undo_checkpoint: z.string().describe('the automatic checkpoint of the tree as it was before: restore it to undo'),
  files_restored: z.number(),
  dirs_restored: z.number(),
  changes: ChangeSummary.shape.totals,
  forced: z.boolean().describe('restored past a quota with --force'),
});
export type RestoreResult = z.infer<typeof RestoreResult>;

/**
 * Every operation the change journal records (its `op` column): what `vault/changed` reports and
 * `avfs audit` lists. The store writes only these; the editor switches on them.
 */
export const JOURNAL_OPS = [
  // Files (the vfs, whichever surface: CLI, mount, host, exec).
  'create',
  'mknod',
  'mkdir',
  'symlink',
  'link',
  'write',
  'append',
  'truncate',
  'setattr',
  'unlink',
  'rmdir',
  'rename',
  'copy',
  'import',
  // Checkpoints and forks.
  'checkpoint_save',
  'checkpoint_restore',
  'checkpoint_delete',
  'checkpoint_retention',
  'fork_create',
  'fork_flatten',
  // Vault settings.
  'quota_set',
  'quota_clear',
  // An agent's run (`proxy exec`, exec/run): its audit trail, no file named.
  'exec_request',
  'exec_denied',
  'exec_approval',
  'exec_result',
  'exec_failed',
  // A vault made from a project: its changes applied to the project, the project's synced in.
  'project_apply',
  'project_sync',
] as const;
export const JournalOp = z.enum(JOURNAL_OPS);
export type JournalOp = z.infer<typeof JournalOp>;

/** Whether a journal row's op is one this version knows (a vault written by another version may hold others). */
export function isJournalOp(op: string): op is JournalOp {
  return (JOURNAL_OPS as readonly string[]).includes(op);
}

export const AuditEntry = z.object({
  id: z.number(),
  timestamp: z.string(),
  operation: z.string(),
  path: z.string().nullable(),
  path2: z.string().nullable(),
  size: z.number().nullable(),
  surface: z.string(),
  details: z.unknown().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntry>;
