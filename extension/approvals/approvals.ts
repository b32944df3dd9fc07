// Approvals in the editor. The host puts each `approval/request` to this window (hostClient's
// onApprovalRequest); it becomes a warning notification naming the command, the vault and, in a few
// words, why (Approve Once / Always Allow… / Deny / Review…; closing it is Deny), one at a time: the others wait in
// the queue, counted in the status bar and listed under "Pending Approvals" in the Vaults view,
// where each can be answered too. "Always Allow…" shows the rule it adds (a modal) before adding
// it. A request settled elsewhere (another window, `avfs approve`, the host's time-out) leaves the
// queue at once; VS Code cannot close a shown notification, so a click on its stale buttons only
// says how it was settled.
import * as vscode from 'vscode';
import type { CancellationToken } from 'vscode-jsonrpc/node';
import type { ApprovalAnswerKind, ApprovalRecord, ApprovalRequest } from '../../host/protocol/exec';
import { type ApprovalReply, NOTIFICATIONS } from '../../host/protocol/host';
import type { HostClient, Logger } from '../client/hostClient';
import { ADD_RULE, ALWAYS_ALLOW, alwaysAllowConfirmation, APPROVE_ONCE, ApprovalQueue, approvalMessage, DENY, needsReview, REVIEW, reviewConfirmation, settledText, shortCommand } from './model';

/** How long a cancelled question waits for the host's approval/settled before it is dropped without it. */
const SETTLED_GRACE_MS = 250;

export class ApprovalCenter implements vscode.Disposable {
  private readonly queue = new ApprovalQueue();
  /** Answers the host's request for each queued id (resolving after it was settled elsewhere is harmless). */
  private readonly replies = new Map<string, (reply: ApprovalReply) => void>();
  /** The request whose notification is on screen, if any. */
  private showing: string | undefined;
  private readonly emitter = new vscode.EventEmitter<void>();
  /** The queue changed: the status bar count and the Pending Approvals node follow it. */
  readonly onDidChange = this.emitter.event;
  private readonly answered = new vscode.EventEmitter<{ id: string; answer: ApprovalAnswerKind }>();
  /** Answered in this window (the request's id is its run's). */
  readonly onDidAnswer = this.answered.event;
  private readonly disposables: vscode.Disposable[] = [];
  private host: HostClient | undefined;

  constructor(
    private readonly options: {
      /** Who answered, as the envelope and the audit trail record it. */
      by: string;
      log: Logger;
    },
  ) {}

  /** Wires the host's events (settled elsewhere; host gone) once the client exists. */
  attach(host: HostClient): void {
    this.host = host;
    this.disposables.push(
      host.onNotification(({ method, params }) => {
        if (method !== 'approval/settled') return;
        const parsed = NOTIFICATIONS['approval/settled'].safeParse(params);
        if (parsed.success) this.settled(parsed.data.id, parsed.data.record);
      }),
      host.onDidChangeState((state) => {
        // The requests came over the connection that went: a new host asks again what still waits.
        if (state.name !== 'ready') this.hostGone();
      }),
    );
  }

  /** hostClient's onApprovalRequest: queue it, show it when its turn comes, answer the host when answered. */
  readonly ask = (req: ApprovalRequest, token: CancellationToken): Promise<ApprovalReply> =>
    new Promise<ApprovalReply>((resolve) => {
      if (!this.queue.add(req)) {
        // A second request under an id already waiting cannot be told apart from the first: it is
        // answered at once (deny), never left for the host to wait on.
        this.options.log.warn(`approval ${req.id} asked again while the first is still waiting: the second is denied`);
        resolve({ answer: 'deny', by: this.options.by });
        return;
      }
      this.options.log.info(`approval asked: ${req.id} \`${shortCommand(req.command)}\` in ${req.vault} (${req.reason})`);
      this.replies.set(req.id, resolve);
      // Cancelled: settled by someone else or timed out. The host cancels its question just before it
      // sends approval/settled, which says how: that gets a moment to arrive and be the one shown.
      token.onCancellationRequested(() => setTimeout(() => this.settled(req.id, undefined), SETTLED_GRACE_MS));
      this.emitter.fire();
      this.showNext();
    });

  pending(): ApprovalRequest[] {
    return this.queue.list();
  }

  get(id: string): ApprovalRequest | undefined {
    return this.queue.get(id);
  }

