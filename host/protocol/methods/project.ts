/** Vaults made from a project folder, and the way back (the contract: ../methods.ts; shapes: ../project.ts). */
import { z } from 'zod';
import { ApplyResult, KeepSide, ProjectBase } from '../project';
import { FileType } from '../vault';
import { Backend } from '../vault';
import { HostPath, QuotaValues, VaultRef, define } from './define';

const Target = VaultRef.extend({
  host_path: z.string().min(1).optional().describe('the project folder (absent: the base source)'),
  host_cwd: HostPath.host_cwd,
});

export const PROJECT_METHODS = {
  'project/create': define(
    z.object({
      name: z.string(),
      ...HostPath,
      exclude: z.array(z.string()).default([]),
      quotas: QuotaValues.partial().optional(),
      backend: Backend.optional(),
      use: z.boolean().default(true),
    }),
    z.object({
      created: z.string(),
      current: z.boolean(),
      path: z.string(),
      base: ProjectBase,
      files_imported: z.number(),
      dirs_created: z.number(),
      symlinks: z.number(),
      total_bytes: z.number(),
    }),
    'create a vault from a project folder, recording its base (source, tree, git commit)',
  ),
  'project/base': define(VaultRef, z.object({ vault: z.string(), base: ProjectBase.nullable() }), 'the base a vault was made from (null: none)'),
  'project/apply': define(
    Target.extend({
      dry_run: z.boolean().default(false),
      patch: z.boolean().default(false),
      git_branch: z.string().min(1).optional().describe('commit onto this new branch of the project repository instead'),
      message: z.string().optional().describe('the commit message with git_branch'),
      patch_out: z.string().min(1).optional().describe('write a git-apply-able patch to this host file instead'),
      paths: z.array(z.string().min(1)).optional().describe('apply only these paths (and what is under them): one change, from the editor'),
      keep: KeepSide.optional().describe('settle the conflicts among the paths (every one without paths) by taking this side, then apply'),
    }),
    ApplyResult,
    "bring the vault's changes since its base to the project: three-way, all or nothing",
  ),
  'project/sync': define(
    Target.extend({ dry_run: z.boolean().default(false), patch: z.boolean().default(false) }),
    ApplyResult,
    "bring the project's changes since the base into the vault: three-way, all or nothing",
  ),
  'project/compare': define(
    VaultRef.extend({ other: z.string() }),
    z.object({
      vault: z.string(),
      other: z.string(),
      changes: z.array(z.object({ path: z.string(), type: FileType, status: z.enum(['added', 'deleted', 'modified']) })).describe('the files and symlinks that differ, as other has them against vault'),
    }),
    'compare the live trees of two vaults (two forks of one project: two experiments)',
  ),
} as const;
