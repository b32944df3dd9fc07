/**
 * Runs one command for proxy exec: its own process group, cwd in the mount, stdout and stderr
 * drained concurrently into bounded captures, a time limit that stops the whole group (SIGTERM,
 * then SIGKILL after the grace period), and cancellation that does the same. When the command
 * exits, whatever it left running in its group is stopped too, so nothing outlives the call and
 * keeps writing into the workspace after its change summary was taken.
 *
 * Not execa: its time limit and buffer cap act on the direct child and keep only the head of the
 * output; here the unit is the process group and the envelope keeps head and tail.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import { constants } from 'node:os';
import type { SandboxLimits, SandboxViolation } from '../protocol/sandbox';
import { bwrapArgv, commandStart, type SandboxSpec, systemTool } from '../sandbox/bwrap';
import { makeRunCgroups, type RunCgroups, watchProcessCount } from '../sandbox/limits';
import { type NetProxy, startNetProxy } from '../sandbox/netProxy';
import { type Captured, HeadTailCapture } from './capture';
import { awaitAdoptedInGroup } from './peer';
import { closeFds, inputFile, noInheritedFds, type OutputPipe, stdoutAndStderr } from './pipes';
import { groupMembers, signalGroup, stopGroup } from './processGroup';

export interface RunOptions {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** 0: no limit. */
  timeoutMs: number;
  graceMs: number;
  maxOutputBytes: number;
  stdin?: string | Buffer;
  signal?: AbortSignal;
  /**
   * Each chunk as it arrives (the CLI streams it to a terminal, the host to its clients). A
   * promise back means "no room now": that stream is not read (the command waits on its pipe)
   * until it settles. The capture gets every byte either way.
   */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void | Promise<void>;
  /** The command has started: the pid that leads its process group (the run's guard is told). */
  onStart?: (pgid: number) => void;
  /** Run it in a bubblewrap sandbox (host/sandbox); without it, as the caller's user, unconfined. */
  sandbox?: SandboxSpec;
}

/** What the sandbox of a run enforced and stopped. */
export interface SandboxOutcome {
  limits: SandboxLimits;
  violations: SandboxViolation[];
}

export interface RunResult {
  /** The shell's convention: the exit status, 128+N when killed by signal N, 127 when the program was not found, 126 when it could not run. */
  exitCode: number;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  cancelled: boolean;
  stdout: Captured;
  stderr: Captured;
  durationMs: number;
  /** Processes of the group still running when the command exited (then stopped). */
  leftovers: number;
  sandbox?: SandboxOutcome;
}

/**
 * The command starts as `/bin/sh -c 'cd -- "$1" && shift && exec "$@"'`: libuv's spawn waits,
 * blocking this thread, until the child has changed directory and exec'd its program. When this
 * process serves the mount itself, a chdir into it (or an exec of a program inside it) would wait
 * for this very thread to answer FUSE: a deadlock. The shell does both after the spawn returned.
 */
export const START_IN_DIR = ['/bin/sh', '-c', 'cd -- "$1" && shift && exec "$@"', 'avfs-exec'];

/**
 * A sandboxed command starts as a shell that puts itself in the run's cgroups (writing the pid
 * after the spawn would race a fork: nothing of the run ever runs outside them; `0` is the writer
 * itself, see RunCgroups.join), then execs bwrap. A time-out's SIGTERM goes to the group's other
 * processes, not to bwrap (stopGroup's spareLeader), whose end would kill everything in the run's
 * pid namespace at once: the command gets its grace period, with the signals' own dispositions
 * (nothing is ignored on the way, so no `env --default-signal` inside).
 */
export const START_SANDBOXED = 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; exec "$@"';

function startArgv(opts: RunOptions, cg: RunCgroups | undefined, proxy: NetProxy | undefined): string[] {
  if (!opts.sandbox || !cg) return [...START_IN_DIR, opts.cwd, ...opts.argv];
  return ['/bin/sh', '-c', START_SANDBOXED, 'avfs-sandbox', ...cg.join, '--', ...bwrapArgv(opts.sandbox, opts.cwd, opts.argv, cg.by, proxy?.socket)];
}

