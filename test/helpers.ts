/** Shared test helpers: temp homes, the real CLI as a child process, vaults on real SQLite files. */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AvfsError } from '../host/protocol/errors';
import type { BackendKind } from '../host/store/backend';
import { AvfsHome } from '../host/store/home';
import type { Vault } from '../host/store/vault';
import { Vfs } from '../host/vfs/vfs';

export const ROOT = join(__dirname, '..');
export const CLI = join(ROOT, 'dist', 'avfs.js');

export function tempDir(prefix = 'avfs-test-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A fresh avfs home with one vault, opened through the path API. */
/** A vault in a temporary home, on the default backend (or `backend`, for tests of one engine's file). */
export function tempVault(name = 'test', backend?: BackendKind): { home: AvfsHome; vault: Vault; vfs: Vfs; dir: string; cleanup: () => void } {
  const t = tempDir();
  const home = new AvfsHome(t.dir);
  const vault = home.create(name, {}, backend);
  return {
    home,
    vault,
    vfs: new Vfs(vault),
    dir: t.dir,
    cleanup: () => {
      vault.close();
      t.cleanup();
    },
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  stdoutBytes: Buffer;
}

export interface RunOptions {
  home: string;
  input?: string | Buffer;
  env?: Record<string, string>;
  /** Run as this user (tests run as root here; file permissions only bind other users). */
  user?: { uid: number; gid: number };
}

/** Runs the built `avfs` binary as a user would. */
export function runCli(args: string[], opts: RunOptions): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { ...process.env, AVFS_HOME: opts.home, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(opts.user ? { uid: opts.user.uid, gid: opts.user.gid } : {}),
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({ code: code ?? -1, stdout: stdoutBytes.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), stdoutBytes });
    });
    // A CLI that exits before it reads its input (a path refused at once) closes the pipe: EPIPE is no failure of the test.
    child.stdin.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') reject(e);
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** Runs the CLI with --json and parses its single JSON document (failing if there is not exactly one). */
export async function runJson(args: string[], opts: RunOptions): Promise<{ code: number; json: Record<string, unknown>; stderr: string }> {
  const r = await runCli(['--json', ...args], opts);
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`stdout is not exactly one JSON document (exit ${r.code}):\n${r.stdout}\nstderr:\n${r.stderr}`);
  }
  return { code: r.code, json, stderr: r.stderr };
}

/**
 * A user that file permissions bind: `nobody` when the tests run as root (who may write anything),
 * else the current user. `own(path)` hands a tree to that user.
 */
export function unprivileged(): { user: { uid: number; gid: number } | undefined; own: (path: string) => void } {
  if (process.getuid?.() !== 0) return { user: undefined, own: () => undefined };
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'));
  if (!line) throw new Error('tests run as root and there is no user nobody to drop to');
  const [, , uid, gid] = line.split(':');
  const user = { uid: Number(uid), gid: Number(gid) };
  const own = (path: string): void => {
    chownSync(path, user.uid, user.gid);
    if (statSync(path).isDirectory()) for (const n of readdirSync(path)) own(join(path, n));
  };
  return { user, own };
}

/** The kind of the AvfsError that `fn` throws, or 'no error' (anything else is rethrown). */
export function errorKind(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof AvfsError) return e.kind;
    throw e;
  }
  return 'no error';
}

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Everything a user could observe about a tree: per path its type, mode, size, mtime, inode, bytes or link target. */
export function treeState(vfs: Vfs): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const e of vfs.readdir(dir)) {
      const p = dir === '/' ? `/${e.name}` : `${dir}/${e.name}`;
      const st = vfs.stat(p, false);
      const body =
        st.type === 'file' ? createHash('sha256').update(vfs.readFile(p)).digest('hex') : st.type === 'symlink' ? `-> ${st.target}` : '';
      out[p] = `${st.type} ${st.mode} ${st.size} ${st.mtime_ns} ino=${st.ino} nlink=${st.nlink} ${body}`;
      if (st.type === 'directory') walk(p);
    }
  };
  walk('/');
  return out;
}
