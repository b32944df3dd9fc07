/**
 * The parts of an exec run whose cost grows with the vault's tree (saving the checkpoint or the
 * baseline before the run, the change summary after it, dropping the baseline), as tasks the
 * host's operation threads run, so a run on a big vault never holds up the host's other clients.
 */
import type { ChangeSummary } from '../protocol/changes';
import type { CheckpointRow, SaveOptions } from '../store/checkpoints';
import { diffTrees } from '../store/diff';
import type { OpsContext } from '../ops/context';
import { writing } from '../ops/vaultAccess';
import { type CommitResult, type PrepareResult, WorkingCopy, type WorkingCopyState } from '../proxy/workingCopy';

export const EXEC_TASKS = {
  'checkpoint.save': (ctx: OpsContext, a: { vault: string; opts: SaveOptions }): CheckpointRow => writing(ctx, a.vault, (v) => v.checkpoints.save(a.opts)),
  'checkpoint.delete': (ctx: OpsContext, a: { vault: string; name: string }): null =>
    writing(ctx, a.vault, (v) => {
      v.checkpoints.delete(a.name);
      return null;
    }),
  'diff.toLive': (ctx: OpsContext, a: { vault: string; from: { id: number; name: string } }): ChangeSummary =>
    writing(ctx, a.vault, (v) => diffTrees(v.store, v.inodes.chunks, { kind: 'checkpoint', ...a.from }, { kind: 'live' })),
  // A --materialize run's working copy (taken by the run on the host's main thread): brought up to
  // date before the run, committed back after it; both walk the copy, and the commit may write thousands of paths.
  'copy.prepare': (ctx: OpsContext, a: { vault: string; dir: string }): { result: PrepareResult; state: WorkingCopyState } =>
    writing(ctx, a.vault, (v) => {
      const copy = WorkingCopy.at(a.dir);
      const result = copy.prepare(v);
      return { result, state: copy.prepared! };
    }),
  'copy.commit': (ctx: OpsContext, a: { vault: string; dir: string; state: WorkingCopyState }): CommitResult => writing(ctx, a.vault, (v) => WorkingCopy.at(a.dir, a.state).commit(v)),
};
export type ExecTaskName = keyof typeof EXEC_TASKS;
