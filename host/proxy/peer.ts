/**
 * Who is on the other end of a connection, from the kernel and /proc (never from what the client
 * says), and whether that process belongs to an avfs run. Only a person answers an approval or
 * changes the rules: a command that avfs runs, and anything it starts, must not.
 *
 * A process is inside a run when it, or any of its ancestors:
 * - has `AVFS_EXEC_ID` in the environment it was started with (every run's command gets it:
 *   environment.ts; a child that scrubs its own environment still has the run's shell above it);
 * - is a command runner: the process that starts a run's commands (runnerProcess.ts, and the CLI
 *   running a call itself) names itself `avfs-runner` and is a child subreaper, so a descendant that
 *   double-forks away from its parent is re-parented to it, not to init (peer.c);
 * or when the process lives in another pid namespace than this one (a sandboxed run).
 *
 * The answer is taken when the connection is made and again at each answer; the process that
 * connected must still be the same one then (its start time in /proc): a connection handed on to
 * another process after its maker exited, or a pid reused, answers nothing.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { loadNativeAddon } from '../fuse/addon';

export const RUNNER_NAME = 'avfs-runner';

export interface Peer {
  pid: number;
  uid: number;
  gid: number;
  /** The process's start time (clock ticks after boot, /proc/PID/stat): with the pid, one process. */
  startTime: string;
  /** Its controlling terminal (`/dev/pts/3`), or null when it has none. */
  tty: string | null;
}

interface PeerAddon {
  peerCredentials?: (fd: number) => { pid: number; uid: number; gid: number };
  becomeRunner?: () => void;
  reapChild?: (pid: number) => boolean;
}

const addon = (): PeerAddon | undefined => {
  try {
    return loadNativeAddon<PeerAddon>();
  } catch {
    return undefined;
  }
};

/** Fields of /proc/PID/stat after the command name: [0] state, [1] ppid, … [4] tty_nr, … [19] starttime. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

function ttyName(ttyNr: number): string | null {
  if (!ttyNr) return null;
  const major = (ttyNr >> 8) & 0xfff;
  const minor = (ttyNr & 0xff) | ((ttyNr >> 12) & 0xfff00);
  if (major >= 136 && major <= 143) return `/dev/pts/${(major - 136) * 256 + minor}`;
  if (major === 4) return `/dev/tty${minor}`;
  return `tty ${major}:${minor}`;
}

/** The real uid and gid of a process, from /proc/PID/status. */
function idsOf(pid: number): { uid: number; gid: number } {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return { uid: Number(/^Uid:\s+(\d+)/m.exec(status)?.[1] ?? -1), gid: Number(/^Gid:\s+(\d+)/m.exec(status)?.[1] ?? -1) };
  } catch {
    return { uid: -1, gid: -1 };
  }
}

/** What /proc says of a live process: for a pid the kernel gave (with its ids), or the parent of a stdio host. */
export function peerOfPid(pid: number, ids: { uid: number; gid: number } = idsOf(pid)): Peer | undefined {
  const f = statFields(pid);
  if (!f || f[0] === 'Z') return undefined;
  return { pid, uid: ids.uid, gid: ids.gid, startTime: f[19] ?? '', tty: ttyName(Number(f[4] ?? 0)) };
}

/** The process that connected this Unix socket (SO_PEERCRED); undefined when it cannot be told. */
export function peerOfSocket(socket: Socket): Peer | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  const creds = addon()?.peerCredentials;
  if (fd === undefined || fd < 0 || !creds) return undefined;
  try {
    const c = creds(fd);
    return peerOfPid(c.pid, { uid: c.uid, gid: c.gid });
  } catch {
    return undefined;
  }
}

/** Whether the process that connected is still the one running under its pid. */
export function stillThere(peer: Peer): boolean {
  const f = statFields(peer.pid);
  return !!f && f[0] !== 'Z' && f[19] === peer.startTime;
}

function ownPidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/**
 * Why process `pid` belongs to an avfs run (a sentence), or undefined when nothing says it does.
 * A process gone from /proc cannot be judged: it counts as inside (its connection answers nothing).
 */