  /**
   * Answers a request from this window (a notification's button, the view's inline action, a
   * command). "always_allow" first shows the rule in a modal; false when that was cancelled or the
   * request was no longer waiting.
   */
  async answer(id: string, answer: ApprovalAnswerKind): Promise<boolean> {
    const req = this.queue.get(id);
    if (!req) {
      vscode.window.setStatusBarMessage('$(info) That approval request is no longer waiting.', 5000);
      return false;
    }
    if (answer === 'always_allow') {
      const home = this.host?.state.name === 'ready' ? this.host.state.home : undefined;
      const { message, detail } = alwaysAllowConfirmation(req, home);
      const pick = await vscode.window.showWarningMessage(message, { modal: true, detail }, ADD_RULE);
      if (pick !== ADD_RULE) return false;
      // Settled elsewhere while the modal was open.
      if (!this.queue.has(id)) return this.answer(id, answer);
    }
    const reply = this.replies.get(id);
    this.queue.remove(id);
    this.replies.delete(id);
    this.options.log.info(`approval ${id} answered here: ${answer}`);
    reply?.({ answer, by: this.options.by });
    this.answered.fire({ id, answer });
    if (this.showing === id) this.showing = undefined;
    this.emitter.fire();
    this.showNext();
    return true;
  }

  /** Settled elsewhere (record from approval/settled), timed out, or the host went away. */
  private settled(id: string, record: ApprovalRecord | undefined, quiet = false): void {
    const req = this.queue.get(id);
    const reply = this.replies.get(id);
    this.replies.delete(id);
    // The host no longer waits for this answer; it resolves the request's promise, nothing more.
    reply?.({ answer: 'deny', by: this.options.by });
    if (!req || !this.queue.remove(id)) return;
    this.options.log.info(`approval ${id} settled elsewhere: ${record ? `${record.outcome} by ${record.by ?? 'nobody'}` : 'no longer waiting'}`);
    if (!quiet) vscode.window.setStatusBarMessage(`$(info) ${settledText(req, record)}`, 8000);
    if (this.showing === id) this.showing = undefined;
    this.emitter.fire();
    this.showNext();
  }

  /**
   * The host went away (or restarts): its questions went with its connection. Each is resolved, the
   * queue and the notification on screen are forgotten, and the change is told once, so that the
   * next request (from the new host) is shown.
   */
  private hostGone(): void {
    const gone = this.queue.clear();
    for (const reply of this.replies.values()) reply({ answer: 'deny', by: this.options.by });
    this.replies.clear();
    this.showing = undefined;
    if (gone.length) this.options.log.info(`approvals: the host went away; ${gone.length} request(s) no longer waiting`);
    this.emitter.fire();
  }

  private showNext(): void {
    if (this.showing) return;
    const req = this.queue.head();
    if (!req) return;
    this.showing = req.id;
    void this.show(req);
  }

  private async show(req: ApprovalRequest): Promise<void> {
    // `showing` stays this request's until it is answered (or settled elsewhere): while a modal of
    // its own is open (Review…, Always Allow…), a new request must not put up a second one for it.
    const review = needsReview(req);
    // The details (every category, the rule, each part's reason) are one click away in Review….
    const buttons = review ? [REVIEW, DENY] : [APPROVE_ONCE, ALWAYS_ALLOW, DENY, REVIEW];
    let pick = await vscode.window.showWarningMessage(approvalMessage(req, this.queue.size - 1), ...buttons);
    if (this.stale(req, pick)) return;
    if (pick === REVIEW) {
      const { message, detail } = reviewConfirmation(req);
      pick = await vscode.window.showWarningMessage(message, { modal: true, detail }, APPROVE_ONCE, ALWAYS_ALLOW, DENY);
      if (this.stale(req, pick)) return;
      // Cancelled at the review: ask again (the notification comes back), never a silent deny.
      if (pick === undefined) return this.showAgain(req);
    }
    if (pick === ALWAYS_ALLOW) {
      // Cancelled at the rule: ask again, never a silent deny.
      if (!(await this.answer(req.id, 'always_allow'))) this.showAgain(req);
      return;
    }
    // Closing the notification is a deny, as the host's time-out is.
    await this.answer(req.id, pick === APPROVE_ONCE ? 'approve_once' : 'deny');
  }

  /** Settled while it was shown: its buttons are stale (true), and a click on them says so. */
  private stale(req: ApprovalRequest, pick: string | undefined): boolean {
    if (this.queue.has(req.id)) return false;
    if (pick) vscode.window.setStatusBarMessage('$(info) That approval request was already settled.', 5000);
    return true;
  }

  private showAgain(req: ApprovalRequest): void {
    if (this.showing === req.id) this.showing = undefined;
    this.showNext();
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    this.emitter.dispose();
    this.answered.dispose();
  }
}
