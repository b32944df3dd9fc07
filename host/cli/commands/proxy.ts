/** `avfs proxy exec`: run one command in a vault mount through the policy, and report it. See docs/exec.md. */
import { type Command, Option } from 'commander';
import { AvfsError } from '../../protocol/errors';
import { randomUUID } from 'node:crypto';
import { type ApprovalRequest, EXEC_EXIT, type ExecRequestInput, type ExecutionEnvelope } from '../../protocol/exec';
import { APPROVAL_REQUEST } from '../../protocol/host';
import { createPolicyEngine } from '../../policy/engine';
import { noApprover, terminalApprover } from '../../proxy/approvals';
import { runExec } from '../../proxy/pipeline';
import { renderSummary } from './checkpoint';
import { action, type CliContext, example, parseCount } from '../context';

interface ExecOptions {
  shell?: string;
  cwd: string;
  readonly?: boolean;
  keepMount?: boolean;
  mountpoint?: string;
  allowOther?: boolean;
  timeout: string;
  grace: string;
  checkpoint: 'auto' | 'always' | 'never';
  env: string[];
  cleanEnv?: boolean;
  stdin?: boolean;
  maxOutput?: string;
  prompt: boolean;
}

/** The exit code of a run: the command's own when it ran to the end, else the documented one. */
export function execExitCode(env: ExecutionEnvelope): number {
  const s = env.result.state;
  if (s === 'completed') return env.result.exit_code ?? EXEC_EXIT.failed;
  if (s === 'timed_out' || s === 'denied' || s === 'failed' || s === 'cancelled') return EXEC_EXIT[s];
  return EXEC_EXIT.failed;
}

