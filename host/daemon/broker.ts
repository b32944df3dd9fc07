/**
 * The approval broker: the host's Approver. A request goes to every connected approver (VS Code
 * windows, a terminal that offered to answer); the first answer wins and every client is told it
 * was settled; an approver that connects while a request waits is asked too; `avfs approve` and
 * `avfs deny` (or any client) answer through `approval/answer`. No approver connected: the run is
 * denied at once ("no_approver"). No answer in time: denied ("timed_out").
 */
import type { ApprovalAnswerKind, ApprovalRecord, ApprovalRequest } from '../protocol/exec';
import { type ApprovalOutcome, type Approver, recordOf } from '../proxy/approvals';

/** One client that can be asked; `ask` resolves with its answer, or rejects when it cannot answer. */
export interface ApproverPeer {
  id: string;
  name: string;
  ask(req: ApprovalRequest, signal: AbortSignal): Promise<{ answer: ApprovalAnswerKind; by?: string }>;
}

interface Pending {
  req: ApprovalRequest;
  asked: Set<string>;
  /** Aborts the questions still open with approvers once the request is settled. */
  questions: AbortController;
  settle: (o: ApprovalOutcome) => void;
}

export interface BrokerOptions {
  timeoutMs: number;
  /** Who may answer this request (approvers, and the terminal that asked when it offered to). */
  peers: (req: ApprovalRequest) => ApproverPeer[];
  /** Adds the rule an "always allow" answer asks for; returns its name (null when none could be added). */
  alwaysAllow: (req: ApprovalRequest, by: string) => string | null;
  /** Every client hears how a request was settled. */
  onSettled: (id: string, record: ApprovalRecord) => void;
  log: (message: string) => void;
}

export class ApprovalBroker implements Approver {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly opts: BrokerOptions) {}

  get timeoutMs(): number {
    return this.opts.timeoutMs;
  }

  list(): ApprovalRequest[] {
    return [...this.pending.values()].map((p) => p.req);
  }

  ask(req: ApprovalRequest, signal: AbortSignal): Promise<ApprovalOutcome> {
    if (this.opts.peers(req).length === 0) {
      return Promise.resolve({ kind: 'no_approver', why: 'no approver is connected to the host (open VS Code with the avfs extension, or run `avfs approvals --watch` in a terminal)' });
    }
    // One question per id: a second one would take over the first one's answers (the host refuses a
    // run id in use; this holds for any other caller too).
    if (this.pending.has(req.id)) return Promise.resolve({ kind: 'no_approver', why: `another approval request with the id ${req.id} is waiting` });
    const started = Date.now();
    return new Promise<ApprovalOutcome>((resolve) => {
      const questions = new AbortController();
      const timer = setTimeout(() => settle({ kind: 'timed_out', after_ms: this.opts.timeoutMs }), this.opts.timeoutMs);
      const onAbort = () => settle({ kind: 'cancelled' });
      const settle = (o: ApprovalOutcome) => {
        if (!this.pending.has(req.id)) return;
        this.pending.delete(req.id);
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        questions.abort();
        this.opts.onSettled(req.id, recordOf(req.id, o, Date.now() - started));
        resolve(o);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(req.id, { req, asked: new Set(), questions, settle });
      this.askPeers(req.id);
    });
  }

  /** Puts every waiting request to approvers that have not been asked yet (a window that just connected). */
  askPeers(id?: string): void {
    for (const [pid, p] of this.pending) {
      if (id !== undefined && pid !== id) continue;
      for (const peer of this.opts.peers(p.req)) {
        if (p.asked.has(peer.id)) continue;
        p.asked.add(peer.id);
        peer.ask(p.req, p.questions.signal).then(
          (reply) => this.answer(pid, reply.answer, reply.by ?? peer.name),
          (e: unknown) => {
            if (!p.questions.signal.aborted) this.opts.log(`approver ${peer.name} could not answer ${pid}: ${e instanceof Error ? e.message : String(e)}`);
          },
        );
      }
    }
  }

  /** An answer from anyone; false when the request was settled already (the first answer wins). */
  answer(id: string, answer: ApprovalAnswerKind, by: string): { settled: boolean; rule: string | null } {
    const p = this.pending.get(id);
    if (!p) return { settled: false, rule: null };
    let rule: string | null = null;
    if (answer === 'always_allow') {
      try {
        rule = this.opts.alwaysAllow(p.req, by);
      } catch (e) {
        this.opts.log(`could not add an always-allow rule for ${id}: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
    // "Always" that could not write its rule still lets this one run: say so through the scope.
    const effective: ApprovalAnswerKind = answer === 'always_allow' && rule === null ? 'approve_once' : answer;
    p.settle({ kind: 'answered', answer: { answer: effective, by, ...(rule !== null ? { rule } : {}) } });
    return { settled: true, rule };
  }

  /** Denies everything still waiting (the host is stopping). */
  cancelAll(): void {
    for (const p of [...this.pending.values()]) p.settle({ kind: 'cancelled' });
  }
}
