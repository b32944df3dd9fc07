/**
 * Mount servers: a mount that outlives the command that asked for it is served by its own
 * process (`avfs mount VAULT DIR --foreground --ready-fd 3`, detached), so the asking process
 * never serves a mount it also uses, and a host serving RPC never serves FUSE. The server reports
 * on fd 3 once the kernel shows the mount ready (or why it failed); stopping it unmounts.
 */
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { resolve } from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { AvfsHome } from '../store/home';
import { lazyUnmount, mountEntry, type MountRecord, MountRegistry, pidAlive } from './registry';
import { makePrivateDir, openPrivate } from '../store/privateFs';

export interface ServerOptions {
  readonly?: boolean;
  /** Let other users reach the mount (the kernel's permission checks apply). */
  allowOther?: boolean;
  /** How long the kernel may cache names and attributes, in ms. */
  cacheMs?: number;
}

/** The `avfs` entry script that this process runs (dist/avfs.js), to start a server with. */
function avfsScript(): string {
  const script = process.env.AVFS_CLI_SCRIPT ?? process.argv[1];
  if (!script) throw new AvfsError('Internal', 'cannot tell which avfs script to start a mount server with');
  return script;
}

/** Starts a detached mount server and resolves once the mount is ready (its first line on fd 3). */
export async function startMountServer(home: AvfsHome, vault: string, mountpoint: string, opts: ServerOptions = {}): Promise<MountRecord> {
  const registry = new MountRegistry(home);
  makePrivateDir(registry.dir);
  const logFile = registry.logOf(mountpoint);
  const logFd = openPrivate(logFile, 'a');
  const args = [...process.execArgv, avfsScript(), 'mount', vault, mountpoint, '--foreground', '--ready-fd', '3'];
  if (opts.readonly) args.push('--readonly');
  if (opts.allowOther) args.push('--allow-other');
  if (opts.cacheMs !== undefined) args.push('--cache-ms', String(opts.cacheMs));
  const child = spawn(process.execPath, args, {
    detached: true,
    stdio: ['ignore', logFd, logFd, 'pipe'],
    env: { ...process.env, AVFS_HOME: home.dir },
  });
  closeSync(logFd);
  const pipe = child.stdio[3] as NodeJS.ReadableStream & { destroy(): void };
  const line = await new Promise<string>((res, rej) => {
    let buf = '';
    const timer = setTimeout(
      () => rej(new AvfsError('MountError', `the mount server did not report within 30 s (log: ${logFile})`, { mountpoint, log: logFile })),
      30_000,
    );
    pipe.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        res(buf.slice(0, nl));
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (!buf.includes('\n')) {
        rej(new AvfsError('MountError', `the mount server exited with code ${code} before the mount was ready (log: ${logFile})`, { mountpoint, log: logFile }));
      }
    });
  });
  pipe.destroy();
  child.unref();
  const msg = JSON.parse(line) as { ok: true; record: MountRecord } | { ok: false; error: { error: string; message: string } & Record<string, unknown> };
  if (!msg.ok) {
    const { error: kind, message, ...details } = msg.error;
    throw new AvfsError(kind as AvfsError['kind'], message, details);
  }
  return msg.record;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Stops the server of the mount at `mountpoint` (SIGTERM, SIGKILL after `timeoutMs`) and clears what is left. */
export async function stopMount(home: AvfsHome, mountpoint: string, timeoutMs: number) {
  const registry = new MountRegistry(home);
  const mp = resolve(mountpoint);
  const rec = registry.read(mp);
  let unmounted = false;
  if (rec && pidAlive(rec.pid)) {
    process.kill(rec.pid, 'SIGTERM');
    const deadline = Date.now() + timeoutMs;
    while (pidAlive(rec.pid) && Date.now() < deadline) await sleep(25);
    if (pidAlive(rec.pid)) process.kill(rec.pid, 'SIGKILL');
    unmounted = true;
  }
  const entry = mountEntry(mp);
  if (entry) {
    if (!entry.fstype.startsWith('fuse')) {
      throw new AvfsError('MountError', `${mp} is a ${entry.fstype} mount, not an avfs one; not touching it`, { mountpoint: mp, fstype: entry.fstype });
    }
    if (!(await lazyUnmount(mp))) throw new AvfsError('MountError', `could not unmount ${mp}`, { mountpoint: mp });
    unmounted = true;
  }
  registry.remove(mp);
  return { mountpoint: mp, unmounted, vault: rec?.vault ?? null, pid: rec?.pid ?? null };
}
