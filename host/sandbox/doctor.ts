/** What `avfs doctor` reports of the sandbox: whether runs can be isolated here, how, and why not. */
import { join } from 'node:path';
import { homedir } from 'node:os';
import type { SandboxMode } from '../protocol/sandbox';
import { makeRunCgroups } from './limits';
import { homeReadOnly, loadSandboxSettings, SANDBOX_SETTINGS_FILE, shownToolFolders } from './plan';
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
  limits: { processes: number; processes_by: 'cgroup' | 'rlimit' | 'pid_namespace' | null; memory_by: 'cgroup' | 'rlimit' | null };
  settings_file: string;
  home_read_only: string[];
  /** The folders of the tools this PATH names that runs are shown read-only (a version manager's, a toolchain's under the home). */
  tool_folders: string[];
  settings_error: string | null;
}

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
    limits: { processes, processes_by: by.processes, memory_by: by.memory },
    settings_file: join(avfsHome, SANDBOX_SETTINGS_FILE),
    home_read_only: shown,
    tool_folders: shownToolFolders(process.env, homedir(), avfsHome),
    settings_error: settingsError,
  };
}
