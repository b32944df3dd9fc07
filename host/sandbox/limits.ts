/**
 * The process and memory limits of one sandboxed run. Root's processes are not bound by
 * RLIMIT_NPROC (the kernel exempts uid 0), so as root a run gets cgroups of its own where this
 * machine lets root make them (cgroup v1's pids and memory hierarchies, or a cgroup v2 child whose
 * controllers are enabled); as any other user the run's user namespace makes RLIMIT_NPROC count
 * the run's processes alone, so a fork bomb exhausts its own allowance, never its user's (the
 * CLI's and host's threads). As root without a pids cgroup (none writable, as in many containers)
 * the run gets a pid namespace of its own whose pid_max bounds it (bwrap.ts). Memory without a
 * cgroup is RLIMIT_DATA per process.
 *
 * Run in the process that starts the command (the runner). The command's first process joins the
 * cgroups before it execs bwrap (runner.ts), so nothing of the run is ever outside them.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SandboxViolation } from '../protocol/sandbox';
import type { LimitsBy } from './bwrap';

const ROOT = '/sys/fs/cgroup';

export interface RunCgroups {
  by: LimitsBy;
  /**
   * The files the command's first process writes `0` into to join the run's cgroups: cgroup v1's
   * `tasks` (that one thread: the start shell has no other), cgroup v2's `cgroup.procs`. Moving a
   * whole process (v1's cgroup.procs, or v2's) takes the kernel's global threadgroup lock for
   * writing, which waits for an RCU grace period: 10-25 ms here, far more on a loaded machine and
   * most of what the sandbox cost a run. A thread moving itself into v1's `tasks` skips that
   * lock (the kernel's shortcut for a single thread: ≈ 0.5 ms here on Linux 6.18, docs/exec.md).
   */
  join: string[];
  /** What the kernel counted against the limits. */
  violations(): SandboxViolation[];
  /** Kills what is left in them and removes them. */
  remove(): Promise<void>;
}

/** This process's cgroup paths: by v1 controller name, and v2's under '' (one read of /proc/self/cgroup). */
function ownPaths(): Map<string, string> {
  const out = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const [, ctrls, path] = /^\d+:([^:]*):(.*)$/.exec(line) ?? [];
    if (ctrls === undefined || path === undefined) continue;
    for (const c of ctrls === '' ? [''] : ctrls.split(',')) if (!out.has(c)) out.set(c, path);
  }
  return out;
}

const pidAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

function killAll(dir: string): number {
  let n = 0;
  try {
    for (const p of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
      try {
        process.kill(Number(p), 'SIGKILL');
        n++;
      } catch {
        /* gone */
      }
    }
  } catch {
    /* gone */
  }
  return n;
}

/** cgroups left by runners that died (named after their pid). */
function sweep(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const n of names) {
    const pid = Number(/^avfs-run-(\d+)-/.exec(n)?.[1]);
    if (!Number.isInteger(pid) || pid === process.pid || pidAlive(pid)) continue;
    const dir = join(parent, n);
    killAll(dir);
    try {
      rmdirSync(dir);
    } catch {
      /* busy still: the next sweep */
    }
  }
}

/** A child cgroup with `file` set to `value`, or null when this machine does not let us make one. */
function makeChild(parent: string, name: string, file: string, value: string): string | null {
  if (!existsSync(join(parent, 'cgroup.procs'))) return null;
  sweep(parent);
  const dir = join(parent, name);
  try {
    mkdirSync(dir);
  } catch {
    return null;
  }
  try {
    writeFileSync(join(dir, file), value);
    return dir;
  } catch {
    try {
      rmdirSync(dir);
    } catch {
      /* leave it */
    }
    return null;
  }
}

const counter = (text: string, key: string): number => Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
const read = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

let seq = 0;

/**
 * The run's cgroups (as root, where they can be made) and how each limit is enforced. `pidMax`: a
 * pid namespace's own pid_max can be set here (probe.ts), the process limit as root when no pids
 * cgroup can be made.
 */
