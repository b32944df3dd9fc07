/**
 * What a `workspace` sandbox holds for one run: made by the pipeline (which knows the avfs home,
 * the mount and the policy's decision) and handed to the runner as a SandboxSpec. The user's
 * settings are `<avfs home>/sandbox.json` (docs/exec.md): the allow-list of home paths shown
 * read-only and the limits. A path that would show a secret (keys, tokens, cloud credentials,
 * the avfs home) is refused even when listed, also through a symlink.
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { z } from 'zod';
import { AvfsError } from '../protocol/errors';
import type { SandboxRecord } from '../protocol/sandbox';
import type { SandboxSpec } from './bwrap';
import { cachedPlanPart } from './planCache';
import { isAvoided, look, normPath, outside, real, realIfThere, SECRET_SYSTEM_FILES, secretsInside, secretsOf, secretWhy, within } from './secrets';
import { toolFolders } from './toolFolders';

export const SANDBOX_SETTINGS_FILE = 'sandbox.json';
export const DEFAULT_HOME_READ_ONLY = ['.gitconfig', '.config/git'];
export const DEFAULT_PROCESSES = 1024;

const Settings = z.strictObject({
  home_read_only: z.array(z.string().min(1)).default(DEFAULT_HOME_READ_ONLY).describe('paths under the home, shown read-only inside runs'),
  processes: z.number().int().min(16).max(1_000_000).default(DEFAULT_PROCESSES),
  memory_mb: z.number().int().min(64).optional().describe('default: half of this machine\'s memory, at most 8192'),
});
export type SandboxSettings = z.output<typeof Settings>;

export function loadSandboxSettings(avfsHome: string): SandboxSettings {
  const file = join(avfsHome, SANDBOX_SETTINGS_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    // No file: the defaults, without zod's parse (~0.4 ms of a cold call); the same as parsing `{}` (plan.test.ts).
    return { home_read_only: [...DEFAULT_HOME_READ_ONLY], processes: DEFAULT_PROCESSES };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AvfsError('InvalidInput', `${file} is not JSON: ${(e as Error).message}`, { file });
  }
  const r = Settings.safeParse(json);
  if (!r.success) throw new AvfsError('InvalidInput', `${file}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, { file });
  return r.data;
}

/** The home paths to show read-only: each listed one that exists, is under the home, and holds no secret. */
export function homeReadOnly(settings: SandboxSettings, home: string, avfsHome: string, secrets = secretsOf(home, avfsHome)): string[] {
  const out: string[] = [];
  for (const entry of settings.home_read_only) {
    const rel = entry.startsWith('~/') ? entry.slice(2) : entry;
    const p = normPath(isAbsolute(rel) ? rel : join(home, rel));
    if (!within(p, secrets.home) || p === secrets.home) throw new AvfsError('InvalidInput', `sandbox.json: home_read_only ${JSON.stringify(entry)} is not a path under the home (${home})`, { field: 'home_read_only', value: entry });
    const why = secretWhy(p, secrets);
    if (why) throw new AvfsError('InvalidInput', `sandbox.json: home_read_only ${JSON.stringify(entry)} is never shown to a run: ${why}`, { field: 'home_read_only', value: entry });
    // Not followed into the run's mount (realIfThere inside planSandbox's outside()), nor shown from there: the mount is in sight already.
    const r = realIfThere(p);
    if (r !== null && !isAvoided(r)) out.push(p);
  }
  return out;
}

export interface PlanInput {
  bwrap: string;
  userns: boolean;
  avfsHome: string;
  home: string;
  mountpoint: string;
  readonly: boolean;
  network: boolean;
  /** With `network`: the only hosts the run may reach (through the proxy), or null for the whole network. */
  allowHosts?: string[] | null;
  settings: SandboxSettings;
  /** The caller's environment (not a request's additions): the tools its PATH (and TOOL_VARS) name that the sandbox would hide are shown read-only (toolFolders.ts). */
  env: Record<string, string | undefined>;
  /** A pid namespace's own pid_max can be set here (probe.ts). */
  pidMax: boolean;
  /** This bwrap sizes tmpfs mounts (`--size`, bwrapSizesTmpfs of the probe's version). */
  tmpfsSize?: boolean;
}

/** The uid that names the socket directory (host/store/socketPath.ts), without os.userInfo()'s passwd lookup per run. */
const uid = () => process.getuid?.() ?? -1;

/** The socket directory for long paths (host/store/socketPath.ts). */
const socketDir = () => join(tmpdir(), `avfs-${uid()}`);

/** The directories a run must not see: the avfs home, its socket directory, every home. */
function hidden(avfsHome: string, home: string): string[] {
  const candidates = [real(avfsHome), socketDir(), '/home', '/root', '/run', '/var/run'];
  const covered = ['/tmp', home, real(home)];
  const out: string[] = [];
  for (const c of candidates) {
    // (What is under a place covered whole is not looked at: /tmp's entries change all the time.)
    if (c === '/' || covered.some((d) => within(c, d)) || out.some((d) => within(c, d)) || !look.exists(c)) continue;
    // A symlink (/var/run → /run) is covered through its target.
    if (real(c) !== c) continue;
    out.push(c);
  }
  return out;
}

/** The home a run gets a private one for: not `/` (some service users: that would hide the system), nor a missing one (it holds nothing). */
const privateHome = (home: string): string | null => {
  const h = isAbsolute(home) ? normPath(home) : '/';
  return h !== '/' && look.exists(h) ? h : null;
};

