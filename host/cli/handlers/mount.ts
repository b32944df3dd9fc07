/**
 * Handlers of the mount commands. `mount --foreground` serves the mount in this process (that is
 * its point), so it never goes through a host; everything else is one operation.
 */
import { closeSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { MountRecord } from '../../fuse/registry';
import type { MountSession } from '../../fuse/session';
import type { MountExecEndpoint } from '../../proxy/mountExec';
import { AvfsError, toAvfsError } from '../../protocol/errors';
import { type CliContext, parseCount, table } from '../context';

interface MountOpts {
  readonly?: boolean;
  foreground?: boolean;
  readyFd?: string;
  cacheMs?: string;
  allowOther?: boolean;
}

/**
 * Runs the mount in this process until SIGTERM/SIGINT or an outside unmount. `onReady` says
 * whether anyone heard: false (the process that asked for the mount died meanwhile) unmounts.
 */
async function serve(ctx: CliContext, vault: string, mountpoint: string, opts: MountOpts, onReady: (rec: MountRecord) => boolean): Promise<void> {
  const { MountSession } = await import('../../fuse/session');
  const session = new MountSession({
    home: await ctx.home(),
    vault,
    mountpoint,
    readonly: !!opts.readonly,
    allowOther: !!opts.allowOther,
    ...(opts.cacheMs !== undefined ? { cacheSeconds: parseCount('--cache-ms', opts.cacheMs) / 1000 } : {}),
    log: (line) => process.stderr.write(line + '\n'),
  });
  let rec = await session.mount();
  const endpoint = await openExecEndpoint(ctx, session);
  if (endpoint) rec = session.announceExec(endpoint.socket);
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const shutdown = (why: string) => {
    process.stderr.write(`${new Date().toISOString()} ${why}: unmounting\n`);
    void (endpoint?.close() ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => session.unmount())
      .finally(stop);
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => shutdown(sig));
  // Someone ran `fusermount -u` on us: clean up and leave.
  let misses = 0;
  const watch = setInterval(() => {
    misses = session.state === 'mounted' && !session.stillMounted() ? misses + 1 : 0;
    if (misses === 2) shutdown('the mount disappeared from the mount table');
  }, 1000);
  if (!onReady(rec)) shutdown('the process that asked for this mount is gone');
  await stopped;
  clearInterval(watch);
}

/**
 * The mount's exec endpoint: `avfs proxy exec` calls that find this mount hand their runs here
 * (host/proxy/mountExec.ts). Without it (a socket that cannot be made) calls run in their own process.
 */
async function openExecEndpoint(ctx: CliContext, session: MountSession): Promise<(MountExecEndpoint & { socket: string }) | undefined> {
  const socket = session.registry.execSocketOf(session.mountpoint);
  try {
    const { serveMountExec } = await import('../../proxy/mountExec');
    const { execExitCode, humanReport } = await import('./exec');
    const ep = await serveMountExec({ home: await ctx.home(), vault: session.vaultName, socket, present: (env) => ({ exitCode: execExitCode(env), human: humanReport(env) }) });
    return { ...ep, socket };
  } catch (e) {
    process.stderr.write(`${new Date().toISOString()} no exec endpoint at ${socket}: ${(e as Error).message}\n`);
    return undefined;
  }
}

async function foreground(ctx: CliContext, vault: string, mp: string, opts: MountOpts, cmd: Command): Promise<void> {
  const { checkVaultName } = await import('../../store/home');
  checkVaultName(vault);
  if (!(await ctx.home()).exists(vault)) throw new AvfsError('VaultNotFound', `vault not found: ${vault}`, { vault });
  const fd = opts.readyFd !== undefined ? parseCount('--ready-fd', opts.readyFd) : undefined;
  const { mountInfo } = await import('../../ops/mount');
  try {
    await serve(ctx, vault, mp, opts, (rec) => {
      if (fd === undefined) {
        ctx.print(cmd, mountInfo(rec, true), () => `mounted ${vault} at ${mp} (pid ${rec.pid}); stop with Ctrl-C or 'avfs unmount ${mp}'`);
        return true;
      }
      try {
        writeSync(fd, JSON.stringify({ ok: true, record: rec }) + '\n');
        return true;
      } catch {
        // EPIPE: the asker died before it heard. Nobody would use or stop this mount.
        return false;
      } finally {
        closeSync(fd);
      }
    });
  } catch (e) {
    if (fd === undefined) throw e;
    try {
      writeSync(fd, JSON.stringify({ ok: false, error: toAvfsError(e).toJSON() }) + '\n');
      closeSync(fd);
    } catch {
      /* the asker is gone (or heard already) */
    }
    throw e;
  }
}

export const mountHandlers = {
  /** The mountpoint is taken from this process's working directory, wherever the operation runs. */
  'mount.mount': async (ctx: CliContext, vault: string, mountpoint: string, opts: MountOpts, cmd: Command) => {
    const mp = resolve(mountpoint);
    if (opts.foreground) return foreground(ctx, vault, mp, opts, cmd);
    const rec = await ctx.call('mount/mount', {
      vault,
      mountpoint: mp,
      readonly: !!opts.readonly,
      allow_other: !!opts.allowOther,
      ...(opts.cacheMs !== undefined ? { cache_ms: parseCount('--cache-ms', opts.cacheMs) } : {}),
    });
    ctx.print(cmd, rec, () => `mounted ${vault} at ${mp}${rec.readonly ? ' (read-only)' : ''} (pid ${rec.pid})`);
  },

  'mount.unmount': async (ctx: CliContext, mountpoint: string, opts: { timeout: string }, cmd: Command) => {
    const r = await ctx.call('mount/unmount', { mountpoint: resolve(mountpoint), timeout_ms: parseCount('--timeout', opts.timeout) });
    ctx.print(cmd, r, () => (r.unmounted ? `unmounted ${r.mountpoint}` : `nothing was mounted at ${r.mountpoint}`));
  },

  'mount.list': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('mount/list', {});
    ctx.print(cmd, r, () =>
      r.mounts.length === 0
        ? 'no mounts'
        : table([['VAULT', 'MOUNTPOINT', 'MODE', 'PID', 'STATE', 'STARTED'], ...r.mounts.map((m) => [m.vault, m.mountpoint, m.readonly ? 'ro' : 'rw', String(m.pid), m.live ? m.state : 'dead', m.started])]),
    );
  },
};
