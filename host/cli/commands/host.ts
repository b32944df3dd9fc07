/** `avfs host` (start, status, stop) and the approval commands that talk to it: approvals, approve, deny (handlers: ../handlers/host.ts). */
import type { Command } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  const host = program.command('host').description('the vault host: one long-lived process per avfs home that editors and terminals share');

  example(
    host
      .command('start', { isDefault: true })
      .description('run the host in this process (logs on stderr) until SIGTERM, Ctrl-C or `avfs host stop`')
      .option('--stdio', 'also speak JSON-RPC on stdin/stdout, for the process that spawned it (one client: the host outlives it)')
      .option('--idle-exit <ms>', 'stop after MS with no client, run, pending approval or kept mount (default: 60000 with --stdio, else never; 0: never)')
      .option('--approval-timeout <ms>', 'an approval nobody answers is denied after MS', '300000')
      .option('--slow-client-timeout <ms>', 'close a connection that does not introduce itself, or send a message whole, within MS', '30000')
      .option('--workers <n>', 'threads that run operations, so a long one never holds up the others (default 2)')
      .option('--verbose', 'also log every call (client, method, milliseconds)')
      .action(act('host.start')),
    'avfs host',
    'avfs host --stdio   # for an editor that spawns it',
  );
  example(host.command('status').description('the running host: pid, socket, clients, mounts, pending approvals').action(act('host.status')), 'avfs host status --json');
  example(host.command('stop').description('stop the running host (it unmounts what it mounted)').action(act('host.stop')), 'avfs host stop');
  example(
    program
      .command('approvals')
      .description('commands waiting for approval at the running host; --watch: answer them here as they come')
      .option('--watch', 'be an approver: show each request as it comes and answer it from the keyboard (o once, a always, d deny); with --json, JSON lines both ways')
      .action(act('host.approvals')),
    'avfs approvals --json',
    'avfs approvals --watch',
    'avfs --json approvals --watch   # {"id": "…", "answer": "approve_once"} lines on stdin',
  );
  const approve = program.command('approve <id>').description('let a waiting command run (once, or with --always from now on)');
  approve.option('--always', 'also add a rule to your policy.json so the same command runs without asking');
  example(approve.action(act('host.approve')), 'avfs approve 0b7c…');
  example(program.command('deny <id>').description('refuse a waiting command: it does not run').action(act('host.deny')), 'avfs deny 0b7c…');
}
