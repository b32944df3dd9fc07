// The approvals an editor window holds, as plain data: the queue (one shown at a time, in the
// order asked), what each notification and the "Always Allow" confirmation say, and how a request
// ended. Pure (no `vscode` import): unit-tested under node:test; approvals.ts puts it on screen.
import type { ApprovalAnswerKind, ApprovalRecord, ApprovalRequest } from '../../host/protocol/exec';
import type { Category } from '../../host/protocol/policy';
import { markdownCodeBlock, markdownText, plainText, plural } from '../format';

/** The buttons of an approval notification, in order, and what each answers. */
export const APPROVE_ONCE = 'Approve Once';
export const ALWAYS_ALLOW = 'Always Allow…';
export const DENY = 'Deny';
export const ADD_RULE = 'Add Rule and Run';
/** Instead of the answers, on a notification that cannot show the whole command: opens it in a modal. */
export const REVIEW = 'Review…';

export type Ending = { kind: 'answered_here'; answer: ApprovalAnswerKind } | { kind: 'settled'; record: ApprovalRecord | undefined };

interface Entry {
  req: ApprovalRequest;
  /** When this window was asked (ms since epoch): the time-out is the host's, counted from here. */
  askedAt: number;
}

/**
 * The requests waiting for an answer from this window, oldest first. The first is the one shown
 * as a notification; the rest are counted in the status bar and listed in the view.
 */
export class ApprovalQueue {
  private readonly entries: Entry[] = [];

  add(req: ApprovalRequest, now = Date.now()): boolean {
    if (this.entries.some((e) => e.req.id === req.id)) return false;
    this.entries.push({ req, askedAt: now });
    return true;
  }

  /** Takes a request out (answered here, settled elsewhere, timed out); false when it was not there. */
  remove(id: string): boolean {
    const i = this.entries.findIndex((e) => e.req.id === id);
    if (i < 0) return false;
    this.entries.splice(i, 1);
    return true;
  }

  has(id: string): boolean {
    return this.entries.some((e) => e.req.id === id);
  }

  get(id: string): ApprovalRequest | undefined {
    return this.entries.find((e) => e.req.id === id)?.req;
  }

  /** The one to show now. */
  head(): ApprovalRequest | undefined {
    return this.entries[0]?.req;
  }

  list(): ApprovalRequest[] {
    return this.entries.map((e) => e.req);
  }

  get size(): number {
    return this.entries.length;
  }

  clear(): ApprovalRequest[] {
    return this.entries.splice(0).map((e) => e.req);
  }
}

/** Categories as people read them ("networked, package_install" → "networked, package install"). */
export function categoriesText(req: Pick<ApprovalRequest, 'categories'>): string {
  return req.categories.map((c) => c.replace(/_/g, ' ')).join(', ') || 'unknown';
}

/** How long a command an approval notification shows whole. */
export const NOTIFICATION_COMMAND_CHARS = 120;

/** The command as shown in one line: long ones are cut in the middle. */
export function shortCommand(command: string, max = NOTIFICATION_COMMAND_CHARS): string {
  const one = oneLine(command);
  if (one.length <= max) return one;
  const half = Math.floor((max - 1) / 2);
  return `${one.slice(0, half)}…${one.slice(one.length - half)}`;
}

function oneLine(command: string): string {
  return command.replace(/\s*\n\s*/g, ' ⏎ ');
}

/** The command cut short for one line, safe to show in a notification, the status bar or a tree label. */
export function shownCommand(command: string, max?: number): string {
  return plainText(shortCommand(command, max));
}

/** The parts of the command that asked for approval. */
function askingParts(req: Pick<ApprovalRequest, 'parts'>): ApprovalRequest['parts'] {
  return req.parts.filter((p) => p.action === 'require_approval');
}

/**
 * Whether the notification cannot show everything being approved: the command was cut, or more
 * than one of its parts asked. Then it offers only Review… (a modal with all of it) and Deny, never
 * an approval of something partly hidden.
 */
export function needsReview(req: Pick<ApprovalRequest, 'command' | 'parts'>): boolean {
  return oneLine(req.command).length > NOTIFICATION_COMMAND_CHARS || askingParts(req).length > 1;
}

/** The Review… modal: the whole command, where, and each asking part with its reason. */
export function reviewConfirmation(req: ApprovalRequest): { message: string; detail: string } {
  const where = req.cwd && req.cwd !== '/' ? ` in ${plainText(req.cwd)}` : '';
  const parts = askingParts(req);
  const lines = [
    `The whole command (vault ${plainText(req.vault)}${where}):`,
    '',
    plainText(req.command.replace(/\r?\n/g, ' ⏎ ')),
    '',
    `It needs approval: ${plainText(categoriesText(req))} (rule ${plainText(req.rule)}).`,
    ...(parts.length ? ['', `${parts.length === 1 ? 'The part that asks' : `The ${parts.length} parts that ask`}:`, ...parts.map((p) => `  • ${plainText(oneLine(p.command))} — ${plainText(withoutCommand(p.reason, p.command))}`)] : ['', plainText(req.reason)]),
  ];
  return { message: `Approve this command of an agent in vault ${plainText(req.vault)}?`, detail: lines.join('\n') };
}

/** Each category in the few words a person reads at a glance ("… in vault demo: reaches the network."). */
const HEADLINES: Record<Category, string> = {
  networked: 'reaches the network',
  opaque_code: 'runs downloaded or decoded code',
  privilege: 'escalates privilege',
  host_escape: 'reaches outside the vault',
  persistence: 'plants code that runs later',
  destructive: 'deletes data in bulk',
  package_install: 'installs packages',
  vcs_remote: 'publishes to a remote',
  container: 'drives a container engine',
  system: 'affects host processes',
  resource_exhaustion: 'may exhaust the machine',
  obfuscation: 'runs a program the policy cannot name',
  code_execution: 'runs code the policy does not read',
  interactive: 'waits for a terminal',
  unknown: 'does something the policy cannot see into',
  mutating: 'changes files',
  read_only: 'only reads',
};
/** The order the headline names them in: what matters most to a person first. */
const HEADLINE_ORDER = Object.keys(HEADLINES) as Category[];

