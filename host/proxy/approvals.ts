/**
 * Approvals: a `require_approval` decision asks an Approver and waits. The CLI asks the person at
 * its terminal; the host (host/daemon) asks every connected approver (VS Code windows, other
 * terminals) through the same interface. No approver, or no answer in time, is a denial: nothing
 * runs.
 */
import type { ApprovalAnswerKind, ApprovalRecord, ApprovalRequest } from '../protocol/exec';
import { terminalText } from '../protocol/terminalText';

export interface ApprovalAnswer {
  answer: ApprovalAnswerKind;
  /** Who answered, as the audit trail names them. */
  by: string;
  /** The rule an always_allow answer added. */
  rule?: string;
}

export type ApprovalOutcome =
  | { kind: 'answered'; answer: ApprovalAnswer }
  | { kind: 'no_approver'; why: string }
  | { kind: 'timed_out'; after_ms: number }
  | { kind: 'cancelled' };

export interface Approver {
  /** How long a request may wait for an answer before it counts as denied. */
  readonly timeoutMs: number;
  /** Asks for a decision; must settle (answered, timed out, cancelled) and never throw for a missing person. */
  ask(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalOutcome>;
}

export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;

/** No one to ask (a non-interactive call with no host running). */
export const noApprover = (why: string): Approver => ({ timeoutMs: 0, ask: async () => ({ kind: 'no_approver', why }) });

/** Asks on the terminal: approve once, or deny (anything else, end of input, or the time limit, is deny). */
export function terminalApprover(opts: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream; timeoutMs?: number }): Approver {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS;
  return {
    timeoutMs,
    async ask(req, signal) {
      const { createInterface } = await import('node:readline');
      const rl = createInterface({ input: opts.input, output: opts.output, terminal: true });
      // Every field is the agent's or the vault's text: shown escaped, one line each.
      const t = (s: string) => terminalText(s);
      opts.output.write(
        `\navfs: this command needs your approval (${t(req.categories.join(', ') || 'policy')}):\n` +
          `  vault ${t(req.vault)}, in ${t(req.cwd)}\n  $ ${t(req.command)}\n  why: ${t(req.reason)}\n`,
      );
      try {
        return await new Promise<ApprovalOutcome>((resolve) => {
          const timer = setTimeout(() => resolve({ kind: 'timed_out', after_ms: timeoutMs }), timeoutMs);
          const done = (o: ApprovalOutcome) => {
            clearTimeout(timer);
            resolve(o);
          };
          signal.addEventListener('abort', () => done({ kind: 'cancelled' }), { once: true });
          rl.on('close', () => done({ kind: 'answered', answer: { answer: 'deny', by: 'terminal' } }));
          rl.question('Run it once? [y/N] ', (line) => {
            done({ kind: 'answered', answer: { answer: /^y(es)?$/i.test(line.trim()) ? 'approve_once' : 'deny', by: 'terminal' } });
          });
        });
      } finally {
        rl.close();
      }
    },
  };
}

/** How an outcome is recorded in the envelope, the audit trail and the host's notices. */
export function recordOf(id: string, o: ApprovalOutcome, waitedMs: number): ApprovalRecord {
  const at = new Date().toISOString();
  if (o.kind !== 'answered') return { id, outcome: o.kind, answer: null, by: null, at, scope: null, rule: null, waited_ms: waitedMs };
  const approved = o.answer.answer !== 'deny';
  return {
    id,
    outcome: approved ? 'approved' : 'denied',
    answer: o.answer.answer,
    by: o.answer.by,
    at,
    scope: o.answer.answer === 'always_allow' ? 'always' : approved ? 'once' : null,
    rule: o.answer.rule ?? null,
    waited_ms: waitedMs,
  };
}
