// The host client's state machine: the states a connection to the vault host goes through, the
// legal moves between them, and the restart schedule after a crash. Pure (no `vscode`, no
// processes): unit-tested under node:test; extension/client/hostClient.ts drives it and the status
// bar shows it.
//
//   idle ──start──▶ starting ──hello answered──▶ ready ──host exited──▶ restarting ──delay──▶ starting
//                      │  ▲                        │  └──exited, restarts used up──▶ failed
//                      │  └────── Restart Host ────┘◀──── Restart Host ────────── failed
//                      └──cannot run (runtime), or did not start after the last delay──▶ failed
//   any state ──dispose──▶ stopped (final)

export type HostState =
  /** Not started yet: the host starts on first use (the view shown, a vault file opened, a command). */
  | { name: 'idle' }
  | { name: 'starting'; attempt: number }
  | {
      name: 'ready';
      /** `spawned`: our own `avfs host --stdio` child; `socket`: a host that was running already. */
      via: 'spawned' | 'socket';
      pid: number;
      version: string;
      home: string;
      /** Date.now() when it became ready: a host that stays up this long has its restart count reset. */
      since: number;
      /** Restarts used so far in this run of crashes. */
      attempt: number;
    }
  | { name: 'restarting'; attempt: number; delayMs: number; reason: string }
  /** Given up: the host cannot run here (`fix` says what to change), or it kept exiting. */
  | { name: 'failed'; reason: string; fix?: string }
  | { name: 'stopped' };

export type HostStateName = HostState['name'];

const LEGAL: Record<HostStateName, readonly HostStateName[]> = {
  idle: ['starting', 'stopped'],
  // starting → starting: Restart Host while a start is under way (that start is abandoned).
  starting: ['starting', 'ready', 'restarting', 'failed', 'stopped'],
  // ready → starting: Restart Host, or a setting the host depends on changed; ready → failed: it
  // exited with its restarts used up (it had not stayed up long enough to start them over).
  ready: ['restarting', 'starting', 'failed', 'stopped'],
  restarting: ['starting', 'stopped'],
  failed: ['starting', 'stopped'],
  stopped: [],
};

export class IllegalTransitionError extends Error {
  constructor(from: HostStateName, to: HostStateName) {
    super(`host client: no transition from ${from} to ${to}`);
    this.name = 'IllegalTransitionError';
  }
}

/** `to`, if the machine may move there from `from`; throws otherwise (a bug in the client). */
export function transition(from: HostState, to: HostState): HostState {
  if (!LEGAL[from.name].includes(to.name)) throw new IllegalTransitionError(from.name, to.name);
  return to;
}

/** Waits before each restart after a crash: three tries, then the client gives up (failed). */
export const RESTART_DELAYS_MS = [1000, 2000, 4000] as const;

/** A host that stayed up this long crashed afresh: its restarts start over at the first delay. */
export const STABLE_AFTER_MS = 30_000;

/**
 * What follows a crash of a host that was ready (or of a start that failed): the next restart, or
 * `failed` when the restarts are used up. `attempt` is the number of restarts made before this crash.
 */
export function afterCrash(attempt: number, reason: string): HostState {
  const delayMs = RESTART_DELAYS_MS[attempt];
  if (delayMs === undefined) {
    return { name: 'failed', reason: `${reason}; it exited ${attempt + 1} times in a row, so it is not restarted again` };
  }
  return { name: 'restarting', attempt: attempt + 1, delayMs, reason };
}

/** Restarts already used when a ready host crashes at `now`. */
export function attemptsUsed(ready: Extract<HostState, { name: 'ready' }>, now: number): number {
  return now - ready.since >= STABLE_AFTER_MS ? 0 : ready.attempt;
}

/** One line for the status bar's tooltip and the log. */
export function describeState(s: HostState): string {
  switch (s.name) {
    case 'idle':
      return 'The vault host starts when it is first needed.';
    case 'starting':
      return s.attempt === 0 ? 'Starting the vault host…' : `Starting the vault host (restart ${s.attempt} of ${RESTART_DELAYS_MS.length})…`;
    case 'ready':
      return `Vault host ${s.version} (pid ${s.pid}${s.via === 'socket' ? ', already running: connected to its socket' : ''}), home ${s.home}`;
    case 'restarting':
      return `The vault host exited (${s.reason}); restarting in ${s.delayMs / 1000} s (${s.attempt} of ${RESTART_DELAYS_MS.length}).`;
    case 'failed':
      return `The vault host is not running: ${s.reason}${s.fix ? ` ${s.fix}` : ''}`;
    case 'stopped':
      return 'The vault host connection is closed.';
  }
}
