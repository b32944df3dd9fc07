/**
 * The settle step of a run whose owner died (guard.ts): run by the run's guard, in a process of
 * its own, with all the guard was told. It does what the run would have done on a time-out or a
 * cancellation, in the same order:
 *
 *   1. the command's process group: SIGTERM, SIGKILL to what is left after the grace period,
 *      until none of it runs (while its mount is still served, as on a time-out);
 *   2. the run's one-shot mount: its server stopped (it unmounts and leaves), its directory
 *      removed; a kept or reused mount is not the run's and stays;
 *   3. the vault: the internal baseline dropped, the checkpoint taken before the run kept, and the
 *      run's end recorded in the audit trail (`exec_failed`, `OwnerDied`, naming the owner),
 *      unless the owner recorded it just before it died.
 *
 * What it did goes, one line per run, to `<home>/mounts/guard.log`.
 */

import { join } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { guardState, type RunGuardState } from '../protocol/guard';
import { AvfsHome } from '../store/home';
import { releaseOrphanedMount } from './mounts';
import { groupMembers, stopGroup } from './processGroup';
import { makePrivateDir, writePrivateFile } from '../store/privateFs';

/** The audit entries that end a run (host/proxy/pipeline.ts). */
const RUN_ENDS = ['exec_result', 'exec_failed', 'exec_denied'] as const;

/** argv: the run's fixed part (RunGuardStart), then each update, as JSON. */
export async function settleOrphanedRun(argv: string[]): Promise<void> {
  const [start, ...updates] = argv.map((a) => JSON.parse(a) as unknown);
  const state = guardState(start, updates);
  const home = new AvfsHome(state.home);
  const done: string[] = [];
  try {
    await settle(home, state, done);
  } catch (e) {
    done.push(`failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  } finally {
    try {
      makePrivateDir(join(home.dir, 'mounts'));
      writePrivateFile(join(home.dir, 'mounts', 'guard.log'), `${new Date().toISOString()} run ${state.id} of ${state.owner}: ${done.join('; ')}\n`, 'a');
    } catch {
      /* the home is gone */
    }
  }
}

async function settle(home: AvfsHome, state: RunGuardState, done: string[]): Promise<void> {
  if (state.pgid !== null) {
    // The runner of a host or a mount server stops its commands too when its owner goes: whichever comes first.
    const left = groupMembers(state.pgid).length;
    await stopGroup(state.pgid, state.grace_ms);
    done.push(`stopped group ${state.pgid} (${left} process(es) were left in it)`);
  }
  if (state.mount) {
    await releaseOrphanedMount(home, state.mount, state.owner_pid);
    done.push(`released the one-shot mount at ${state.mount.mountpoint}`);
  }
  if (!home.exists(state.vault)) return void done.push(`vault ${state.vault} is gone`);
  const vault = home.open(state.vault, { surface: 'exec' });
  try {
    if (state.baseline !== null) {
      try {
        vault.checkpoints.delete(state.baseline);
      } catch {
        /* the owner dropped it already */
      }
    }
    if (vault.journal.mentions(RUN_ENDS, state.id)) return void done.push('its end was recorded by its owner');
    const kept = state.checkpoint ? `; checkpoint ${state.checkpoint} is kept (undo: avfs checkpoint restore ${state.checkpoint} --vault ${state.vault})` : '';
    const what = [state.pgid !== null ? `the command was stopped` : '', state.mount ? 'its one-shot mount released' : ''].filter(Boolean).join(', ');
    const error = new AvfsError('OwnerDied', `${state.owner} died before the run ended${what ? `: ${what}` : ''}${kept}`, { owner_pid: state.owner_pid });
    vault.journal.append('exec_failed', null, {
      details: { id: state.id, command: state.command, surface: state.surface, ...error.toJSON(), checkpoint: state.checkpoint },
    });
    done.push('recorded exec_failed');
  } finally {
    vault.close();
  }
}
