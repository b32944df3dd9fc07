/** Handlers of `avfs host …`, `avfs approvals`, `avfs approve`, `avfs deny`. */
import type { Command } from 'commander';
import type { HostConnection } from '../../daemon/client';
import { AvfsError } from '../../protocol/errors';
import { type CliContext, parseCount, table } from '../context';

async function withHost<T>(ctx: CliContext, fn: (h: HostConnection) => Promise<T>): Promise<T> {
  const { connectHost } = await import('../../daemon/client');
  const h = await connectHost(ctx.homeDir, { name: `avfs cli (pid ${process.pid})`, kind: 'cli' });
  if (!h) throw new AvfsError('NotFound', `no avfs host is running for ${ctx.homeDir.dir} (start one with: avfs host)`, { home: ctx.homeDir.dir });
  try {
    return await fn(h);
  } finally {
    h.close();
  }
}

async function answer(ctx: CliContext, verb: 'approve' | 'deny', id: string, always: boolean, cmd: Command): Promise<void> {
  const r = await withHost(ctx, (h) =>
    h.callHost('approval/answer', { id, answer: verb === 'deny' ? 'deny' : always ? 'always_allow' : 'approve_once', by: `avfs ${verb} (pid ${process.pid})` }),
  );
  if (!r.settled) throw new AvfsError('NotFound', `no approval ${id} is waiting (it was answered already, or timed out)`, { id });
  ctx.print(cmd, r, () => `${verb === 'approve' ? 'approved' : 'denied'} ${id}${r.rule ? ` (rule added: ${r.rule})` : ''}`);
}

/** A host an editor started (`--stdio`) stops after this long with nothing to serve, unless told otherwise. */
export const STDIO_IDLE_EXIT_MS = 60_000;

export const hostHandlers = {
  'host.start': async (ctx: CliContext, opts: { stdio?: boolean; approvalTimeout: string; idleExit?: string; slowClientTimeout: string; workers?: string; verbose?: boolean }) => {
    const { VaultHost } = await import('../../daemon/server');
    // A host outlives the window that started it: a broken stdout or stderr is a reader gone, not a
    // reason to end (the CLI's own rule, die of EPIPE as coreutils do, is taken off for the host).
    // Once the parent of a --stdio host is gone, so is (usually) the stderr it read: log no more there.
    let logToStderr = true;
    for (const stream of [process.stdout, process.stderr]) stream.removeAllListeners('error');
    process.stdout.on('error', () => undefined);
    process.stderr.on('error', () => (logToStderr = false));
    const h = new VaultHost({
      home: await ctx.home(),
      stdio: !!opts.stdio,
      idleExitMs: parseCount('--idle-exit', opts.idleExit ?? (opts.stdio ? String(STDIO_IDLE_EXIT_MS) : '0')),
      onParentGone: () => (logToStderr = false),
      approvalTimeoutMs: parseCount('--approval-timeout', opts.approvalTimeout),
      slowClientTimeoutMs: parseCount('--slow-client-timeout', opts.slowClientTimeout),
      ...(opts.workers !== undefined ? { workers: parseCount('--workers', opts.workers) } : {}),
      logCalls: !!opts.verbose,
      log: (level, message) => {
        if (logToStderr) process.stderr.write(`${new Date().toISOString()} ${level} ${message}\n`);
      },
    });
    await h.start();
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void h.stop(sig));
    await h.stopped;
    ctx.exitWhenDone = true;
  },

  'host.status': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const { readHost } = await import('../../daemon/lock');
    if (!readHost(ctx.homeDir)) {
      ctx.print(cmd, { running: false, home: ctx.homeDir.dir }, () => `no avfs host is running for ${ctx.homeDir.dir}`);
      return;
    }
    const s = await withHost(ctx, (h) => h.callHost('host/status', {}));
    ctx.print(cmd, { running: true, ...s }, () =>
      [
        `host ${s.pid} (avfs ${s.version}) serving ${s.home} on ${s.socket}, up ${Math.round(s.uptime_ms / 1000)} s`,
        `clients: ${s.clients.length}${s.clients.length ? '  ' + s.clients.map((c) => c.name + (c.approver ? ' [approver]' : '')).join(', ') : ''}`,
        `mounts: ${s.mounts.length}${s.mounts.length ? '  ' + s.mounts.map((m) => `${m.vault} at ${m.mountpoint}`).join(', ') : ''}`,
        `pending approvals: ${s.pending_approvals}; running commands: ${s.running_execs}`,
      ].join('\n'),
    );
  },

  'host.stop': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const r = await withHost(ctx, (h) => h.callHost('host/shutdown', {}));
    ctx.print(cmd, r, () => 'host stopping');
  },

  'host.approvals': async (ctx: CliContext, opts: { watch?: boolean }, cmd: Command) => {
    if (opts.watch) return (await import('../approvalsWatch')).watchApprovals(ctx, !!ctx.globals(cmd).json);
    const { pending } = await withHost(ctx, (h) => h.callHost('approval/list', {}));
    ctx.print(cmd, { pending }, () =>
      pending.length === 0
        ? 'nothing is waiting for approval'
        : table([['ID', 'VAULT', 'COMMAND', 'WHY'], ...pending.map((p) => [p.id, p.vault, p.command.slice(0, 60), p.categories.join(',')])]),
    );
  },

  'host.approve': (ctx: CliContext, id: string, opts: { always?: boolean }, cmd: Command) => answer(ctx, 'approve', id, !!opts.always, cmd),

  'host.deny': (ctx: CliContext, id: string, _opts: unknown, cmd: Command) => answer(ctx, 'deny', id, false, cmd),
};
