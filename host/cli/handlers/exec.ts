/** The handler of `avfs proxy exec`: the request from the flags, the run (through the host when one is up), the envelope. */
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import { randomUUID } from 'node:crypto';
import { type ApprovalRequest, EXEC_EXIT, type ExecRequestInput, type ExecutionEnvelope } from '../../protocol/exec';
import { noApprover, terminalApprover } from '../../proxy/approvals';
import { cancelOnSignals, executor } from '../../proxy/executor';
import { type CliContext, NO_HOST_ENV } from '../context';
import { type ExecOptions, execRequestOf, promptOf, readAll } from '../execRequest';
import { renderSummary } from './checkpoint';

/** How long a run waits for approval before the terminal is told so. */
const WAITING_NOTICE_MS = 300;

/** The exit code of a run: the command's own when it ran to the end, else the documented one. */
export function execExitCode(env: ExecutionEnvelope): number {
  const s = env.result.state;
  if (s === 'completed') return env.result.exit_code ?? EXEC_EXIT.failed;
  if (s === 'timed_out' || s === 'denied' || s === 'failed' || s === 'cancelled') return EXEC_EXIT[s];
  return EXEC_EXIT.failed;
}

/** One line for a person, after the command's own output. */
export function humanReport(env: ExecutionEnvelope): string {
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
  if (r.sandbox?.mode === 'none') lines.push(`avfs: the command ran without isolation (${r.sandbox.note ?? '--sandbox none'})`);
  for (const v of r.sandbox?.violations ?? []) lines.push(`avfs: sandbox: ${v.message}`);
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
  if (process.env[NO_HOST_ENV] === '1') return undefined;
  // Looking costs a small file read; the host's client and protocol load only when one runs.
  const { readHost } = await import('../../daemon/lock');
  if (!readHost(ctx.homeDir)) return undefined;
  const { connectHost } = await import('../../daemon/client');
  const { APPROVAL_REQUEST } = await import('../../protocol/host');
  const id = randomUUID();
  let waiting: NodeJS.Timeout | undefined;
  const prompt = opts.interactive ? terminalApprover({ input: process.stdin, output: process.stderr }) : undefined;
  const host = await connectHost(ctx.homeDir, {
    name: `avfs proxy exec (pid ${process.pid})`,
    kind: 'cli',
    approver: prompt ? 'own' : false,
    // Only what it shows: its own run's output, and none with --json (the envelope has it).
    output: opts.show ? 'own' : 'none',
    setup: (conn) => {
      conn.onNotification('exec/output', (n: { id: string; stream: 'stdout' | 'stderr'; text: string; dropped_bytes?: number }) => {
        if (n.id !== id) return;
        if (n.dropped_bytes) ctx.stderr.write(`\navfs: [${n.dropped_bytes} bytes of output not shown: this terminal did not keep up; the envelope (--json) keeps the head and tail]\n`);
        opts.show?.(n.stream, n.text);
      });
      // Said only when the run is still waiting a moment later: one denied at once (no approver) never waited.
      conn.onNotification('exec/state', (n: { id: string; state: string }) => {
        if (n.id !== id) return;
        clearTimeout(waiting);
        if (n.state === 'awaiting_approval') {
          waiting = setTimeout(() => ctx.stderr.write(`avfs: waiting for approval (${id}): answer in VS Code, or run \`avfs approve ${id}\` / \`avfs deny ${id}\`\n`), WAITING_NOTICE_MS);
        }
      });
      if (prompt) {
        conn.onRequest(APPROVAL_REQUEST, async (req: ApprovalRequest, token) => {
          // Asked here: the prompt says so itself.
          clearTimeout(waiting);
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
    // The command inherits this terminal's environment, as it does when the CLI runs it itself.
    const caller_env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) caller_env[k] = v;
    return await host.call('exec/run', { ...request, id, caller_env }, opts.signal);
  } finally {
    clearTimeout(waiting);
    host.close();
  }
}

export const execHandlers = {
  'exec.doctor': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const { diagnoseSandbox } = await import('../../sandbox/doctor');
    const d = await diagnoseSandbox(ctx.homeDir.dir);
    if (!d.ok) ctx.exitCode = 1;
    ctx.print(cmd, { sandbox: d }, () => {
      const lines = [d.ok ? `sandbox: yes, ${d.tool} (${d.bwrap})${d.user_namespace ? ' in a user namespace' : ' as root'}` : `sandbox: no: ${d.reason}`];
      if (d.fallback) lines.push(`  fallback: ${d.fallback}`);
      const by = (x: string | null) => x ?? 'not enforced here';
      lines.push(`  process limit ${d.limits.processes}: ${by(d.limits.processes_by)}; memory limit: ${by(d.limits.memory_by)}`);
      lines.push(`  home paths shown read-only: ${d.home_read_only.join(', ') || 'none'} (settings: ${d.settings_file})`);
      lines.push(`  tool folders of PATH shown read-only: ${d.tool_folders.join(', ') || 'none'}`);
      return lines.join('\n') + '\n';
    });
  },
  'exec.run': async (ctx: CliContext, argv: string[], opts: ExecOptions, cmd: Command) => {
    const json = !!ctx.globals(cmd).json;
    const invalid = (message: string, details: Record<string, unknown>) => new AvfsError('InvalidInput', message, details);
    const request: ExecRequestInput = execRequestOf(argv, opts, ctx.globals(cmd).vault, invalid);
    if (opts.stdin) request.stdin = await readAll(process.stdin);
    const { interactive, why } = await promptOf(opts);
    const approver = interactive ? terminalApprover({ input: process.stdin, output: process.stderr }) : noApprover(why);
    const cancel = cancelOnSignals();
    // Without --json a person watches: the command's output streams through as it comes.
    const show = json ? undefined : (stream: 'stdout' | 'stderr', data: Buffer | string) => (stream === 'stdout' ? ctx.stdout : ctx.stderr).write(data);
    let envelope: ExecutionEnvelope;
    const inProcess = async () => {
      // This process starts the command: its descendants keep it as an ancestor (host/proxy/peer.ts).
      (await import('../../proxy/peer')).becomeRunner();
      const execute = executor({
        home: await ctx.home(),
        engine: (await ctx.opsContext()).engine,
        inProcessMounts: true,
        surface: 'cli',
        owner: `avfs proxy exec (pid ${process.pid})`,
      });
      return execute(request, { approver, signal: cancel.signal, ...(show ? { output: show } : {}) });
    };
    try {
      envelope = (await viaHost(ctx, request, { interactive, signal: cancel.signal, ...(show ? { show } : {}) })) ?? (await inProcess());
    } finally {
      cancel.dispose();
    }
    // A mount served by this process leaves native handles that keep it alive.
    ctx.exitWhenDone = true;
    ctx.exitCode = execExitCode(envelope);
    ctx.print(cmd, envelope, () => {
      ctx.stderr.write(humanReport(envelope));
      return undefined;
    });
  },
};
