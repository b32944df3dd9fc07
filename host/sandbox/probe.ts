/**
 * Whether bubblewrap can isolate a run on this machine, and why not. Asked once per process
 * (the host, a mount server and the runner keep the answer; a one-shot CLI call asks once): the
 * probe starts bwrap with the same kinds of namespaces a run gets and a command that does nothing.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

export type SandboxSupport = { ok: true; bwrap: string; version: string; userns: boolean } | { ok: false; reason: string; bwrap: string | null };

/** bwrap on PATH: where it is, or null. */
function findBwrap(): string | null {
  const dirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const d of dirs) {
    const p = join(d, 'bwrap');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      /* next */
    }
  }
  return null;
}

/** As root bwrap makes its namespaces itself; any other user needs a user namespace. */
export const needsUserNamespace = (): boolean => typeof process.getuid === 'function' && process.getuid() !== 0;

const run = (file: string, args: string[]) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    execFile(file, args, { timeout: 10_000 }, (e, out, err) => resolve({ code: e ? (typeof e.code === 'number' ? e.code : 1) : 0, out, err }));
  });

async function probe(): Promise<SandboxSupport> {
  const bwrap = findBwrap();
  if (!bwrap) return { ok: false, bwrap: null, reason: 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap' };
  const userns = needsUserNamespace();
  const version = (await run(bwrap, ['--version'])).out.trim() || 'bubblewrap';
  const args = [...(userns ? ['--unshare-user'] : []), '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--cap-drop', 'ALL', '--', '/bin/true'];
  const r = await run(bwrap, args);
  if (r.code === 0) return { ok: true, bwrap, version, userns };
  const why = r.err.trim().split('\n').pop() ?? `exit ${r.code}`;
  const hint = userns ? ' (as a user other than root bwrap needs user namespaces: sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0)' : '';
  return { ok: false, bwrap, reason: `${version} cannot make a sandbox here: ${why}${hint}` };
}

let cached: Promise<SandboxSupport> | undefined;

/** The answer for this process (probed at the first call). */
export function sandboxSupport(): Promise<SandboxSupport> {
  return (cached ??= probe());
}
