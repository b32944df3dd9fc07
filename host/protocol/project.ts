/**
 * A vault made from a project folder, and the way back: the base it remembers (where it came
 * from, the tree it started as, the git commit), and the plan of an apply or a sync (what changes
 * where, and what conflicts). The operations are in methods/project.ts.
 */
import { z } from 'zod';
import { FileType } from './vault';

export const ProjectBase = z.object({
  source: z.string().describe('absolute path of the project folder the vault was made from'),
  checkpoint: z.string().describe('internal checkpoint holding the tree both sides last agreed on'),
  git_commit: z.string().nullable().describe('HEAD of the project repository when the vault was made (null: not a git repository)'),
  git_checkpoint: z.string().nullable().describe('internal checkpoint of the tree as it was at git_commit (what --git-branch counts the changes from); kept while the base moves'),
  git_prefix: z.string().describe('the folder inside its repository ("" at the top, else "sub/dir/")'),
  exclude: z.array(z.string()).describe('gitignore-style patterns left out, besides .git and the project .gitignore files'),
  created_at: z.string(),
  moved_at: z.string().nullable().describe('when an apply or a sync last moved the base forward'),
});
export type ProjectBase = z.infer<typeof ProjectBase>;

export const ChangeAction = z.enum(['add', 'modify', 'delete', 'rename']);
export const ChangeStatus = z.enum(['apply', 'same', 'conflict']);
export const ConflictKind = z
  .enum(['content', 'mode', 'symlink', 'type', 'deleted', 'added', 'rename', 'directory'])
  .describe(
    "content: a file's bytes differ on the two sides; mode: same bytes, other permission bits; symlink: a symlink on either side, pointing elsewhere; type: a file on one side, a directory on the other; deleted: one side removed what the other changed; added: both added it, differently; rename: one side renamed it, the other changed it; directory: one side removed a directory the other added in",
  );
export type ConflictKind = z.infer<typeof ConflictKind>;
export const Conflict = z.object({ path: z.string(), kind: ConflictKind, reason: z.string().describe('what the other side did') });
export type Conflict = z.infer<typeof Conflict>;
export const KeepSide = z.enum(['vault', 'project']).describe("vault: the vault's entry is written into the project; project: the project's entry goes into the vault");

export const PlannedChange = z.object({
  path: z.string().describe('relative to the project folder (for a rename: the new path)'),
  from: z.string().optional().describe('a rename: the old path'),
  action: ChangeAction,
  type: FileType,
  size_before: z.number().optional(),
  size_after: z.number().optional(),
  mode_before: z.string().optional(),
  mode_after: z.string().optional(),
  content_changed: z.boolean(),
  status: ChangeStatus.describe('apply: written; same: the target already holds it; conflict: both sides changed it'),
  reason: z.string().optional().describe('a conflict: what the other side did'),
  conflict: ConflictKind.optional().describe('a conflict: its kind'),
});
export type PlannedChange = z.infer<typeof PlannedChange>;

export const ChangePlan = z.object({
  vault: z.string(),
  project: z.string().describe('absolute path of the project folder'),
  direction: z.enum(['apply', 'sync']).describe('apply: vault to project; sync: project to vault'),
  base: z.string().describe('the base checkpoint the changes are counted from'),
  changes: z.array(PlannedChange),
  conflicts: z.array(Conflict),
  ignored: z.array(z.string()).describe('changed paths left out: .git, the exclude list, .gitignore'),
  totals: z.object({ added: z.number(), modified: z.number(), deleted: z.number(), renamed: z.number(), mode_changed: z.number(), conflicts: z.number() }),
  patch: z.string().optional().describe('unified diff of the text files that change (with patch)'),
});
export type ChangePlan = z.infer<typeof ChangePlan>;

export const ApplyResult = ChangePlan.extend({
  dry_run: z.boolean(),
  applied: z.number().describe('entries written, replaced or removed'),
  new_base: z.string().nullable().describe('the base after the apply (null: it did not move)'),
  git_branch: z.object({ name: z.string(), commit: z.string(), parent: z.string() }).optional(),
  patch_out: z.string().optional().describe('the file the patch was written to'),
  recovered: z.array(z.string()).describe('interrupted applies found in the project and rolled back first'),
});
export type ApplyResult = z.infer<typeof ApplyResult>;
