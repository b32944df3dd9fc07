/** Mount commands: mount, unmount, mounts. See docs/fuse.md. */
import { closeSync, writeSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { AvfsError, toAvfsError } from '../../protocol/errors';
import { startMountServer, stopMount } from '../../fuse/server';
import { checkVaultName } from '../../store/home';
import { type MountRecord, MountRegistry } from '../../fuse/registry';
import { checkMountpoint, MountSession } from '../../fuse/session';
import { action, type CliContext, example, parseCount, table } from '../context';

interface MountOpts {
  readonly?: boolean;
  foreground?: boolean;
  readyFd?: string;
  cacheMs?: string;
  allowOther?: boolean;
}

function publicRecord(r: MountRecord) {
  return { vault: r.vault, mountpoint: r.mountpoint, readonly: r.readonly, allow_other: !!r.allow_other, pid: r.pid, started: r.started, state: r.state };
}

/** Runs the mount in this process until SIGTERM/SIGINT or an outside unmount. */
async function serve(ctx: CliContext, vault: string, mountpoint: string, opts: MountOpts, onReady: (rec: MountRecord) => void): Promise<void> {
  const session = new MountSession({
    home: ctx.home,
    vault,
    mountpoint,
    readonly: !!opts.readonly,
    allowOther: !!opts.allowOther,
    ...(opts.cacheMs !== undefined ? { cacheSeconds: parseCount('--cache-ms', opts.cacheMs) / 1000 } : {}),
    log: (line) => process.stderr.write(line + '\n'),
  });
  const rec = await session.mount();
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  const shutdown = (why: string) => {
    process.stderr.write(`${new Date().toISOString()} ${why}: unmounting\n`);
    void session.unmount().finally(stop);
  };
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => shutdown(sig));
  // Someone ran `fusermount -u` on us: clean up and leave.
  let misses = 0;
  const watch = setInterval(() => {
    misses = session.state === 'mounted' && !session.stillMounted() ? misses + 1 : 0;
    if (misses === 2) shutdown('the mount disappeared from the mount table');
  }, 1000);
  onReady(rec);
  await stopped;
  clearInterval(watch);
}

export function register(program: Command, ctx: CliContext): void {
  example(
    program
      .command('mount <vault> <mountpoint>')
      .description('mount a vault as a directory (FUSE); returns once the mount is ready')
      .option('-r, --readonly', 'mount read-only (writes fail with EROFS)')
      .option('-f, --foreground', 'serve the mount in this process until SIGTERM/SIGINT')
      .option('--cache-ms <ms>', 'how long the kernel may cache names and attributes (default 1000)')
      .option('--allow-other', 'let other users use the mount, with the kernel checking modes and owners (needs user_allow_other in /etc/fuse.conf unless root)')
      .addOption(new Option('--ready-fd <fd>').hideHelp())
      .action(
        action(ctx, async (vault: string, mountpoint: string, opts: MountOpts, cmd: Command) => {
          checkVaultName(vault);
          if (!ctx.home.exists(vault)) throw new AvfsError('VaultNotFound', `vault not found: ${vault}`, { vault });
          const mp = resolve(mountpoint);
          if (opts.foreground) {
            const fd = opts.readyFd !== undefined ? parseCount('--ready-fd', opts.readyFd) : undefined;
            try {
              await serve(ctx, vault, mp, opts, (rec) => {
                if (fd !== undefined) {
                  writeSync(fd, JSON.stringify({ ok: true, record: rec }) + '\n');
                  closeSync(fd);
                } else {
                  ctx.print(cmd, publicRecord(rec), () => `mounted ${vault} at ${mp} (pid ${rec.pid}); stop with Ctrl-C or 'avfs unmount ${mp}'`);
                }
              });
            } catch (e) {
              if (fd === undefined) throw e;
              writeSync(fd, JSON.stringify({ ok: false, error: toAvfsError(e).toJSON() }) + '\n');
              closeSync(fd);
              throw e;
            }
            return;
          }
          await new MountRegistry(ctx.home).prune();
          await checkMountpoint(mp);
          const rec = await startMountServer(ctx.home, vault, mp, {
            readonly: !!opts.readonly,
            allowOther: !!opts.allowOther,
            ...(opts.cacheMs !== undefined ? { cacheMs: parseCount('--cache-ms', opts.cacheMs) } : {}),
          });
          ctx.print(cmd, publicRecord(rec), () => `mounted ${vault} at ${mp}${rec.readonly ? ' (read-only)' : ''} (pid ${rec.pid})`);
        }),
      ),
    'avfs mount demo /mnt/demo',
    'avfs mount demo /mnt/demo --readonly --json',
    'avfs mount demo /mnt/demo --allow-other',
  );

  example(
    program
      .command('unmount <mountpoint>')
      .alias('umount')
      .description('unmount a vault mount (exit 0 with unmounted:false if nothing was mounted there)')
      .option('--timeout <ms>', 'how long to wait for the server to stop before killing it', '10000')
      .action(
        action(ctx, async (mountpoint: string, opts: { timeout: string }, cmd: Command) => {
          const r = await stopMount(ctx.home, mountpoint, parseCount('--timeout', opts.timeout));
          ctx.print(cmd, r, () => (r.unmounted ? `unmounted ${r.mountpoint}` : `nothing was mounted at ${r.mountpoint}`));
        }),
      ),
    'avfs unmount /mnt/demo',
  );

  example(
    program
      .command('mounts')
      .description('list live vault mounts (stale ones left by a dead server are cleaned first)')
      .action(
        action(ctx, async (_opts: unknown, cmd: Command) => {
          const registry = new MountRegistry(ctx.home);
          const cleaned = await registry.prune();
          const mounts = registry.records().map((r) => ({ ...publicRecord(r), live: registry.isLive(r) }));
          ctx.print(cmd, { mounts, cleaned }, () =>
            mounts.length === 0
              ? 'no mounts'
              : table([['VAULT', 'MOUNTPOINT', 'MODE', 'PID', 'STATE', 'STARTED'], ...mounts.map((m) => [m.vault, m.mountpoint, m.readonly ? 'ro' : 'rw', String(m.pid), m.live ? m.state : 'dead', m.started])]),
          );
        }),
      ),
    'avfs mounts --json',
  );
}
