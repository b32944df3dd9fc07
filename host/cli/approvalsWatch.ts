/**
 * `avfs approvals --watch`: this terminal becomes an approver of the running host. The host puts
 * every request to it (and the ones already waiting); each is shown as it comes (command, vault,
 * cwd, why, escaped for the terminal) and answered from the keyboard: `o` once, `a` always (adds a
 * rule to the user's policy), `d` deny. With `--json`, one JSON object per line on stdout and
 * answers as JSON lines on stdin (docs/cli.md, "Watching approvals"). The first answer wins,
 * wherever it is given; a request settled elsewhere is said so and dropped.
 */
import { createInterface } from 'node:readline';
import type { ApprovalAnswerKind, ApprovalRecord, ApprovalRequest } from '../protocol/exec';
import { AvfsError, toAvfsError } from '../protocol/errors';
import type { CliContext } from './context';
import { terminalText } from './terminalText';

interface Waiting {
  req: ApprovalRequest;
  answer: (a: ApprovalAnswerKind) => void;
}

const KEYS: Record<string, ApprovalAnswerKind> = { o: 'approve_once', once: 'approve_once', y: 'approve_once', a: 'always_allow', always: 'always_allow', d: 'deny', deny: 'deny', n: 'deny' };

/** What a script writes on stdin: one answer per line. */
function parseJsonAnswer(line: string): { id: string; answer: ApprovalAnswerKind } {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    throw new AvfsError('InvalidInput', `not a JSON line: ${JSON.stringify(line.slice(0, 80))} (expected {"id": "…", "answer": "approve_once" | "always_allow" | "deny"})`, {});
  }
  const o = v as { id?: unknown; answer?: unknown };
  if (typeof o?.id !== 'string' || !['approve_once', 'always_allow', 'deny'].includes(o.answer as string)) {
    throw new AvfsError('InvalidInput', 'an answer is {"id": "…", "answer": "approve_once" | "always_allow" | "deny"}', { field: typeof o?.id !== 'string' ? 'id' : 'answer' });
  }
  return { id: o.id, answer: o.answer as ApprovalAnswerKind };
}

/** The first line of the reason, short enough to read at once. */
function oneLine(text: string, max = 160): string {
  const first = text.split('\n')[0] ?? '';
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

function describe(req: ApprovalRequest): string {
  const t = (s: string) => terminalText(s);
  return [
    '',
    `approval ${t(req.id)} is waiting (${req.categories.join(', ') || 'policy'}):`,
    `  $ ${t(req.command)}`,
    `  vault ${t(req.vault)}, in ${t(req.cwd)}`,
    `  why: ${t(oneLine(req.reason))}`,
  ].join('\n');
}

function settledText(id: string, r: ApprovalRecord): string {
  const who = r.by ? ` by ${terminalText(r.by)}` : '';
  const what = r.outcome === 'approved' ? `approved${r.scope === 'always' ? ' (always)' : ''}${r.rule ? `, rule ${terminalText(r.rule)}` : ''}` : r.outcome.replace('_', ' ');
  return `approval ${terminalText(id)}: ${what}${who}`;
}

export async function watchApprovals(ctx: CliContext, json: boolean): Promise<void> {
  const { connectHost } = await import('../daemon/client');
  const { APPROVAL_REQUEST } = await import('../protocol/host');
  const out = (line: string) => ctx.stdout.write(`${line}\n`);
  const emit = (o: Record<string, unknown>) => out(JSON.stringify(o));
  const queue: Waiting[] = [];
  const asked = new Set<string>();
  let shown: string | undefined;
  const prompt = () => {
    if (json) return;
    const head = queue[0];
    if (!head) {
      if (shown !== undefined) out('nothing else is waiting; watching for requests (Ctrl-D to stop)');
      shown = undefined;
      return;
    }
    if (shown === head.req.id) return;
    shown = head.req.id;
    out(describe(head.req));
    ctx.stdout.write(`answer ${queue.length > 1 ? `(${queue.length - 1} more waiting) ` : ''}[o]nce / [a]lways / [d]eny: `);
  };
  const drop = (id: string) => {
    const at = queue.findIndex((w) => w.req.id === id);
    if (at >= 0) queue.splice(at, 1);
    return at;
  };

  const host = await connectHost(ctx.homeDir, {
    name: `avfs approvals --watch (pid ${process.pid})`,
    kind: 'cli',
    approver: true,
    setup: (conn) => {
      conn.onRequest(APPROVAL_REQUEST, (req: ApprovalRequest, token) =>
        new Promise<{ answer: ApprovalAnswerKind }>((resolve, reject) => {
          asked.add(req.id);
          queue.push({ req, answer: (answer) => resolve({ answer }) });
          token.onCancellationRequested(() => reject(new Error('settled elsewhere')));
          if (json) emit({ type: 'request', request: req });
          else prompt();
        }),
      );
      conn.onNotification('approval/settled', (n: { id: string; record: ApprovalRecord }) => {
        if (!asked.has(n.id)) return;
        asked.delete(n.id);
        const at = drop(n.id);
        if (json) {
          emit({ type: 'settled', id: n.id, record: n.record });
          return;
        }
        if (at === 0 && shown === n.id) ctx.stdout.write('\n');
        out(settledText(n.id, n.record));
        if (shown === n.id) shown = undefined;
        prompt();
      });
    },
  });
  if (!host) throw new AvfsError('NotFound', `no avfs host is running for ${ctx.homeDir.dir} (start one with: avfs host)`, { home: ctx.homeDir.dir });
  ctx.exitWhenDone = true;
  if (json) emit({ type: 'watching', host_pid: host.host.pid, client_id: host.clientId });
  else out(`watching approvals at the avfs host (pid ${host.host.pid}) of ${terminalText(ctx.homeDir.dir)}; Ctrl-D to stop`);

  const hostGone = new Promise<'host'>((resolve) => host.conn.onClose(() => resolve('host')));
  const rl = createInterface({ input: process.stdin, terminal: false });
  const inputEnded = new Promise<'input'>((resolve) => rl.once('close', () => resolve('input')));
  const interrupted = new Promise<'signal'>((resolve) => process.once('SIGINT', () => resolve('signal')));
  rl.on('line', (line) => {
    if (json) {
      if (!line.trim()) return;
      try {
        const a = parseJsonAnswer(line);
        const w = queue.find((x) => x.req.id === a.id);
        if (!w) throw new AvfsError('NotFound', `no approval ${a.id} is waiting here (it was settled already, or never asked)`, { id: a.id });
        drop(a.id);
        w.answer(a.answer);
      } catch (e) {
        const err = toAvfsError(e);
        emit({ type: 'error', error: err.kind, message: err.message });
      }
      return;
    }
    const head = queue[0];
    if (!head) return;
    const answer = KEYS[line.trim().toLowerCase()];
    if (!answer) {
      ctx.stdout.write('answer o (once), a (always) or d (deny): ');
      return;
    }
    drop(head.req.id);
    shown = undefined;
    head.answer(answer);
  });
  const why = await Promise.race([hostGone, inputEnded, interrupted]);
  rl.close();
  host.close();
  if (why === 'host') throw new AvfsError('NotFound', `the avfs host of ${ctx.homeDir.dir} stopped`, { home: ctx.homeDir.dir });
}
