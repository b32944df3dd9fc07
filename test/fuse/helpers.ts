/**
 * FUSE test helpers. Mounts are served by the real `avfs mount` in a separate process; this
 * process only touches them asynchronously (spawned tools, fs.promises), never with *Sync calls.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, constants, mkdirSync, openSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pidAlive } from '../../host/fuse/registry';
import { AvfsHome } from '../../host/store/home';
import { CLI, runJson, tempDir } from '../helpers';

/**
 * Why mount tests cannot run on this machine, or undefined when they can: `/dev/fuse` must be the
 * FUSE character device (10, 229) and openable, and `fusermount` must be on PATH. Suites pass it
 * as `{ skip }`, so a machine without FUSE reports them skipped with this reason; where FUSE is
 * there (as on CI), they run.
 */
export const fuseMissing: string | undefined = (() => {
  try {
    const st = statSync('/dev/fuse');
    if (!st.isCharacterDevice() || st.rdev !== (10 << 8) + 229) return 'FUSE tests skipped: /dev/fuse is not the FUSE device (10, 229)';
    closeSync(openSync('/dev/fuse', constants.O_RDWR));
  } catch (e) {
    return `FUSE tests skipped: /dev/fuse cannot be opened (${(e as NodeJS.ErrnoException).code ?? String(e)})`;
  }
  const fm = spawnSync('fusermount', ['-V'], { stdio: 'ignore' });
  if (fm.error) return `FUSE tests skipped: fusermount is not on PATH (${(fm.error as NodeJS.ErrnoException).code ?? fm.error.message}); install fuse3`;
  return undefined;
})();

export interface ShResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command asynchronously (never execSync into a mount). */
export function sh(cmd: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; input?: string; timeoutMs?: number } = {}): Promise<ShResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    // A tool that exits without reading its input must not fail the test with EPIPE.
    child.stdin.on('error', () => undefined);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** `bash -c SCRIPT` that must succeed; returns stdout. */
export async function bash(script: string, cwd: string, env: Record<string, string> = {}): Promise<string> {
  const r = await sh('bash', ['-euo', 'pipefail', '-c', script], { cwd, env });
  if (r.code !== 0) throw new Error(`bash failed (${r.code}): ${script}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r.stdout;
}

export interface MountFixture {
  home: string;
  vault: string;
  mnt: string;
  /** The mount server's pid. */
  pid: number;
  dir: string;
  cli: (args: string[]) => ReturnType<typeof runJson>;
  cleanup: () => Promise<void>;
}

/** A temp avfs home with a vault mounted through the real CLI. */
export async function mountFixture(opts: { vault?: string; readonly?: boolean; quotas?: Record<string, number>; extraArgs?: string[] } = {}): Promise<MountFixture> {
  const t = tempDir('avfs-fuse-');
  const vault = opts.vault ?? 'v';
  const home = join(t.dir, 'home');
  const h = new AvfsHome(home);
  const v = h.create(vault, opts.quotas ?? {});
  v.close();
  const mnt = join(t.dir, 'mnt');
  mkdirSync(mnt);
  const cli = (args: string[]) => runJson(args, { home });
  const r = await cli(['mount', vault, mnt, ...(opts.readonly ? ['--readonly'] : []), ...(opts.extraArgs ?? [])]);
  if (r.code !== 0) {
    t.cleanup();
    throw new Error(`mount failed: ${JSON.stringify(r.json)} ${r.stderr}`);
  }
  return {
    home,
    vault,
    mnt,
    pid: r.json.pid as number,
    dir: t.dir,
    cli,
    cleanup: async () => {
      await forceUnmount(home, mnt);
      t.cleanup();
    },
  };
}

/** Unmounts through the CLI, then `fusermount -uz` whatever is left (also after failures). */
export async function forceUnmount(home: string, mnt: string): Promise<void> {
  await sh(process.execPath, [CLI, 'unmount', mnt, '--timeout', '5000'], { env: { AVFS_HOME: home } }).catch(() => undefined);
  await sh('fusermount', ['-uz', mnt]).catch(() => undefined);
}

export { pidAlive };

export async function waitFor(cond: () => boolean | Promise<boolean>, timeoutMs: number, stepMs = 20): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return cond();
}
