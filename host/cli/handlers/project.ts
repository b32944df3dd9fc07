/** Handlers of `avfs apply`, `avfs vault sync` (and `vault create --from`, ./vault.ts): parse → one operation → render. */
import type { Command } from 'commander';
import type { ApplyResult } from '../../protocol/project';
import type { CliContext } from '../context';

const MARK = { apply: ' ', same: '=', conflict: '!' } as const;
const ACTION = { add: 'A', modify: 'M', delete: 'D', rename: 'R' } as const;

function renderPlan(r: ApplyResult, done: string): string {
  const lines = r.changes.map((c) => {
    const mode = c.mode_before !== undefined ? ` (mode ${c.mode_before} -> ${c.mode_after})` : '';
    const name = c.from !== undefined ? `${c.from} -> ${c.path}` : c.path;
    return `${MARK[c.status]}${ACTION[c.action]} ${name}${mode}${c.reason ? `  [conflict${c.conflict ? ` (${c.conflict})` : ''}: ${c.reason}]` : ''}`;
  });
  const t = r.totals;
  const summary = `${t.added} added, ${t.modified} modified, ${t.deleted} deleted, ${t.renamed} renamed, ${t.mode_changed} mode changes, ${t.conflicts} conflicts`;
  const recovered = r.recovered.length ? [`rolled back an interrupted apply first (${r.recovered.join(', ')})`] : [];
  const ignored = r.ignored.length ? [`left out (.git, --exclude, .gitignore): ${r.ignored.length}`] : [];
  const patch = r.patch ? ['', r.patch.trimEnd()] : [];
  return [...recovered, ...lines, ...ignored, `${summary}${done ? `; ${done}` : ''}`, ...patch].join('\n');
}

export const projectHandlers = {
  'project.apply': async (
    ctx: CliContext,
    paths: string[],
    opts: { to?: string; dryRun?: boolean; patch?: boolean; gitBranch?: string; message?: string; patchOut?: string; keep?: 'vault' | 'project' },
    cmd: Command,
  ) => {
    const r = await ctx.call('project/apply', {
      ...ctx.inVault(cmd),
      ...(opts.to !== undefined ? { host_path: opts.to } : {}),
      host_cwd: process.cwd(),
      dry_run: !!opts.dryRun,
      patch: !!opts.patch,
      ...(opts.gitBranch !== undefined ? { git_branch: opts.gitBranch } : {}),
      ...(opts.message !== undefined ? { message: opts.message } : {}),
      ...(opts.patchOut !== undefined ? { patch_out: opts.patchOut } : {}),
      ...(opts.keep !== undefined ? { keep: opts.keep } : {}),
      ...(paths.length > 0 ? { paths } : {}),
    });
    const done = r.git_branch
      ? `committed ${r.git_branch.commit.slice(0, 12)} on the new branch ${r.git_branch.name} (parent ${r.git_branch.parent.slice(0, 12)})`
      : r.patch_out !== undefined
        ? `patch written to ${r.patch_out}`
        : r.dry_run
          ? 'dry run: nothing written'
          : `applied ${r.applied} to ${r.project}`;
    ctx.print(cmd, r, () => renderPlan(r, done));
  },

  'project.sync': async (ctx: CliContext, opts: { from?: string; dryRun?: boolean; patch?: boolean }, cmd: Command) => {
    const r = await ctx.call('project/sync', {
      ...ctx.inVault(cmd),
      ...(opts.from !== undefined ? { host_path: opts.from } : {}),
      host_cwd: process.cwd(),
      dry_run: !!opts.dryRun,
      patch: !!opts.patch,
    });
    ctx.print(cmd, r, () => renderPlan(r, r.dry_run ? 'dry run: nothing written' : `synced ${r.applied} into vault ${r.vault}`));
  },
};