export function makeRunCgroups(processes: number, memoryBytes: number, pidMax = false): RunCgroups {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  const dirs: { dir: string; kind: 'pids' | 'memory'; v2: boolean }[] = [];
  if (root) {
    const name = `avfs-run-${process.pid}-${++seq}`;
    const own = ownPaths();
    const v2 = own.get('') ?? null;
    const v2Base = existsSync(join(ROOT, 'cgroup.controllers')) ? ROOT : null;
    if (v2Base && v2 !== null) {
      // Pure cgroup v2: a child of our own cgroup, if its controllers are on there.
      const dir = makeChild(join(v2Base, v2), name, 'pids.max', String(processes));
      if (dir) {
        dirs.push({ dir, kind: 'pids', v2: true });
        try {
          writeFileSync(join(dir, 'memory.max'), String(memoryBytes));
          dirs.push({ dir, kind: 'memory', v2: true });
        } catch {
          /* no memory controller there */
        }
      }
    } else {
      const pids = own.get('pids') ?? null;
      const mem = own.get('memory') ?? null;
      const p = pids !== null ? makeChild(join(ROOT, 'pids', pids), name, 'pids.max', String(processes)) : null;
      if (p) dirs.push({ dir: p, kind: 'pids', v2: false });
      const m = mem !== null ? makeChild(join(ROOT, 'memory', mem), name, 'memory.limit_in_bytes', String(memoryBytes)) : null;
      if (m) dirs.push({ dir: m, kind: 'memory', v2: false });
    }
  }
  const has = (k: 'pids' | 'memory') => dirs.some((d) => d.kind === k);
  const nproc = root ? (pidMax ? 'pid_namespace' : null) : 'rlimit';
  const by: LimitsBy = { processes: has('pids') ? 'cgroup' : nproc, memory: has('memory') ? 'cgroup' : 'rlimit' };
  const unique = [...new Set(dirs.map((d) => d.dir))];
  return {
    by,
    join: unique.map((d) => join(d, dirs.find((x) => x.dir === d)!.v2 ? 'cgroup.procs' : 'tasks')),
    violations() {
      const out: SandboxViolation[] = [];
      for (const d of dirs) {
        if (d.kind === 'pids') {
          const n = counter(read(join(d.dir, 'pids.events')), 'max');
          if (n > 0) out.push({ kind: 'process_limit', message: `the run reached its limit of ${processes} processes: ${n} fork(s) refused` });
        } else {
          const n = counter(read(join(d.dir, d.v2 ? 'memory.events' : 'memory.oom_control')), 'oom_kill');
          if (n > 0) out.push({ kind: 'memory_limit', message: `the run reached its memory limit of ${memoryBytes} bytes: ${n} process(es) killed` });
        }
      }
      return out;
    },
    async remove() {
      for (const dir of unique) {
        for (let i = 0; i < 100; i++) {
          // Empty, as after most runs, it goes at once; else what is in it is killed first.
          if (i > 0) killAll(dir);
          try {
            rmdirSync(dir);
            break;
          } catch {
            if (i > 0) await new Promise((r) => setTimeout(r, 10));
          }
        }
      }
    },
  };
}

/** The children of one process (its main thread's: bwrap and unshare have no other). */
const childrenOf = (pid: number): number[] =>
  read(`/proc/${pid}/task/${pid}/children`)
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);

/**
 * bwrap's init for the run whose first process is `leader`: the deepest process, down the line of
 * first children, that is pid 1 of its pid namespace (unshare's child is pid 1 of the namespace
 * around bwrap's; bwrap's init is pid 1 of the run's). Its root holds the run's own /proc.
 */
function sandboxInit(leader: number): number | null {
  let found: number | null = null;
  let p = leader;
  for (let depth = 0; depth < 4; depth++) {
    const next = childrenOf(p)[0];
    if (next === undefined) break;
    const nspid = /^NSpid:\s*(.*)$/m.exec(read(`/proc/${next}/status`))?.[1]?.trim().split(/\s+/);
    if (nspid && nspid.length > 1 && nspid[nspid.length - 1] === '1') found = next;
    p = next;
  }
  return found;
}

/**
 * Where no cgroup counts the run's processes (RLIMIT_NPROC, a pid namespace's pid_max) the kernel
 * refuses forks past the limit without a record of it. This counts the run's processes every
 * `everyMs` (one directory read of the run's own /proc, seen through its init's root) and keeps the
 * most seen at once: `violation()` reports the limit reached when that is the limit or more.
 * Threads take pids as well but are not listed: a run of threads is seen by its processes only.
 */
export function watchProcessCount(leader: number, limit: number, everyMs = 100): { stop(): void; violation(): SandboxViolation | null } {
  let init: number | null = null;
  let peak = 0;
  const look = () => {
    init ??= sandboxInit(leader);
    if (init === null) return;
    try {
      let n = 0;
      for (const name of readdirSync(`/proc/${init}/root/proc`)) {
        const c = name.charCodeAt(0);
        if (c >= 48 && c <= 57) n++;
      }
      if (n > peak) peak = n;
    } catch {
      /* the run is ending */
    }
  };
  const timer = setInterval(look, everyMs);
  timer.unref();
  return {
    stop: () => clearInterval(timer),
    violation: () =>
      peak >= limit ? { kind: 'process_limit', message: `the run reached its limit of ${limit} processes (${peak} seen at once): forks past it were refused` } : null,
  };
}
