// The "AVFS Vault Shell": a pseudoterminal whose every line runs through the exec pipeline in a
// vault, via the host (`exec/run`): the policy judges it, a checkpoint is taken when it asks for
// one, an approval is asked in this window's notifications, the output streams in, and the exit
// code is shown. The prompt shows the vault and the working directory; `cd` is tracked here (each
// line is its own run). A denied line prints the decision and runs nothing. Ctrl-C cancels a run.
import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import * as vscode from 'vscode';
import * as rpc from 'vscode-jsonrpc/node';
import { NOTIFICATIONS } from '../../host/protocol/host';
import type { ExecutionEnvelope } from '../../host/protocol/exec';
import type { HostClient, Logger } from '../client/hostClient';
import { config } from '../config';
import { errorMessage } from '../errors';

const BOLD = '\x1b[1m';
const DIM = '\x1b[2m';
const RED = '\x1b[31m';
const RESET = '\x1b[0m';

/** Text as a terminal shows it: every line ends with \r\n. */
const crlf = (text: string): string => text.replace(/\r?\n/g, '\r\n');

export interface VaultShellOptions {
  host: HostClient;
  /** undefined: the current vault (as the host resolves it at each run). */
  vault: string | undefined;
  log: Logger;
}

export class VaultShell implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<number | void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private cwd = '/';
  private line = '';
  private running: { id: string; cancel: rpc.CancellationTokenSource } | undefined;
  private readonly subscription: vscode.Disposable;
  /** Every line run, with its envelope (for tests and the log). */
  readonly runs: Array<{ line: string; envelope?: ExecutionEnvelope; error?: string }> = [];

  constructor(private readonly opts: VaultShellOptions) {
    this.subscription = opts.host.onNotification(({ method, params }) => {
      if (method !== 'exec/output' || !this.running) return;
      const p = NOTIFICATIONS['exec/output'].safeParse(params);
      if (p.success && p.data.id === this.running.id) this.write(p.data.stream === 'stderr' ? `${RED}${crlf(p.data.text)}${RESET}` : crlf(p.data.text));
    });
  }

  open(): void {
    this.write(`${BOLD}AVFS Vault Shell${RESET}: each line runs in ${this.opts.vault ? `the vault ${this.opts.vault}` : 'the current vault'} through the avfs policy ${DIM}(type exit to close)${RESET}\r\n`);
    this.prompt();
  }

  close(): void {
    this.running?.cancel.cancel();
    this.subscription.dispose();
  }

  private write(text: string): void {
    this.writeEmitter.fire(text);
  }

  private prompt(): void {
    this.write(`${BOLD}avfs:${this.opts.vault ?? 'current'}${RESET} ${this.cwd}$ `);
  }

  handleInput(data: string): void {
    if (this.running) {
      // Ctrl-C cancels the run (exit 130, as `avfs proxy exec` does); other keys wait for the prompt.
      if (data.includes('\x03')) this.running.cancel.cancel();
      return;
    }
    for (const ch of data) {
      if (ch === '\r' || ch === '\n') {
        const line = this.line;
        this.line = '';
        this.write('\r\n');
        void this.runLine(line);
        return;
      }
      if (ch === '\x7f' || ch === '\b') {
        if (this.line.length > 0) {
          this.line = this.line.slice(0, -1);
          this.write('\b \b');
        }
      } else if (ch === '\x03') {
        this.line = '';
        this.write('^C\r\n');
        this.prompt();
      } else if (ch >= ' ') {
        this.line += ch;
        this.write(ch);
      }
    }
  }

  /** Runs one line: `cd`, `exit`, or a command through the exec pipeline. */
  async runLine(line: string): Promise<void> {
    const text = line.trim();
    if (text === '') return this.prompt();
    if (text === 'exit') {
      this.closeEmitter.fire(0);
      return;
    }
    const cd = /^cd(?:\s+(.*))?$/.exec(text);
    if (cd) {
      await this.changeDirectory(cd[1]?.trim() || '/');
      return this.prompt();
    }
    const id = randomUUID();
    const cancel = new rpc.CancellationTokenSource();
    this.running = { id, cancel };
    const record: (typeof this.runs)[number] = { line: text };
    this.runs.push(record);
    try {
      const env = await this.opts.host.request(
        'exec/run',
        { id, ...(this.opts.vault ? { vault: this.opts.vault } : {}), command: { shell: text }, cwd: this.cwd, ...(config.vaultShellMaterialize() ? { materialize: true } : { keep_mount: true }) },
        // An approval may wait for minutes; the run has its own time limit.
        { token: cancel.token, timeoutMs: 24 * 60 * 60 * 1000 },
      );
      record.envelope = env;
      this.write(this.summary(env));
    } catch (e) {
      record.error = errorMessage(e);
      this.write(`${RED}avfs: ${record.error}${RESET}\r\n`);
    } finally {
      this.running = undefined;
      cancel.dispose();
    }
    this.prompt();
  }

  private async changeDirectory(arg: string): Promise<void> {
    const target = posix.resolve(this.cwd, arg.replace(/^(['"])(.*)\1$/, '$2'));
    try {
      const st = await this.opts.host.request('fs/stat', { ...(this.opts.vault ? { vault: this.opts.vault } : {}), path: target, follow: true });
      if (st.type !== 'directory') this.write(`${RED}cd: ${target}: not a directory${RESET}\r\n`);
      else this.cwd = target;
    } catch (e) {
      this.write(`${RED}cd: ${target}: ${errorMessage(e)}${RESET}\r\n`);
    }
  }

  /** What follows a run's output: nothing for a clean exit 0, else the exit status; a denied line, the decision. */
  private summary(env: ExecutionEnvelope): string {
    const r = env.result;
    if (r.state === 'denied') {
      const d = r.decision;
      const who = r.approval ? ` (approval ${r.approval.outcome}${r.approval.by ? ` by ${r.approval.by}` : ''})` : '';
      return `${RED}avfs: denied${who}: ${d ? `${d.action} by ${d.rule}: ${d.reason ?? ''}` : (r.error?.message ?? '')}${RESET}\r\n`;
    }
    const parts: string[] = [];
    if (r.state === 'completed' && r.exit_code !== 0) parts.push(`exit ${r.exit_code}`);
    if (r.state !== 'completed') parts.push(`${r.state}${r.error ? `: ${r.error.message}` : ''}`);
    if (r.checkpoint && r.changed_files.length > 0) parts.push(`${r.changed_files.length} file(s) changed; checkpoint ${r.checkpoint}`);
    const tail = r.stdout.length > 0 && !r.stdout.endsWith('\n') ? '\r\n' : '';
    return parts.length ? `${tail}${DIM}avfs: ${parts.join('; ')}${RESET}\r\n` : tail;
  }
}
