/** What `avfs doctor` reports of the sandbox: whether runs can be isolated here, how, and why not. */
import { join } from 'node:path';
import { homedir } from 'node:os';
import type { SandboxMode } from '../protocol/sandbox';
import type { LimitsBy } from './bwrap';
import { makeRunCgroups } from './limits';
import { homeReadOnly, loadSandboxSettings, SANDBOX_SETTINGS_FILE } from './plan';
import { sandboxSupport } from './probe';

export interface SandboxDiagnosis {
  ok: boolean;
  /** Mode a `proxy exec` gets by default. */
  default_mode: SandboxMode;
  tool: string | null;
  bwrap: string | null;
  user_namespace: boolean;
  reason: string | null;
  fallback: string | null;
  limits: { processes: number; processes_by: LimitsBy['processes']; memory_by: LimitsBy['memory']; processes_how: string };
  settings_file: string;
  home_read_only: string[];
  settings_error: string | null;
}

/** How each way of limiting a run's processes works here, in a sentence (docs/exec.md, "Limits on processes and memory"). */
const PROCESSES_HOW: Record<NonNullable<LimitsBy['processes']> | 'none', string> = {
  cgroup: 'a pids cgroup of each run: the kernel refuses forks past the limit and counts them',
  rlimit: 'RLIMIT_NPROC inside the run\'s user namespace: the kernel refuses forks past the limit, counted for the run alone',
  pid_namespace: 'as root with no cgroup to make: the pid_max of a pid namespace around the run (Linux 6.14 and later); the kernel refuses forks past it',
  watcher:
    'as root with no cgroup to make, on a kernel older than 6.14: no kernel limit can bind root here (RLIMIT_NPROC exempts uid 0, a pid namespace has no pid_max of its own, and mapping the run to another uid would change who owns what it writes), so the runner counts the run\'s processes every 20 ms and ends the run when it has reached the limit (it may pass it between two counts)',
  none: 'no limit on processes (no sandbox)',
};

export async function diagnoseSandbox(avfsHome: string): Promise<SandboxDiagnosis> {
  const s = await sandboxSupport(avfsHome, { fresh: true });
  let settingsError: string | null = null;
  let processes = 0;
  let shown: string[] = [];
  try {
    const settings = loadSandboxSettings(avfsHome);
    processes = settings.processes;
    shown = homeReadOnly(settings, homedir(), avfsHome);
  } catch (e) {
    settingsError = (e as Error).message;
  }
  // Made and removed at once: whether this machine lets a run have cgroups of its own.
  const cg = makeRunCgroups(processes || 1024, 2 ** 30, s.ok && s.pidMax);
  const by = cg.by;
  await cg.remove();
  return {
    ok: s.ok && settingsError === null,
    default_mode: s.ok ? 'workspace' : 'none',
    tool: s.ok ? s.version : null,
    bwrap: s.bwrap,
    user_namespace: s.ok ? s.userns : false,
    reason: s.ok ? settingsError : s.reason,
    fallback: s.ok
      ? null
      : 'runs default to --sandbox none (no isolation, recorded in the envelope; the policy judges code it cannot read as unsandboxed), and --sandbox workspace fails with SandboxUnavailable; install bubblewrap (and allow user namespaces for users other than root) to isolate them',
    limits: { processes, processes_by: by.processes, memory_by: by.memory, processes_how: PROCESSES_HOW[by.processes ?? 'none'] },
    settings_file: join(avfsHome, SANDBOX_SETTINGS_FILE),
    home_read_only: shown,
    settings_error: settingsError,
  };
}
