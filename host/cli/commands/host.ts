/** `avfs host` (start, status, stop) and the approval commands that talk to it: approvals, approve, deny. */
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import { connectHost, type HostClient } from '../../daemon/client';
import { readHost } from '../../daemon/lock';
import { action, type CliContext, example, parseCount, table } from '../context';

async function withHost<T>(ctx: CliContext, fn: (h: HostClient) => Promise<T>): Promise<T> {
  const h = await connectHost(ctx.home, { name: `avfs cli (pid ${process.pid})`, kind: 'cli' });
  if (!h) throw new AvfsError('NotFound', `no avfs host is running for ${ctx.home.dir} (start one with: avfs host)`, { home: ctx.home.dir });
  try {
    return await fn(h);
  } finally {
    h.close();
  }
}

export function register(program: Command, ctx: CliContext): void {
  const host = program.command('host').description('the vault host: one long-lived process per avfs home that editors and terminals share');

  example(
    host
      .command('start', { isDefault: true })
      .description('run the host in this process (logs on stderr) until SIGTERM, Ctrl-C or `avfs host stop`')
      .option('--stdio', 'also speak JSON-RPC on stdin/stdout, for the process that spawned it; stop when stdin ends')
      .option('--approval-timeout <ms>', 'an approval nobody answers is denied after MS', '300000')
      .action(
        action(ctx, async (opts: { stdio?: boolean; approvalTimeout: string }, _cmd: Command) => {
          const { VaultHost } = await import('../../daemon/server');
          const { OPS } = await import('../../ops');
          const h = new VaultHost({
            home: ctx.home,
            ops: OPS,
            stdio: !!opts.stdio,
            approvalTimeoutMs: parseCount('--approval-timeout', opts.approvalTimeout),
            log: (level, message) => process.stderr.write(`${new Date().toISOString()} ${level} ${message}\n`),
          });
          await h.start();
          for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => void h.stop(sig));
          await h.stopped;
          ctx.exitWhenDone = true;
        }),
      ),
    'avfs host',
    'avfs host --stdio   # for an editor that spawns it',
  );

  example(
    host
      .command('status')
      .description('the running host: pid, socket, clients, mounts, pending approvals')
      .action(
        action(ctx, async (_opts: unknown, cmd: Command) => {
          if (!readHost(ctx.home)) {
            ctx.print(cmd, { running: false, home: ctx.home.dir }, () => `no avfs host is running for ${ctx.home.dir}`);
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
        }),
      ),
    'avfs host status --json',
  );

  example(
    host
      .command('stop')
      .description('stop the running host (it unmounts what it mounted)')
      .action(
        action(ctx, async (_opts: unknown, cmd: Command) => {
          const r = await withHost(ctx, (h) => h.callHost('host/shutdown', {}));
          ctx.print(cmd, r, () => 'host stopping');
        }),
      ),
    'avfs host stop',
  );

  example(
    program
      .command('approvals')
      .description('commands waiting for approval at the running host')
      .action(
        action(ctx, async (_opts: unknown, cmd: Command) => {
          const { pending } = await withHost(ctx, (h) => h.callHost('approval/list', {}));
          ctx.print(cmd, { pending }, () =>
            pending.length === 0
              ? 'nothing is waiting for approval'
              : table([['ID', 'VAULT', 'COMMAND', 'WHY'], ...pending.map((p) => [p.id, p.vault, p.command.slice(0, 60), p.categories.join(',')])]),
          );
        }),
      ),
    'avfs approvals --json',
  );

  for (const [verb, answer, doc] of [
    ['approve', 'approve_once', 'let a waiting command run (once, or with --always from now on)'],
    ['deny', 'deny', 'refuse a waiting command: it does not run'],
  ] as const) {
    const c = program.command(`${verb} <id>`).description(doc);
    if (verb === 'approve') c.option('--always', 'also add a rule to your policy.json so the same command runs without asking');
    example(
      c.action(
        action(ctx, async (id: string, opts: { always?: boolean }, cmd: Command) => {
          const r = await withHost(ctx, (h) =>
            h.callHost('approval/answer', { id, answer: opts.always ? 'always_allow' : answer, by: `avfs ${verb} (pid ${process.pid})` }),
          );
          if (!r.settled) throw new AvfsError('NotFound', `no approval ${id} is waiting (it was answered already, or timed out)`, { id });
          ctx.print(cmd, r, () => `${verb === 'approve' ? 'approved' : 'denied'} ${id}${r.rule ? ` (rule added: ${r.rule})` : ''}`);
        }),
      ),
      `avfs ${verb} 0b7c…`,
    );
  }
}