/** bwrap exits 128+N when the command was killed by signal N: the signal, as an unsandboxed run reports it. */
function signalOfStatus(code: number | null): NodeJS.Signals | null {
  if (code === null || code <= 128 || code > 128 + 64) return null;
  const name = Object.entries(constants.signals).find(([, n]) => n === code - 128)?.[0];
  return (name as NodeJS.Signals | undefined) ?? null;
}

type Exit = { code: number | null; signal: NodeJS.Signals | null; spawnError?: NodeJS.ErrnoException };

const exitOf = (child: ChildProcess) =>
  new Promise<Exit>((resolve) => {
    child.once('error', (e: NodeJS.ErrnoException) => resolve({ code: null, signal: null, spawnError: e }));
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

/** A command's first process, spawned: its output pipes, the run's cgroups and network proxy. */
interface Launched {
  child: ChildProcess;
  exit: Promise<Exit>;
  stdoutPipe: OutputPipe;
  stderrPipe: OutputPipe;
  cg: RunCgroups | undefined;
  proxy: NetProxy | undefined;
  /** What was spawned (an error names it). */
  sh: string;
}

async function launch(opts: RunOptions): Promise<Launched> {
  const cg = opts.sandbox ? makeRunCgroups(opts.sandbox.processes, opts.sandbox.memoryBytes, opts.sandbox.pidMax) : undefined;
  // The run may reach only the hosts the policy read from it: through a proxy of its own.
  let proxy: NetProxy | undefined;
  try {
    proxy = opts.sandbox?.allowHosts ? await startNetProxy(opts.sandbox.allowHosts) : undefined;
  } catch (e) {
    await cg?.remove();
    throw e;
  }
  const [sh, ...shArgs] = startArgv(opts, cg, proxy);
  const [stdoutPipe, stderrPipe] = await stdoutAndStderr();
  const stdinFd = opts.stdin !== undefined ? inputFile(opts.stdin) : undefined;
  if (opts.sandbox) noInheritedFds();
  const childFds = [stdoutPipe.childFd, stderrPipe.childFd, ...(stdinFd !== undefined ? [stdinFd] : [])];
  let child: ChildProcess;
  try {
    child = spawn(sh!, shArgs, {
      cwd: '/',
      env: opts.env,
      detached: true,
      stdio: [stdinFd ?? 'ignore', stdoutPipe.childFd, stderrPipe.childFd],
    });
  } catch (e) {
    await cg?.remove();
    await proxy?.close();
    stdoutPipe.stream.destroy();
    stderrPipe.stream.destroy();
    throw e;
  } finally {
    // The child has its own copies now; ours would keep the pipes from ever ending.
    closeFds(childFds);
  }
  return { child, exit: exitOf(child), stdoutPipe, stderrPipe, cg, proxy, sh: sh! };
}

/**
 * A sandbox started ahead of its run (docs/exec.md, "The sandbox"): the whole start of a sandboxed
 * command (the run's cgroups, the start shell, bwrap's namespaces and mounts, the signals given
 * back) done before the request, ending in a shell that waits on a pipe for the one command it
 * will run. Most of what the sandbox costs a run is that start (bwrap's namespaces and mounts
 * alone: 6-8 ms here); made ahead, a run pays for a read from a pipe and two execs. Each one is
 * used once and made after the run before it has ended, with fresh namespaces, `/tmp`, home,
 * limits and cgroups: nothing of one run reaches the next. Only a runner that serves one mount
 * keeps one (keepSandboxReady), for the spec of its last run: it holds a bind of the mount, which
 * must be let go (dropReadySandbox) before the mount is unmounted.
 */
interface ReadySandbox extends Launched {
  key: string;
  exited: boolean;
  /** The pipe the waiting shell reads its command from. */
  request: Writable;
}

let keepReady = false;
let ready: ReadySandbox | undefined;
let preparing = false;

/**
 * Reads the request (shell text ended by a NUL) from fd 3, closes it, and runs it. bash for
 * `read -d ''`, which dash lacks; the request then execs the same `env` and start (commandStart)
 * a sandbox started on request ends with (bwrap.ts), so the command starts as it would there.
 */
const WAIT_FOR_REQUEST = `IFS= read -r -d '' req <&3 || exit 125; exec 3<&-; eval "$req"`;
const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The request a ready sandbox runs: the command, in its directory, with exactly its environment. */
function requestOf(opts: RunOptions): string {
  const env = Object.entries(opts.env).flatMap(([k, v]) => (v === undefined ? [] : [quote(`${k}=${v}`)]));
  return `cd -- ${quote(opts.cwd)} || exit 125\nexec ${systemTool('env')} -i -- ${env.join(' ')} ${commandStart(opts.argv).map(quote).join(' ')}\0`;
}

/** The sandboxes a ready one can stand in for: its spec decides, without the network filter's proxy (made per run). */
const readyKey = (spec: SandboxSpec | undefined): string | undefined => (spec && !spec.allowHosts ? JSON.stringify(spec) : undefined);

/** Whether this process keeps a sandbox ready for its next run (a runner serving one mount). */
export function keepSandboxReady(on: boolean): void {
  keepReady = on;
  if (!on) void dropReadySandbox();
}

/** Ends the ready sandbox, if any (its processes, cgroups and pipes); resolves once it has exited. */
export async function dropReadySandbox(): Promise<void> {
  const r = ready;
  ready = undefined;
  if (!r) return;
  if (!r.exited && r.child.pid !== undefined) signalGroup(r.child.pid, 'SIGKILL');
  await r.exit;
  if (r.child.pid !== undefined) await awaitAdoptedInGroup(r.child.pid, 1000);
  r.stdoutPipe.stream.destroy();
  r.stderrPipe.stream.destroy();
  await r.cg?.remove();
}

/** Starts a sandbox for the next run in `spec` (one at a time; one of another spec is dropped). */
async function prepareSandbox(spec: SandboxSpec): Promise<void> {
  const key = readyKey(spec);
  if (!keepReady || !key || preparing || ready?.key === key) return;
  preparing = true;
  try {
    await prepare(spec, key);
  } finally {
    preparing = false;
  }
}

async function prepare(spec: SandboxSpec, key: string): Promise<void> {
  await dropReadySandbox();
  const cg = makeRunCgroups(spec.processes, spec.memoryBytes, spec.pidMax);
  const [stdoutPipe, stderrPipe] = await stdoutAndStderr();
  const argv = ['/bin/sh', '-c', START_SANDBOXED, 'avfs-sandbox', ...cg.join, '--', ...bwrapArgv(spec, spec.mountpoint, ['/bin/bash', '-c', WAIT_FOR_REQUEST, 'avfs-wait'], cg.by)];
  let child: ChildProcess;
  noInheritedFds();
  try {
    // Only the request carries the run's environment: this start has none of its own to leak.
    child = spawn(argv[0]!, argv.slice(1), { cwd: '/', env: { PATH: '/usr/bin:/bin' }, detached: true, stdio: ['ignore', stdoutPipe.childFd, stderrPipe.childFd, 'pipe'] });
  } catch {
    stdoutPipe.stream.destroy();
    stderrPipe.stream.destroy();
    await cg.remove();
    return;
  } finally {
    closeFds([stdoutPipe.childFd, stderrPipe.childFd]);
  }
  const request = child.stdio[3] as Writable;
  request.on('error', () => undefined);
  const r: ReadySandbox = { key, child, exit: exitOf(child), stdoutPipe, stderrPipe, cg, proxy: undefined, sh: argv[0]!, exited: false, request };
  void r.exit.then(() => {
    r.exited = true;
    // Ended before its run came (its mount went away…): the next run starts its own.
    if (ready === r) void dropReadySandbox();
  });
  ready = r;
  // Turned off while it was being made: this one goes.
  if (!keepReady) void dropReadySandbox();
}

/** The ready sandbox, given this run's command, if it was made for a run like this one (a stdin file is given at spawn: not). */
function takeReadySandbox(opts: RunOptions): Launched | undefined {
  const r = ready;
  if (!r || r.exited || opts.stdin !== undefined || r.key !== readyKey(opts.sandbox)) {
    if (r && opts.stdin === undefined) void dropReadySandbox();
    return undefined;
  }
  ready = undefined;
  r.request.end(requestOf(opts));
  return r;
}

export async function runCommand(opts: RunOptions): Promise<RunResult> {
  const out = new HeadTailCapture(opts.maxOutputBytes);
  const err = new HeadTailCapture(opts.maxOutputBytes);
  const started = performance.now();
  const taken = opts.sandbox ? takeReadySandbox(opts) : undefined;
  const { child, exit: childExit, stdoutPipe, stderrPipe, cg, proxy, sh } = taken ?? (await launch(opts));
  if (child.pid !== undefined) opts.onStart?.(child.pid);
  // No cgroup counts what the kernel refused: the run's processes are counted as it goes.
  const counted = opts.sandbox && cg && child.pid !== undefined && cg.by.processes !== 'cgroup' && cg.by.processes !== null ? watchProcessCount(child.pid, opts.sandbox.processes) : undefined;
  let timedOut = false;
  let cancelled = false;
  let stopping: Promise<void> | undefined;
  const stop = () => {
    if (child.pid !== undefined) stopping ??= stopGroup(child.pid, opts.graceMs, !!opts.sandbox);
  };
  const timer =
    opts.timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          stop();
        }, opts.timeoutMs)
      : undefined;
  const onAbort = () => {
    cancelled = true;
    stop();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (opts.signal?.aborted) onAbort();

  // Once the command has exited, what is left in its pipes is read at once (held back, it could
  // miss the capture when the pipes are closed below).
  let exited = false;
  const paused = new Set<NodeJS.ReadableStream>();
  const drain = (stream: NodeJS.ReadableStream | null, cap: HeadTailCapture, name: 'stdout' | 'stderr') =>
    new Promise<void>((resolve) => {
      if (!stream) return resolve();
      stream.on('data', (d: Buffer) => {
        cap.push(d);
        const room = opts.onOutput?.(name, d);
        if (room instanceof Promise && !exited) {
          stream.pause();
          paused.add(stream);
          void room.then(
            () => paused.delete(stream) && stream.resume(),
            () => paused.delete(stream) && stream.resume(),
          );
        }
      });
      stream.on('close', () => resolve());
      stream.on('error', () => resolve());
    });
  const drained = Promise.all([drain(stdoutPipe.stream, out, 'stdout'), drain(stderrPipe.stream, err, 'stderr')]);

  const exit = await childExit;
  const durationMs = Math.round(performance.now() - started);
  counted?.stop();
  exited = true;
  for (const s of paused) s.resume();
  paused.clear();
  if (timer) clearTimeout(timer);
  opts.signal?.removeEventListener('abort', onAbort);

  let leftovers = 0;
  if (child.pid !== undefined && !exit.spawnError) {
    // bwrap exits as soon as its init reports the command's status; the init (and whatever of the
    // run it is killing with the run's pid namespace) ends a moment later. Waited for, it is not
    // a leftover: nothing of a sandboxed run outlives its namespace.
    if (opts.sandbox) await awaitAdoptedInGroup(child.pid, opts.graceMs);
    leftovers = groupMembers(child.pid).length;
    if (leftovers > 0) stop();
    await stopping;
  }
  // Once the group is gone only a process that left it (setsid) can hold the pipes open.
  await Promise.race([drained, new Promise((r) => setTimeout(r, 500))]);
  stdoutPipe.stream.destroy();
  stderrPipe.stream.destroy();

  let sandbox: SandboxOutcome | undefined;
  if (opts.sandbox && cg) {
    const spec = opts.sandbox;
    sandbox = {
      limits: {
        processes: cg.by.processes ? spec.processes : null,
        processes_by: cg.by.processes,
        memory_bytes: cg.by.memory ? spec.memoryBytes : null,
        memory_by: cg.by.memory,
      },
      violations: [...cg.violations(), ...[counted?.violation()].filter((v): v is SandboxViolation => !!v), ...(proxy?.violations() ?? [])],
    };
    await cg.remove();
    await proxy?.close();
  }

  let exitCode: number;
  if (exit.spawnError) {
    exitCode = 126;
    err.push(Buffer.from(`avfs: cannot start ${sh}: ${exit.spawnError.message}\n`));
  } else if (exit.signal) {
    exitCode = 128 + (constants.signals[exit.signal] ?? 0);
  } else {
    exitCode = exit.code ?? 1;
  }
  const signal = exit.signal ?? (opts.sandbox ? signalOfStatus(exit.code) : null);
  // The next run's sandbox, made now that this one's has ended, after this result is on its way.
  if (keepReady && opts.sandbox) {
    const spec = opts.sandbox;
    setImmediate(() => void prepareSandbox(spec).catch(() => undefined));
  }
  return { exitCode, signal, timedOut, cancelled, stdout: out.result(), stderr: err.result(), durationMs, leftovers, ...(sandbox ? { sandbox } : {}) };
}
