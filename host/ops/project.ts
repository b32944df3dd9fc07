/**
 * Vaults made from a project folder and the way back (`project/*`): create with a base, apply the
 * vault's work to the project (or onto a git branch, or into a patch), sync the project's work
 * into the vault. The three-way rules are in host/project/.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { ApplyResult, ChangePlan, ProjectBase } from '../protocol/project';
import type { Edit } from '../store/checkpoints';
import type { PathChange } from '../store/diff';
import { kindOf } from '../store/inodes';
import { importTree } from '../vfs/transfer';
import { Vfs } from '../vfs/vfs';
import { advanceBase, baseJournalSeq, mustReadBase, readBase, setBaseJournalSeq, writeBase } from '../project/base';
import { commitSteps, recover } from '../project/commit';
import { commitBranch, gitInfo, writePatch } from '../project/git';
import { ProjectIgnore } from '../project/ignore';
import { planApply } from '../project/plan';
import { compareVaults } from '../project/compare';
import { planSync, takeTree } from '../project/sync';
import { refOf, TreeReader } from '../project/trees';
import type { OpsContext, OpsTable } from './context';
import { writing, reading } from './vaultAccess';

/** A project folder given on the host: resolved against the caller's cwd, symlinks resolved, a directory. */
function projectDir(given: string, cwd: string | undefined): string {
  const abs = path.resolve(cwd ?? process.cwd(), given);
  let real: string;
  try {
    real = fs.realpathSync(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new AvfsError(code === 'ENOENT' ? 'NotFound' : 'PermissionDenied', `cannot open the project folder ${abs}: ${code ?? (e as Error).message}`, { path: abs });
  }
  if (!fs.statSync(real).isDirectory()) throw new AvfsError('NotADirectory', `not a folder: ${abs}`, { path: abs });
  return real;
}

function conflictError(plan: ChangePlan): AvfsError {
  const list = plan.conflicts.map((c) => `${c.path} (${c.reason})`);
  return new AvfsError(
    'Conflict',
    `${plan.conflicts.length} path${plan.conflicts.length === 1 ? '' : 's'} changed on both sides since the base; nothing was written: ${list.join(', ')}`,
    { vault: plan.vault, project: plan.project, conflicts: plan.conflicts },
  );
}

const nothingMore = { dry_run: false, applied: 0, new_base: null, recovered: [] as string[] };

/** The base edits of an apply: removals deepest first, then the paths as the vault has them, parents first. */
function partEdits(changes: PathChange[]): Edit[] {
  const gone = changes.filter((c) => c.before && (!c.after || kindOf(c.before.mode) !== kindOf(c.after.mode))).reverse();
  return [...gone.map((c) => ({ path: c.path, ino: null })), ...changes.filter((c) => c.after).map((c) => ({ path: c.path, ino: c.after!.ino }))];
}

/**
 * The paths a `keep` settles: the ones asked for, with the other path of each rename among them
 * (one side of a rename alone would leave the other half a conflict).
 */
function withRenames(plan: ChangePlan, paths: string[]): string[] {
  const asked = paths.map((x) => x.replace(/^\/+|\/+$/g, ''));
  const under = (p: string) => asked.some((a) => p === a || p.startsWith(a + '/'));
  const more = plan.changes.filter((c) => c.action === 'rename' && (under(c.path) || under(c.from!))).flatMap((c) => [c.path, c.from!]);
  return [...new Set([...asked, ...more])];
}

function apply(ctx: OpsContext, p: Parameters<OpsTable['project/apply']>[1]): ApplyResult {
  if (p.git_branch !== undefined && p.patch_out !== undefined) throw new AvfsError('InvalidInput', 'give --git-branch or --patch-out, not both');
  if (p.keep !== undefined && (p.dry_run || p.git_branch !== undefined || p.patch_out !== undefined)) {
    throw new AvfsError('InvalidInput', '--keep settles conflicts and applies: not with --dry-run, --git-branch or --patch-out');
  }
  return writing(ctx, p.vault, (v) => {
    const base = mustReadBase(v);
    const root = projectDir(p.host_path ?? base.source, p.host_cwd);
    const baseTree = new TreeReader(v, refOf(base.checkpoint, v));
    if (p.git_branch !== undefined || p.patch_out !== undefined) {
      // Neither touches the project folder: the base stays where it is.
      const live = new TreeReader(v, { kind: 'live' });
      if (p.patch_out !== undefined) {
        const { plan, changes } = planApply(v, base, baseTree, live, root, { patch: p.patch, hostChecks: false });
        const file = path.resolve(p.host_cwd ?? process.cwd(), p.patch_out);
        writePatch(file, changes, baseTree, live);
        return { ...plan, ...nothingMore, applied: changes.length, patch_out: file };
      }
      if (!base.git_commit || !base.git_checkpoint) {
        throw new AvfsError('NotSupported', `vault ${v.name} was not made from a git repository with a commit: there is no base commit for a branch`, { vault: v.name });
      }
      // The branch starts at the commit the vault was made from, so its changes count from the tree of then.
      const gitTree = new TreeReader(v, refOf(base.git_checkpoint, v));
      const { plan, changes } = planApply(v, { ...base, checkpoint: base.git_checkpoint }, gitTree, live, root, { patch: p.patch, hostChecks: false });
      const commit = commitBranch(root, base.git_commit, base.git_prefix, p.git_branch!, p.message ?? `avfs: the changes of vault ${v.name}`, changes, live);
      return { ...plan, ...nothingMore, applied: changes.length, git_branch: { name: p.git_branch!, commit, parent: base.git_commit } };
    }
    const recovered = recover(root);
    if (p.dry_run) {
      const since = baseJournalSeq(v);
      const { plan } = planApply(v, base, baseTree, new TreeReader(v, { kind: 'live' }), root, {
        patch: p.patch,
        candidates: since === null ? null : v.journal.pathsSince(since),
        ...(p.paths ? { only: p.paths } : {}),
      });
      return { ...plan, ...nothingMore, dry_run: true, recovered };
    }
    // One write transaction around the plan, the writes into the project and the base's move: what
    // is applied is the vault's tree as it is now (an agent writing meanwhile waits), and an apply
    // that fails or dies half-way leaves the base where it was (the project is rolled back by its
    // journal, commit.ts). No snapshot of the whole tree: the base is edited at the changed paths.
    return v.store.write(() => {
      const since = baseJournalSeq(v);
      const pathsNow = () => (since === null ? null : v.journal.pathsSince(since));
      let only = p.paths;
      if (p.keep !== undefined && only) only = withRenames(planApply(v, base, baseTree, new TreeReader(v, { kind: 'live' }), root, { candidates: pathsNow() }).plan, only);
      if (p.keep === 'project') {
        // The project's side of each conflict goes into the vault first; the plan then finds those paths the same.
        const first = planApply(v, base, baseTree, new TreeReader(v, { kind: 'live' }), root, { candidates: pathsNow(), ...(only ? { only } : {}) });
        const vfs = new Vfs(v);
        const ignore = new ProjectIgnore(root, base.exclude);
        // A rename's project side is the old path as the project has it and no new one.
        const sides = [...first.plan.conflicts.map((c) => c.path), ...first.plan.changes.filter((c) => c.conflict === 'rename').flatMap((c) => [c.path, c.from!])];
        for (const rel of new Set(sides)) takeTree(vfs, root, '/' + rel, ignore);
      }
      const { plan, steps, changes } = planApply(v, base, baseTree, new TreeReader(v, { kind: 'live' }), root, {
        patch: p.patch,
        candidates: pathsNow(),
        keepVault: p.keep === 'vault',
        ...(only ? { only } : {}),
      });
      if (plan.conflicts.length > 0) throw conflictError(plan);
      const seq = v.journal.lastSeq();
      const applied = commitSteps(root, steps);
      const newBase = advanceBase(v, base, partEdits(changes), only ? undefined : seq);
      // A partial apply keeps the old mark: the paths it left are still to be looked at.
      if (!only) setBaseJournalSeq(v, seq);
      v.journal.append('project_apply', null, { details: { project: root, applied, base: newBase, ...(only ? { paths: only } : {}), ...(p.keep ? { keep: p.keep } : {}) } });
      return { ...plan, dry_run: false, applied, new_base: newBase, recovered };
    });
  });
}

export const projectOps = {
  'project/create': (ctx, p) => {
    const root = projectDir(p.host_path, p.host_cwd);
    ctx.home.create(p.name, p.quotas ?? {}, p.backend).close();
    try {
      const r = writing(ctx, p.name, (v) => {
        const ignore = new ProjectIgnore(root, p.exclude);
        const s = importTree(new Vfs(v), root, '/', { leaveOut: (rel, isDir) => ignore.leftOut(rel, isDir) });
        const g = gitInfo(root);
        const base: ProjectBase = {
          source: root,
          checkpoint: '',
          git_commit: g?.commit ?? null,
          git_checkpoint: null,
          git_prefix: g?.prefix ?? '',
          exclude: p.exclude,
          created_at: new Date().toISOString(),
          moved_at: null,
        };
        v.store.write(() => {
          const cp = v.checkpoints.save({ internal: true, prefix: 'base' });
          base.checkpoint = cp.name;
          setBaseJournalSeq(v, cp.journal_seq);
          // The git checkpoint is a second copy: the base is edited in place at every apply, the tree of the base commit never.
          if (base.git_commit) base.git_checkpoint = v.checkpoints.save({ internal: true, prefix: 'base-git' }).name;
          writeBase(v, base);
        });
        return { created: p.name, current: p.use, path: v.file, base, files_imported: s.files, dirs_created: s.dirs, symlinks: s.symlinks, total_bytes: s.bytes };
      });
      if (p.use) ctx.home.setCurrent(p.name);
      return r;
    } catch (e) {
      ctx.home.removeFiles(p.name);
      throw e;
    }
  },

  'project/base': (ctx, p) => reading(ctx, p.vault, (v) => ({ vault: v.name, base: readBase(v) })),

  'project/apply': apply,

  'project/compare': (ctx, p) =>
    reading(ctx, p.vault, (a) => reading(ctx, p.other, (b) => ({ vault: a.name, other: b.name, changes: compareVaults(a, b) }))),

  'project/sync': (ctx, p) =>
    writing(ctx, p.vault, (v) => {
      const base = mustReadBase(v);
      const root = projectDir(p.host_path ?? base.source, p.host_cwd);
      const recovered = recover(root);
      return planSync(v, base, root, { dryRun: p.dry_run, patch: p.patch, recovered, conflict: conflictError });
    }),
} satisfies Partial<OpsTable>;
