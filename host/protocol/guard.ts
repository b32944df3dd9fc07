/**
 * What a run's guard is told (host/proxy/guard.ts): the state of a run that the guard stops and
 * releases should the run's owner die. The owner starts the guard with the run's fixed part
 * (RunGuardStart, in the guard's argv), then writes what the run holds as it comes (RunGuardUpdate,
 * one JSON line each; a later line overrides an earlier one). The settle step (host/proxy/settle.ts)
 * reads them back in another process, so they are checked here, at the edge.
 */
import { z } from 'zod';

export const RunGuardStart = z.strictObject({
  /** The avfs home's directory. */
  home: z.string(),
  vault: z.string(),
  /** The run's id, as in its audit entries. */
  id: z.string(),
  command: z.string(),
  /** Who asked for the run, as in its audit entries. */
  surface: z.string(),
  /** The process that ran it, for the audit trail: `the vault host (pid 4242)`. */
  owner: z.string(),
  owner_pid: z.number().int().positive(),
  /** The run's grace period: SIGTERM to the command's group, SIGKILL to what is left after it. */
  grace_ms: z.number().int().nonnegative(),
});
export type RunGuardStart = z.infer<typeof RunGuardStart>;

/** A one-shot mount the run made: released should the owner die (a kept or reused mount never is). */
export const GuardedMount = z.strictObject({
  mountpoint: z.string(),
  /** The owner served it itself (a one-shot CLI call): nobody to stop, its mount is detached. */
  served_by_owner: z.boolean(),
  /** The directory is avfs's own, made for this mount: removed with it. */
  remove_dir: z.boolean(),
});
export type GuardedMount = z.infer<typeof GuardedMount>;

export const RunGuardUpdate = z.strictObject({
  /** The checkpoint taken before the run: kept (it undoes the run), named in the audit entry. */
  checkpoint: z.string().nullable().optional(),
  /** The internal baseline of the change summary: dropped. */
  baseline: z.string().nullable().optional(),
  mount: GuardedMount.nullable().optional(),
  /** The command's process group while it runs. */
  pgid: z.number().int().positive().nullable().optional(),
});
export type RunGuardUpdate = z.infer<typeof RunGuardUpdate>;

export interface RunGuardState extends RunGuardStart {
  checkpoint: string | null;
  baseline: string | null;
  mount: GuardedMount | null;
  pgid: number | null;
}

/** Everything the guard was told, the updates applied in order. */
export function guardState(start: unknown, updates: unknown[]): RunGuardState {
  const state: RunGuardState = { ...RunGuardStart.parse(start), checkpoint: null, baseline: null, mount: null, pgid: null };
  for (const u of updates) {
    for (const [k, v] of Object.entries(RunGuardUpdate.parse(u))) if (v !== undefined) Object.assign(state, { [k]: v });
  }
  return state;
}
