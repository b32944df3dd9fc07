/**
 * Which live mount a proxied call may use. Apart from mounts.ts (no zod, no store): a CLI call
 * checks it at start, before loading anything else, to hand its run to that mount's server
 * (host/cli/liveMountClient.ts); the pipeline decides with the same test.
 */
import { resolve } from 'node:path';

/** A one-shot mount's directory name: its run's own, never reused by another call (it goes away with the run). */
export const ONE_SHOT_RE = /\.exec-\d+-\d+$/;

export interface MountWanted {
  vault: string;
  readonly: boolean;
  /** Only a mount open to other users will do. */
  allowOther: boolean;
  /** Only a mount at this directory will do. */
  mountpoint?: string;
}

/** The fields of a mount record this test reads. */
export interface MountFacts {
  vault: string;
  mountpoint: string;
  readonly: boolean;
  allow_other?: boolean | undefined;
  state: string;
}

/** Same vault and mode (read-only; open to other users when asked), up, not another run's one-shot mount, at the given directory if one is. */
export function fitsCall(rec: MountFacts, want: MountWanted): boolean {
  return (
    rec.vault === want.vault &&
    rec.readonly === want.readonly &&
    rec.state === 'mounted' &&
    !ONE_SHOT_RE.test(rec.mountpoint) &&
    (!want.allowOther || rec.allow_other === true) &&
    (want.mountpoint === undefined || rec.mountpoint === resolve(want.mountpoint))
  );
}
