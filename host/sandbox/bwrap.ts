/**
 * The bubblewrap command line of one sandboxed run (docs/exec.md, "The sandbox"). Pure: the paths
 * come in a SandboxSpec made by the pipeline (plan.ts), which the runner (maybe another process)
 * turns into argv here. Order matters to bwrap: later mounts go on top of earlier ones, so the
 * read-only system comes first, then the empty places that hide things, then the few paths shown
 * through them (the home's allow-list, the vault's mount).
 *
 * bubblewrap, not @anthropic-ai/sandbox-runtime: on Linux that package drives bwrap itself and adds
 * a filtering network proxy (an HTTP/SOCKS proxy outside the sandbox that the sandbox's only route
 * leads to, allowing listed domains). Its write allow-lists are bwrap binds, as here; what it adds
 * is the proxy and its settings file. Calling bwrap directly keeps a run's cost to one exec (no
 * proxy process, no Node package starting per run), keeps every path decision in this repository
 * where the policy and the envelope see it, and bwrap is a Debian package with a security record.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

export interface SandboxSpec {
  bwrap: string;
  /** Make a user namespace (needed when not root). */
  userns: boolean;
  mountpoint: string;
  readonly: boolean;
  /** Share the host's network (the run's network part was approved); else a namespace of its own. */
  network: boolean;
  /** The private, empty home the run sees (the real one's path); null when there is none to hide (`/`, missing). */
  home: string | null;
  /** Paths of the real home shown read-only (absolute; each exists). */
  homeReadOnly: string[];
  /** Directories of the command's PATH that the hiding above would cover, shown read-only (each exists, none holds a secret). */
  pathReadOnly: string[];
  /** Directories covered by an empty tmpfs: the avfs home, its socket directory, other homes. */
  hide: string[];
  /** Files shown as empty (secrets of the system that root could read: /etc/shadow…). */
  maskFiles: string[];
  /** Most processes (threads count) at once; RLIMIT_NPROC inside the user namespace when no cgroup does it. */
  processes: number;
  /** Most memory: the cgroup's limit, or RLIMIT_DATA of each process when no cgroup does it. */
  memoryBytes: number;
  /** A pid namespace's own pid_max can be set here (Linux 6.14): the process limit as root when no cgroup can be made. */
  pidMax: boolean;
}

const tools = new Map<string, string>();

/**
 * A system program the sandbox runs around the command (env, prlimit, unshare), by its real path: a
 * PATH entry the sandbox hides (a folder under /tmp or the home linking to /usr/bin) cannot lose it.
 */
function systemTool(name: string): string {
  let found = tools.get(name);
  if (found === undefined) {
    found = `/usr/bin/${name}`;
    for (const d of (process.env.PATH ?? '').split(delimiter)) {
      if (!isAbsolute(d)) continue;
      try {
        const p = realpathSync(join(d, name));
        accessSync(p, constants.X_OK);
        found = p;
        break;
      } catch {
        /* next */
      }
    }
    tools.set(name, found);
  }
  return found;
}

/** How the runner enforces the limits (limits.ts decides). */
export interface LimitsBy {
  processes: 'cgroup' | 'rlimit' | 'pid_namespace' | null;
  memory: 'cgroup' | 'rlimit' | null;
}

/**
 * The pid_max of a pid namespace made around bwrap's: every process and thread of the run takes a
 * pid number there too, so no more than this many exist at once. After the numbers wrap the
 * kernel hands out only those from 300 up: `processes` + 300 keeps at least `processes` free.
 */
export const pidMaxOf = (processes: number): number => Math.max(301, processes + 300);

/**
 * As root without a pids cgroup (RLIMIT_NPROC does not bind root): a pid namespace of its own,
 * whose pid_max is set by its first process before it execs bwrap (util-linux unshare). Its
 * `--kill-child` ends the run should unshare be killed.
 */
function pidNamespacePrefix(spec: SandboxSpec): string[] {
  const max = pidMaxOf(spec.processes);
  const set = `{ echo ${max} > /proc/sys/kernel/pid_max; } 2>/dev/null || { echo "avfs: cannot set the pid_max of the run's pid namespace" >&2; exit 125; }; exec "$@"`;
  return [systemTool('unshare'), '--pid', '--fork', '--kill-child', '/bin/sh', '-c', set, 'avfs-limit'];
}

/** `bwrap …` then the command, which starts in `cwd` (a path inside the mount). */
export function bwrapArgv(spec: SandboxSpec, cwd: string, argv: string[], by: LimitsBy): string[] {
  const a: string[] = [...(by.processes === 'pid_namespace' ? pidNamespacePrefix(spec) : []), spec.bwrap];
  if (spec.userns) a.push('--unshare-user');
  // A pid namespace: whatever the command leaves running (setsid included) ends with it.
  a.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent');
  if (!spec.network) a.push('--unshare-net');
  // As root bwrap would keep every capability: none, so the mounts below cannot be undone from inside.
  a.push('--cap-drop', 'ALL');
  a.push('--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/dev/shm', '--tmpfs', '/tmp');
  for (const d of spec.hide) a.push('--tmpfs', d);
  for (const f of spec.maskFiles) a.push('--ro-bind', '/dev/null', f);
  if (spec.home) a.push('--tmpfs', spec.home);
  for (const p of spec.homeReadOnly) a.push('--ro-bind', p, p);
  for (const p of spec.pathReadOnly) a.push('--ro-bind', p, p);
  a.push(spec.readonly ? '--ro-bind' : '--bind', spec.mountpoint, spec.mountpoint);
  a.push('--chdir', cwd, '--');
  // The limits bwrap has no option for, set inside (after the user namespace exists, so the
  // process count is the run's own, not its user's) and for good: hard limits, and no capability
  // to raise them.
  const limits: string[] = [];
  if (by.processes === 'rlimit') limits.push(`--nproc=${spec.processes}:${spec.processes}`);
  if (by.memory === 'rlimit') limits.push(`--data=${spec.memoryBytes}:${spec.memoryBytes}`);
  // The signals the runner's start ignored (so a time-out does not end bwrap) are the command's again.
  a.push(systemTool('env'), '--default-signal=TERM,INT,HUP');
  if (limits.length > 0) a.push(systemTool('prlimit'), ...limits, '--');
  // Started by a shell, as an unsandboxed run is: a missing program is reported the same way.
  a.push('/bin/sh', '-c', 'exec "$@"', 'avfs-exec', ...argv);
  return a;
}
