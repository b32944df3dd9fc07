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
 * Its filtering by host is built the same way here, with the policy's hosts (netProxy.ts): a run
 * with `allowHosts` gets the proxy's socket bound in, socat bridging to it, and the proxy variables.
 */
import { onPath } from './secrets';

/** Where a run with filtered network sees its proxy (netProxy.ts): the socket bound in, and the port socat listens on. */
export const PROXY_SOCKET_INSIDE = '/tmp/.avfs-proxy.sock';
export const PROXY_PORT_INSIDE = 3128;

export interface SandboxSpec {
  bwrap: string;
  /** Make a user namespace (needed when not root). */
  userns: boolean;
  mountpoint: string;
  /** Where the mount is bound inside: its real path (the same, unless a folder above it is a link). */
  mountAt?: string;
  readonly: boolean;
  /** Share the host's network (the run's network part was let run, for hosts unknown); else a namespace of its own. */
  network: boolean;
  /** The run's network part was let run for these hosts: a namespace of its own whose only way out is a proxy reaching them alone (netProxy.ts). */
  allowHosts: string[] | null;
  /** The private, empty home the run sees (the real one's path); null when there is none to hide (`/`, missing). */
  home: string | null;
  /** Where the private home is made: the home's real path (it differs where the home is a link). */
  homeAt: string | null;
  /** The home is a link in a place the sandbox covers: made again inside, to `homeAt`. */
  homeLink: boolean;
  /** Paths of the real home shown read-only (absolute, by their real paths; each exists). */
  homeReadOnly: string[];
  /** Folders of the tools the command's PATH names that the hiding above would cover, shown read-only (each exists; toolFolders.ts). */
  pathReadOnly: string[];
  /** Secrets inside those folders, covered again: a directory by an empty tmpfs, a file by an unreadable one. */
  hiddenAgain: Array<{ path: string; dir: boolean }>;
  /** PATH folders named through a link the hiding above covers, made again inside (toolFolders.ts). */
  pathLinks: Array<{ path: string; target: string }>;
  /** Directories covered by an empty tmpfs: the avfs home, its socket directory, other homes. */
  hide: string[];
  /** Files made unreadable (secrets of the system that root could read: /etc/shadow…): /dev/null bound over them, on a mount without devices, fails to open. */
  maskFiles: string[];
  /** Most processes (threads count) at once; RLIMIT_NPROC inside the user namespace when no cgroup does it. */
  processes: number;
  /** Most memory: the cgroup's limit, or RLIMIT_DATA of each process when no cgroup does it. */
  memoryBytes: number;
  /** A pid namespace's own pid_max can be set here (Linux 6.14): the process limit as root when no cgroup can be made. */
  pidMax: boolean;
  /**
   * The size of the run's writable tmpfs mounts (`/tmp`, the home; `/dev/shm` half of it), or null
   * where this bwrap cannot size them (`--size`: bubblewrap ≥ 0.8). A tmpfs is half the machine's
   * memory by default, and what is written there is no process's memory: RLIMIT_DATA does not
   * count it (only a memory cgroup, as root, does).
   */
  tmpfsBytes: number | null;
}

/** The size of a tmpfs that only covers a place (an empty folder over a secret one). */
const COVER_BYTES = 1 << 20;

/** Whether `version` (`bubblewrap 0.8.0`, what the probe read) has `--size`. */
export const bwrapSizesTmpfs = (version: string): boolean => {
  const m = /(\d+)\.(\d+)/.exec(version);
  return !!m && (Number(m[1]) > 0 || Number(m[2]) >= 8);
};

const tools = new Map<string, string>();

/**
 * A system program the sandbox runs around the command (env, prlimit, unshare), by its real path: a
 * PATH entry the sandbox hides (a folder under /tmp or the home linking to /usr/bin) cannot lose it.
 */