export function runOf(pid: number): string | undefined {
  const ns = ownPidNamespace();
  try {
    if (ns && readlinkSync(`/proc/${pid}/ns/pid`) !== ns) return `process ${pid} is in another pid namespace (a sandboxed run)`;
  } catch {
    return `process ${pid} is gone`;
  }
  const seen = new Set<number>();
  for (let p = pid; p > 1 && !seen.has(p); ) {
    seen.add(p);
    const f = statFields(p);
    if (!f) return p === pid ? `process ${pid} is gone` : undefined;
    let comm = '';
    try {
      comm = readFileSync(`/proc/${p}/comm`, 'utf8').trim();
    } catch {
      // Gone between two reads: its parent is still looked at.
    }
    if (comm === RUNNER_NAME) return `process ${pid} descends from avfs's command runner (pid ${p})`;
    let environ = '';
    try {
      environ = readFileSync(`/proc/${p}/environ`, 'latin1');
    } catch {
      // Another user's process (the socket is owner-only): its ancestors are looked at.
    }
    const run = /(?:^|\0)AVFS_EXEC_ID=([^\0]*)/.exec(environ);
    if (run) return `process ${pid} ${p === pid ? 'is' : `descends from process ${p}, which is`} part of the avfs run ${run[1]}`;
    p = Number(f[1]);
  }
  return undefined;
}

/** Marks this process as the one that starts runs' commands (see above); false when the addon is not built. */
export function becomeRunner(): boolean {
  const fn = addon()?.becomeRunner;
  if (!fn) return false;
  try {
    fn();
    return true;
  } catch {
    return false;
  }
}

/**
 * Collects the exited processes this runner adopted (a run's double-forked descendants, re-parented
 * to it), which Node never waits for; `own(pid)` says which children Node spawned itself and reaps.
 * Returns how many were collected.
 */
export function reapAdopted(own: (pid: number) => boolean): number {
  const reap = addon()?.reapChild;
  if (!reap) return 0;
  let n = 0;
  for (const pid of ownChildren()) {
    if (own(pid) || statFields(pid)?.[0] !== 'Z') continue;
    if (reap(pid)) n++;
  }
  return n;
}

/**
 * The children of this process (adopted ones included), from each /proc/self/task/N/children;
 * `adoptedOnly`: from the main thread's alone, where the kernel puts every process it hands a
 * subreaper (the first of its threads still alive: the main one, which lives as long as Node).
 * (A one-shot CLI has a dozen threads: reading all their lists took ~0.9 ms here, the main one's ~0.2.)
 */
function ownChildren(adoptedOnly = false): number[] {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = adoptedOnly ? [String(process.pid)] : readdirSync('/proc/self/task');
  } catch {
    return out;
  }
  for (const task of tasks) {
    try {
      for (const c of readFileSync(`/proc/self/task/${task}/children`, 'utf8').trim().split(/\s+/)) if (c) out.push(Number(c));
    } catch {
      /* a thread that ended */
    }
  }
  return out;
}

/**
 * After a sandboxed run's bwrap has exited: the processes of its group this runner adopted (bwrap's
 * own init, still tearing down the run's namespaces: bwrap exits as soon as the init reports the
 * command's status), waited for until they have exited (at most `ms`), then collected, so the
 * group is empty at once. It reads this process's children and their stat files, not all of /proc.
 * Returns the pids still running after `ms` (the caller then stops the group as for any leftover);
 * nothing to wait for when this process is no subreaper or adopted none.
 */
export async function awaitAdoptedInGroup(pgid: number, ms: number): Promise<number[]> {
  const inGroup = () =>
    ownChildren(true)
      .map((pid) => ({ pid, f: statFields(pid) }))
      .filter((c) => c.pid !== pgid && c.f !== undefined && Number(c.f[2]) === pgid);
  const adopted = new Set<number>();
  const deadline = Date.now() + ms;
  let running: number[] = [];
  // The init ends about 0.1 ms after bwrap: looked for again at once (on the next turn of the
  // loop) for the first 2 ms, then each ms; a timer's least wait (1 ms, often more) was most of
  // the wait.
  const eager = performance.now() + 2;
  for (;;) {
    const now = inGroup();
    for (const c of now) adopted.add(c.pid);
    running = now.filter((c) => c.f![0] !== 'Z').map((c) => c.pid);
    if (running.length === 0 || Date.now() >= deadline) break;
    await new Promise((r) => (performance.now() < eager ? setImmediate(r) : setTimeout(r, 1)));
  }
  const reap = addon()?.reapChild;
  if (reap) for (const pid of adopted) if (!running.includes(pid)) reap(pid);
  return running;
}

/** How the audit trail names whoever answered on a connection: what the host knows, never what the client says. */
export function describePeer(kind: string, peer: Peer | undefined): string {
  if (!peer) return `${kind} client (process unknown)`;
  return `${kind} client (pid ${peer.pid}, uid ${peer.uid}${peer.tty ? `, ${peer.tty}` : ', no terminal'})`;
}
