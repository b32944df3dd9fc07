/**
 * Whether bubblewrap can isolate a run on this machine, and why not. The probe starts bwrap with
 * the same kinds of namespaces a run gets and a command that does nothing (two execs of bwrap,
 * some 15-20 ms on a loaded machine). Its answer is kept in the process (the host, a mount server
 * and the runner ask once) and on disk in the avfs home (`sandbox-probe.json`), keyed by what the
 * answer depends on: the bwrap binary (path, device, inode, size, change times), this user, this
 * boot, and the kernel settings that allow user namespaces. A one-shot CLI call reads the file
 * instead of starting bwrap twice; anything in the key that changes makes it probe again.
 * `avfs doctor` always probes afresh (and rewrites the file). The avfs home is hidden from runs,
 * and the file holds no path that is ever executed: bwrap is the one found on PATH.
 */
import { execFile } from 'node:child_process';
import { readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { onPath } from './secrets';

export type SandboxSupport =
  | { ok: true; bwrap: string; version: string; userns: boolean; /** A pid namespace's own pid_max can be set (Linux ≥ 6.14): the process limit as root without a cgroup. */ pidMax: boolean }
  | { ok: false; reason: string; bwrap: string | null };

export const PROBE_CACHE_FILE = 'sandbox-probe.json';

/** bwrap on PATH: where it is, or null. */
const findBwrap = (): string | null => onPath('bwrap', process.env.PATH ?? '')?.path ?? null;

/** As root bwrap makes its namespaces itself; any other user needs a user namespace. */
export const needsUserNamespace = (): boolean => typeof process.getuid === 'function' && process.getuid() !== 0;

const run = (file: string, args: string[]) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (e, out, err) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out, err }));
  });

/** Whether a new pid namespace's own pid_max can be lowered here (per-namespace pid_max, Linux 6.14). */
async function pidMaxWorks(): Promise<boolean> {
  if (needsUserNamespace()) return false;
  const r = await run('unshare', ['--pid', '--fork', '/bin/sh', '-c', 'echo 400 > /proc/sys/kernel/pid_max && [ "$(cat /proc/sys/kernel/pid_max)" = 400 ]']);
  return r.code === 0;
}

async function probe(bwrap: string | null): Promise<SandboxSupport> {
  if (!bwrap) return { ok: false, bwrap: null, reason: 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap' };
  const userns = needsUserNamespace();
  const pidMax = pidMaxWorks();
  const version = (await run(bwrap, ['--version'])).out.trim() || 'bubblewrap';
  const args = [...(userns ? ['--unshare-user'] : []), '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--cap-drop', 'ALL', '--', '/bin/true'];
  const r = await run(bwrap, args);
  if (r.code === 0) return { ok: true, bwrap, version, userns, pidMax: await pidMax };
  const why = r.err.trim().split('\n').pop() ?? `exit ${r.code}`;
  const hint = userns ? ' (as a user other than root bwrap needs user namespaces: sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)' : '';
  return { ok: false, bwrap, reason: `${version} cannot make a sandbox here: ${why}${hint}` };
}

const readOr = (file: string, or = '') => {
  try {
    return readFileSync(file, 'utf8').trim();
  } catch {
    return or;
  }
};

/** What the probe's answer depends on, as one string: a cached answer for another key is not used. */
export function probeKey(bwrap: string | null): string {
  let binary = 'none';
  if (bwrap) {
    try {
      const real = realpathSync(bwrap);
      const s = statSync(real);
      binary = `${bwrap}=${real}:${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.mode}`;
    } catch {
      binary = `${bwrap}:unreadable`;
    }
  }
  const sysctls = ['kernel/unprivileged_userns_clone', 'user/max_user_namespaces', 'kernel/apparmor_restrict_unprivileged_userns', 'kernel/osrelease'].map((k) => readOr(`/proc/sys/${k}`, '-'));
  return ['probe=2', binary, `uid=${process.getuid?.() ?? '-'}`, `boot=${readOr('/proc/sys/kernel/random/boot_id', '-')}`, ...sysctls].join('|');
}

function readCache(file: string, key: string, bwrap: string | null): SandboxSupport | undefined {
  try {
    const c = JSON.parse(readFileSync(file, 'utf8')) as { key?: unknown; support?: SandboxSupport };
    if (c.key !== key || !c.support || typeof c.support.ok !== 'boolean') return undefined;
    // The binary is the one found now (the key says it is the same file), never a path from the file.
    return c.support.ok ? { ...c.support, bwrap: bwrap! } : { ...c.support, bwrap };
  } catch {
    return undefined;
  }
}

/** Into an avfs home that exists (a policy check does not make one). */
function writeCache(file: string, key: string, support: SandboxSupport): void {
  try {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, support }) + '\n', { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    /* a home that cannot be written: probe next time */
  }
}

let cached: Promise<SandboxSupport> | undefined;

/**
 * The answer for this process (probed at the first call). With `avfsHome`, an answer on disk for
 * the same key serves a new process; `fresh` probes whatever is kept (avfs doctor).
 */
export function sandboxSupport(avfsHome?: string, opts: { fresh?: boolean } = {}): Promise<SandboxSupport> {
  if (cached && !opts.fresh) return cached;
  const bwrap = findBwrap();
  const key = avfsHome ? probeKey(bwrap) : '';
  const file = avfsHome ? join(avfsHome, PROBE_CACHE_FILE) : '';
  const hit = avfsHome && !opts.fresh ? readCache(file, key, bwrap) : undefined;
  cached = hit
    ? Promise.resolve(hit)
    : probe(bwrap).then((s) => {
        if (avfsHome) writeCache(file, key, s);
        return s;
      });
  return cached;
}