export function systemTool(name: string): string {
  let found = tools.get(name);
  if (found === undefined) {
    found = onPath(name, process.env.PATH ?? '')?.real ?? `/usr/bin/${name}`;
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

/**
 * Inside a run with filtered network: socat listens on 127.0.0.1:3128 and bridges each connection
 * to the proxy's socket; the command starts once it listens (seen in the run's own /proc/net/tcp:
 * 0100007F:0C38, state 0A).
 */
const bridge = () => `${systemTool('socat')} TCP-LISTEN:${PROXY_PORT_INSIDE},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${PROXY_SOCKET_INSIDE} 2>/dev/null & i=0; until ${systemTool('grep')} -q ' 0100007F:${PROXY_PORT_INSIDE.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A' /proc/net/tcp; do i=$((i+1)); [ $i -lt 5000 ] || break; done; exec "$@"`;

/** What of /proc changes the host rather than the run's own processes (see bwrapArgv). */
export const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];

/**
 * How the command starts inside: through `sh -c 'exec "$@"'`, so a
 * missing program is reported (and a script without `#!` run) as an unsandboxed run's start shell
 * does; a command that is shell text already (`bash -c TEXT`, the `--shell` form every agent
 * surface sends) reports its own, and starts one exec sooner (~0.5-1 ms here).
 */
export const commandStart = (argv: string[]): string[] => (argv[0] === 'bash' && argv[1] === '-c' ? argv : ['/bin/sh', '-c', 'exec "$@"', 'avfs-exec', ...argv]);

/** `bwrap …` then the command, which starts in `cwd` (a path inside the mount); `proxySocket`: the filtering proxy's socket, with `allowHosts`. */
export function bwrapArgv(spec: SandboxSpec, cwd: string, argv: string[], by: LimitsBy, proxySocket?: string): string[] {
  const a: string[] = [...(by.processes === 'pid_namespace' ? pidNamespacePrefix(spec) : []), spec.bwrap];
  if (spec.userns) a.push('--unshare-user');
  // A pid namespace: whatever the command leaves running (setsid included) ends with it. An IPC
  // namespace: no System V or POSIX shared memory of the host's processes. No UTS or cgroup
  // namespace (a few ms each): without capabilities a run can change neither the host name nor a
  // cgroup, and /sys/fs/cgroup is read-only.
  a.push('--unshare-pid', '--unshare-ipc', '--die-with-parent');
  if (!spec.network) a.push('--unshare-net');
  // As root bwrap would keep every capability: none, so the mounts below cannot be undone from inside.
  a.push('--cap-drop', 'ALL');
  a.push('--ro-bind', '/', '/', '--proc', '/proc');
  // The kernel's settings and triggers in the run's own /proc, read-only: a sysctl asks only that
  // its writer be uid 0 (no capability), so root's run could otherwise set the host's name or
  // core_pattern (a program the kernel runs as root, outside every namespace). bwrap covers these
  // only where access(W_OK) says it may write them, which /proc/sys's folders deny even to root.
  for (const p of PROC_READ_ONLY) a.push('--ro-bind-try', p, p);
  // Each tmpfs sized where bwrap can: what a run writes in them is bounded, whoever runs it.
  const tmpfs = (dest: string, bytes: number) => [...(spec.tmpfsBytes ? ['--size', String(bytes)] : []), '--tmpfs', dest];
  const writable = spec.tmpfsBytes ?? 0;
  a.push('--dev', '/dev', ...tmpfs('/dev/shm', Math.floor(writable / 2)), ...tmpfs('/tmp', writable));
  for (const d of spec.hide) a.push(...tmpfs(d, COVER_BYTES));
  for (const f of spec.maskFiles) a.push('--ro-bind', '/dev/null', f);
  if (spec.home) a.push(...tmpfs(spec.homeAt ?? spec.home, writable));
  if (spec.home && spec.homeAt && spec.homeLink) a.push('--symlink', spec.homeAt, spec.home);
  for (const p of spec.homeReadOnly) a.push('--ro-bind', p, p);
  for (const p of spec.pathReadOnly) a.push('--ro-bind', p, p);
  for (const h of spec.hiddenAgain) a.push(...(h.dir ? tmpfs(h.path, COVER_BYTES) : ['--ro-bind', '/dev/null', h.path]));
  for (const l of spec.pathLinks) a.push('--symlink', l.target, l.path);
  a.push(spec.readonly ? '--ro-bind' : '--bind', spec.mountpoint, spec.mountAt ?? spec.mountpoint);
  if (proxySocket) {
    const url = `http://127.0.0.1:${PROXY_PORT_INSIDE}`;
    a.push('--bind', proxySocket, PROXY_SOCKET_INSIDE);
    for (const v of ['http_proxy', 'https_proxy', 'HTTP_PROXY', 'HTTPS_PROXY']) a.push('--setenv', v, url);
    for (const v of ['no_proxy', 'NO_PROXY', 'all_proxy', 'ALL_PROXY']) a.push('--unsetenv', v);
  }
  a.push('--chdir', cwd, '--');
  // The limits bwrap has no option for, set inside (after the user namespace exists, so the
  // process count is the run's own, not its user's) and for good: hard limits, and no capability
  // to raise them.
  const limits: string[] = [];
  if (by.processes === 'rlimit') limits.push(`--nproc=${spec.processes}:${spec.processes}`);
  if (by.memory === 'rlimit') limits.push(`--data=${spec.memoryBytes}:${spec.memoryBytes}`);
  if (limits.length > 0) a.push(systemTool('prlimit'), ...limits, '--');
  // Started by a shell, as an unsandboxed run is (commandStart); with filtered network, one that bridges to the proxy first.
  a.push(...(proxySocket ? ['/bin/sh', '-c', bridge(), 'avfs-exec', ...argv] : commandStart(argv)));
  return a;
}