function parseEnv(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw new AvfsError('InvalidInput', `--env takes NAME=VALUE, got ${JSON.stringify(p)}`, { field: 'env', value: p });
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** One line for a person, after the command's own output. */
function humanReport(env: ExecutionEnvelope): string {
  const r = env.result;
  const lines: string[] = [];
  const what =
    r.state === 'completed'
      ? `exit ${r.exit_code}${r.signal ? ` (${r.signal})` : ''} in ${r.duration_ms} ms`
      : r.state === 'timed_out'
        ? `timed out after ${r.duration_ms} ms (stopped with ${r.signal ?? 'a signal'})`
        : r.state;
  lines.push(`avfs: ${what}${r.checkpoint ? `; checkpoint ${r.checkpoint} (undo: avfs checkpoint restore ${r.checkpoint} --vault ${r.vault})` : ''}`);
  if (r.error) lines.push(`avfs: ${r.error.error}: ${r.error.message}`);
  if (r.changes && r.changes.totals.added + r.changes.totals.modified + r.changes.totals.deleted + r.changes.totals.renamed > 0) {
    lines.push(renderSummary(r.changes).replace(/^/gm, '  '));
  }
  if (r.leftover_processes > 0) lines.push(`avfs: stopped ${r.leftover_processes} process(es) the command left running`);
  if (r.stdout_truncated || r.stderr_truncated) lines.push('avfs: output was longer than --max-output; the envelope (--json) keeps its head and tail');
  return lines.join('\n') + '\n';
}

/**
 * With a host running, the run goes through it: its approvers (VS Code windows, `avfs approve`)
 * answer, its kept mounts are shared. A terminal that can prompt offers to answer its own run's
 * request too; the first answer wins. Undefined: no host, run in-process.
 */
async function viaHost(
  ctx: CliContext,
  request: ExecRequestInput,
  opts: { interactive: boolean; signal: AbortSignal; show?: (stream: 'stdout' | 'stderr', text: string) => void },
): Promise<ExecutionEnvelope | undefined> {
  const { connectHost } = await import('../../daemon/client');
  const id = randomUUID();
  const prompt = opts.interactive ? terminalApprover({ input: process.stdin, output: process.stderr }) : undefined;
  const host = await connectHost(ctx.home, {
    name: `avfs proxy exec (pid ${process.pid})`,
    kind: 'cli',
    approver: prompt ? 'own' : false,
    setup: (conn) => {
      conn.onNotification('exec/output', (n: { id: string; stream: 'stdout' | 'stderr'; text: string }) => {
        if (n.id === id) opts.show?.(n.stream, n.text);
      });
      conn.onNotification('exec/state', (n: { id: string; state: string }) => {
        if (n.id === id && n.state === 'awaiting_approval') {
          ctx.stderr.write(`avfs: waiting for approval (${id}): answer in VS Code, or run \`avfs approve ${id}\` / \`avfs deny ${id}\`\n`);
        }
      });
      if (prompt) {
        conn.onRequest(APPROVAL_REQUEST, async (req: ApprovalRequest, token) => {
          const ac = new AbortController();
          token.onCancellationRequested(() => ac.abort());
          const o = await prompt.ask(req, ac.signal);
          if (o.kind !== 'answered') throw new Error(`no answer at the terminal (${o.kind})`);
          return { answer: o.answer.answer, by: 'terminal' };
        });
      }
    },
  });
  if (!host) return undefined;
  try {
    return await host.call('exec/run', { ...request, id }, opts.signal);
  } finally {
    host.close();
  }
}

export function register(program: Command, ctx: CliContext): void {
  const proxy = program.command('proxy').description('the policy-gated execution surface for agents');
  example(
    proxy
      .command('exec [argv...]')
      .description('run a command in a vault mount: policy → (approval) → (checkpoint) → mount → run → change summary')
      .option('--shell <string>', 'a shell command line, run by bash -c (instead of -- ARGV...)')
      .option('--cwd <path>', 'working directory inside the vault (created if missing)', '/')
      .option('-r, --readonly', 'mount read-only: writes fail with EROFS')
      .option('--keep-mount', 'leave the mount up for the next call (and reuse one that is up)')
      .option('--mountpoint <dir>', 'mount here (an empty directory) instead of under the avfs home')
      .option('--allow-other', 'let other users reach the mount (for a command run as another user; see docs/fuse.md)')
      .option('--timeout <ms>', 'stop the command after MS milliseconds (0: never)', '300000')
      .option('--grace <ms>', 'after SIGTERM, wait MS before SIGKILL', '2000')
      .addOption(new Option('--checkpoint <mode>', 'checkpoint before running: auto (when the policy says so), always, never').choices(['auto', 'always', 'never']).default('auto'))
      .option('-e, --env <NAME=VALUE>', 'set a variable for the command (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
      .option('--clean-env', 'pass only a minimal environment (PATH, HOME, USER, LANG, TERM, …) instead of this one')
      .option('--stdin', 'feed this process\'s standard input to the command (default: /dev/null)')
      .option('--max-output <bytes>', 'bytes of stdout and of stderr kept in the envelope (head and tail)', String(1024 * 1024))
      .option('--no-prompt', 'never ask on this terminal: a command that needs approval is denied')
      .action(
        action(ctx, async (argv: string[], opts: ExecOptions, cmd: Command) => {
          const json = !!ctx.globals(cmd).json;
          if ((opts.shell === undefined) === (argv.length === 0)) {
            throw new AvfsError('InvalidInput', 'give exactly one of --shell "STRING" or -- ARGV...', { field: 'shell' });
          }
          const vault = ctx.globals(cmd).vault;
          const request: ExecRequestInput = {
            ...(vault !== undefined ? { vault } : {}),
            command: opts.shell !== undefined ? { shell: opts.shell } : { argv },
            cwd: opts.cwd,
            readonly: !!opts.readonly,
            keep_mount: !!opts.keepMount,
            ...(opts.mountpoint !== undefined ? { mountpoint: opts.mountpoint } : {}),
            allow_other: !!opts.allowOther,
            timeout_ms: parseCount('--timeout', opts.timeout),
            grace_ms: parseCount('--grace', opts.grace),
            checkpoint: opts.checkpoint,
            env: parseEnv(opts.env),
            clean_env: !!opts.cleanEnv,
            ...(opts.maxOutput !== undefined ? { max_output_bytes: parseCount('--max-output', opts.maxOutput) } : {}),
            ...(opts.stdin ? { stdin: await readAll(process.stdin) } : {}),
          };
          const interactive = opts.prompt && !opts.stdin && !!process.stdin.isTTY && !!process.stderr.isTTY;
          const approver = interactive
            ? terminalApprover({ input: process.stdin, output: process.stderr })
            : noApprover(opts.prompt ? 'no terminal to ask on' : '--no-prompt');
          const cancel = new AbortController();
          const onSignal = () => cancel.abort();
          for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, onSignal);
          // Without --json a person watches: the command's output streams through as it comes.
          const show = json ? undefined : (stream: 'stdout' | 'stderr', data: Buffer | string) => (stream === 'stdout' ? ctx.stdout : ctx.stderr).write(data);
          let envelope: ExecutionEnvelope;
          try {
            envelope =
              (await viaHost(ctx, request, { interactive, signal: cancel.signal, ...(show ? { show } : {}) })) ??
              (await runExec(request, {
                home: ctx.home,
                engine: () => createPolicyEngine({ oneShot: true }),
                approver,
                inProcessMounts: true,
                surface: 'cli',
                signal: cancel.signal,
                ...(show ? { onOutput: (_id: string, stream: 'stdout' | 'stderr', chunk: Buffer) => show(stream, chunk) } : {}),
              }));
          } finally {
            for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(s, onSignal);
          }
          // Leave at once: the output drain's 500 ms guard timer (proxy/runner.ts) would hold the process.
          ctx.exitWhenDone = true;
          ctx.exitCode = execExitCode(envelope);
          ctx.print(cmd, envelope, () => {
            ctx.stderr.write(humanReport(envelope));
            return undefined;
          });
        }),
      ),
    'avfs proxy exec --json -- npm test',
    'avfs --vault task-1 proxy exec --keep-mount --shell "git add -A && git commit -m wip"',
  );
}