/**
 * Why it asks, in one short clause: the categories of the parts that asked (else of the whole
 * command), the two that matter most, in words ("reaches the network and publishes to a remote").
 * The rest (every category, the rule, the parts and their reasons) is in Review… and the tooltip.
 */
export function headline(req: Pick<ApprovalRequest, 'categories' | 'parts'>): string {
  const asked = new Set(askingParts(req).flatMap((p) => p.categories));
  const from = asked.size ? asked : new Set(req.categories);
  const phrases = HEADLINE_ORDER.filter((c) => from.has(c)).map((c) => HEADLINES[c]);
  return phrases.length ? phrases.slice(0, 2).join(' and ') : 'needs approval';
}

/**
 * The notification's text, read in two seconds: who, what, where, and the one thing that makes it
 * ask ("Agent wants to run `git push origin main` in vault web-app: reaches the network and
 * publishes to a remote."). `waiting` counts the others.
 */
export function approvalMessage(req: ApprovalRequest, waiting: number): string {
  const more = waiting > 0 ? ` ${plural(waiting, 'more request')} waiting.` : '';
  const review = needsReview(req) ? ' Review it to see all of it before answering.' : '';
  return `Agent wants to run \`${shownCommand(req.command)}\` in vault ${plainText(req.vault)}: ${headline(req)}.${review}${more}`;
}

/** Why it asks, one line per part that asked ("curl -s x.io — curl talks to the network"), else the decision's reason. */
function whyAsked(req: Pick<ApprovalRequest, 'parts' | 'reason'>): string[] {
  const parts = askingParts(req);
  return parts.length ? parts.map((p) => `${oneLine(p.command)} — ${withoutCommand(p.reason, p.command)}`) : [req.reason];
}

/**
 * A part's reason starts with the part itself, cut short when long ("curl -s x.io: curl talks to the
 * network", "python3 -c 'import so…: python -c runs inline code"): the message named it already.
 */
function withoutCommand(reason: string, command: string): string {
  for (let at = reason.indexOf(': '); at > 0; at = reason.indexOf(': ', at + 1)) {
    const head = reason.slice(0, at).replace(/…$/, '');
    if (head.length > 0 && command.startsWith(head)) return reason.slice(at + 2);
  }
  return reason;
}

/** The parts of the command that asked, with the exact rule each adds (what "Always Allow" writes). */
export function alwaysAllowConfirmation(req: ApprovalRequest, home: string | undefined): { message: string; detail: string } {
  const asked = req.parts.filter((p) => p.action === 'require_approval' && p.argv.length > 0);
  const file = home ? `${home.replace(/\/$/, '')}/policy.json` : 'policy.json in the avfs home';
  const lines = asked.length
    ? [
        `Adds ${plural(asked.length, 'rule')} to ${file}, so that ${asked.length === 1 ? 'this exact command runs' : 'these exact commands run'} without asking from now on:`,
        '',
        ...asked.map((p) => `  allow exactly: [${p.argv.map((arg) => plainText(JSON.stringify(arg))).join(',')}]`),
        '',
        `It asked because of the rule ${plainText(req.rule)}; that rule stays as it is for other commands.`,
        '',
        'The command then runs once now. Remove the rule with `avfs policy` or by editing the file.',
      ]
    : [`No exact rule can be added for this command (${plainText(req.rule)}): it runs this once.`];
  return { message: `Always allow \`${shownCommand(req.command, 80)}\` in every vault?`, detail: lines.join('\n') };
}

/** What a settled request's record says, for the status bar ("approved by avfs approve (pid 1)"). */
export function settledText(req: Pick<ApprovalRequest, 'command'>, record: ApprovalRecord | undefined): string {
  const cmd = shownCommand(req.command, 60);
  if (!record) return `The approval for \`${cmd}\` is no longer waiting.`;
  const by = record.by ? ` by ${plainText(record.by)}` : '';
  switch (record.outcome) {
    case 'approved':
      return `\`${cmd}\` was approved${by}${record.scope === 'always' ? ' (always)' : ''}.`;
    case 'denied':
      return `\`${cmd}\` was denied${by}.`;
    case 'timed_out':
      return `The approval for \`${cmd}\` timed out: it was denied.`;
    case 'no_approver':
      return `\`${cmd}\` was denied: no approver.`;
    case 'cancelled':
      return `The approval for \`${cmd}\` was cancelled (the run stopped).`;
  }
}

/**
 * The Pending Approvals row of one request: label and description (plain, safe), and the tooltip as
 * Markdown in which everything from the request is escaped or fenced (so it reads as itself).
 */
export function approvalRow(req: ApprovalRequest): { label: string; description: string; tooltip: string } {
  const where = req.cwd !== '/' ? ` in ${markdownText(req.cwd)}` : '';
  return {
    label: shownCommand(req.command, 60),
    description: `${plainText(req.vault)} · ${plainText(categoriesText(req))}`,
    tooltip: [
      `**${markdownText(req.vault)}**${where}`,
      '',
      markdownCodeBlock(req.command),
      '',
      `Needs approval: ${markdownText(categoriesText(req))} (rule ${markdownText(req.rule)})`,
      '',
      ...whyAsked(req).map((why) => `- ${markdownText(why)}`),
      '',
      markdownText(`Asked by ${req.surface} at ${req.requested_at}`),
    ].join('\n'),
  };
}