/**
 * What a plan hides and shows of the home, and the tools `env` names: one reading for a run's plan
 * and for `avfs doctor`. A home that is a link (/home/me → /data/me) is made private where it
 * leads (`homeAt`); paths are shown by their real paths (a bind through a link inside the new root
 * would follow it outside). `mounts`: the run's mount (by its path and its real one), never looked into.
 */
function homePlan(home0: string, avfsHome: string, env: Record<string, string | undefined>, mounts: string[] = []) {
  const home = privateHome(home0);
  const hide = hidden(avfsHome, home ?? '/nonexistent');
  const secrets = secretsOf(home ?? '/nonexistent', avfsHome);
  const homeAt = home && real(home);
  const tools = toolFolders({ env, home: homeAt, secrets, hide, avoid: [...mounts, socketDir()] });
  return { home, homeAt, hide, secrets, tools };
}

/** The folders of the tools `env` names that a run's sandbox shows read-only (for `avfs doctor`). */
export const shownToolFolders = (env: Record<string, string | undefined>, home: string, avfsHome: string): string[] => homePlan(home, avfsHome, env).tools.shown;

/**
 * The sandbox of one run. Every link the plan resolves is followed by hand and never into the
 * run's mount (secrets.ts outside()): the process making the plan may be the one serving it.
 */
export function planSandbox(i: PlanInput): SandboxSpec {
  // Where the mount is bound inside: its folder's real path, not the mount's own (resolving that
  // would ask the mount, which this very process may serve). Under a linked folder it differs
  // from the mountpoint's path, and the plan avoids it by either.
  const mountAt = outside([i.mountpoint], () => join(real(dirname(i.mountpoint)), basename(i.mountpoint)));
  const mounts = [...new Set([normPath(i.mountpoint), mountAt])];
  return outside(mounts, () => planIn(i, mounts, mountAt));
}

/** What a plan shows and hides of the home and the system: all of it but the run's own mount and limits (kept by planCache.ts). */
export interface PlanPart {
  home: string | null;
  homeAt: string | null;
  homeLink: boolean;
  homeReadOnly: string[];
  hide: string[];
  pathReadOnly: string[];
  hiddenAgain: Array<{ path: string; dir: boolean }>;
  pathLinks: Array<{ path: string; target: string }>;
}

function planPart(i: PlanInput, mounts: string[]): PlanPart {
  const { home, homeAt, hide, secrets, tools } = homePlan(i.home, i.avfsHome, i.env, mounts);
  const shownHome = home ? homeReadOnly(i.settings, home, i.avfsHome, secrets).map(real) : [];
  // A shown home folder's secrets (~/.config/git/credentials), covered again after it is bound.
  const hiddenAgain = [...tools.hiddenAgain];
  for (const f of shownHome) {
    for (const p of secretsInside(f, secrets)) if (!hiddenAgain.some((h) => within(p, h.path))) hiddenAgain.push({ path: p, dir: look.isDir(p) });
  }
  return {
    home,
    homeAt,
    homeLink: home !== null && homeAt !== home && ['/tmp', ...hide].some((d) => within(home, d)),
    homeReadOnly: shownHome,
    hide,
    pathReadOnly: tools.shown,
    hiddenAgain,
    pathLinks: tools.links,
  };
}

function planIn(i: PlanInput, mounts: string[], mountAt: string): SandboxSpec {
  const part = cachedPlanPart(i, mounts, () => planPart(i, mounts));
  const memory = (i.settings.memory_mb ?? Math.min(8192, Math.floor(totalmem() / 2 / 2 ** 20))) * 2 ** 20;
  return {
    bwrap: i.bwrap,
    userns: i.userns,
    mountpoint: i.mountpoint,
    mountAt,
    readonly: i.readonly,
    network: i.network && !i.allowHosts,
    allowHosts: i.network && i.allowHosts ? i.allowHosts : null,
    ...part,
    maskFiles: SECRET_SYSTEM_FILES.filter((f) => existsSync(f)),
    processes: i.settings.processes,
    memoryBytes: memory,
    pidMax: i.pidMax,
    // The run's writable tmpfs mounts: half its memory limit each (/dev/shm a quarter).
    tmpfsBytes: i.tmpfsSize ? Math.floor(memory / 2) : null,
  };
}

/** The envelope's record of a sandboxed run (the limits and violations come from the runner). */
export function sandboxRecordOf(spec: SandboxSpec, tool: string, networkWhy: string): SandboxRecord {
  return {
    mode: 'workspace',
    tool,
    writable: [...(spec.readonly ? [] : [spec.mountpoint]), '/tmp (private)', '/dev/shm (private)', ...(spec.home ? [`${spec.home} (private)`] : [])],
    network: spec.allowHosts ? 'filtered' : spec.network ? 'shared' : 'none',
    network_hosts: spec.allowHosts ?? [],
    network_why: networkWhy,
    note: null,
    home: spec.home,
    home_read_only: spec.homeReadOnly,
    path_read_only: spec.pathReadOnly,
    limits: { processes: null, processes_by: null, memory_bytes: null, memory_by: null },
    violations: [],
  };
}

/** The record of a run with `--sandbox none`. */
export function unsandboxedRecord(mountpoint: string | null, why: string): SandboxRecord {
  return {
    mode: 'none',
    tool: null,
    writable: ['everything this user can write', ...(mountpoint ? [mountpoint] : [])],
    network: 'shared',
    network_hosts: [],
    network_why: 'not isolated',
    note: why,
    home: null,
    home_read_only: [],
    path_read_only: [],
    limits: { processes: null, processes_by: null, memory_bytes: null, memory_by: null },
    violations: [],
  };
}
