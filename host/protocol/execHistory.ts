/**
 * The runs the host has seen, kept in memory for `exec/list`: every run still going, with its
 * state and its output so far, and the last finished ones with their envelopes. Notifications tell
 * connected clients as things happen; this is for a client that connects later (a second window,
 * one reloaded) and must show what it missed. Bounded twice: the number of finished runs, and the
 * characters of live output per stream (the head and the latest part, as the envelope keeps).
 * Pure data (no I/O), and part of the protocol because both sides keep it: the host answers
 * `exec/list` from it, and the editor's Executions view keeps the runs it shows in one, fed by the
 * same notifications.
 */
import type { ExecState, ExecutionEnvelope } from './exec';
import { EXEC_HISTORY_RUNS, EXEC_LIVE_OUTPUT_CHARS, type ExecRun } from './host';

interface LiveRun {
  id: string;
  vault: string | null;
  command: string;
  surface: string;
  started_at: string;
  state: ExecState;
  out: { stdout: Tail; stderr: Tail };
}

/** A stream's text so far: the first half of the budget, and the last half, with what fell between counted. */
class Tail {
  head = '';
  tail = '';
  dropped = 0;

  constructor(private readonly budget: number) {}

  add(text: string): void {
    const half = this.budget / 2;
    if (this.head.length < half) {
      const room = half - this.head.length;
      this.head += text.slice(0, room);
      text = text.slice(room);
    }
    if (!text) return;
    this.tail += text;
    if (this.tail.length > half) {
      this.dropped += this.tail.length - half;
      this.tail = this.tail.slice(this.tail.length - half);
    }
  }

  text(): string {
    return this.dropped > 0 ? `${this.head}\n… ${this.dropped} characters left out …\n${this.tail}` : this.head + this.tail;
  }
}

export class ExecHistory {
  private readonly live = new Map<string, LiveRun>();
  /** Finished runs, oldest first. */
  private readonly done: ExecRun[] = [];

  constructor(
    private readonly keep = EXEC_HISTORY_RUNS,
    private readonly outputChars = EXEC_LIVE_OUTPUT_CHARS,
  ) {}

  started(run: { id: string; vault: string | null; command: string; surface: string; started_at: string }): void {
    const { id, vault, command, surface, started_at } = run;
    this.live.set(id, { id, vault, command, surface, started_at, state: 'validating', out: { stdout: new Tail(this.outputChars), stderr: new Tail(this.outputChars) } });
  }

  state(id: string, state: ExecState): void {
    const run = this.live.get(id);
    if (run) run.state = state;
  }

  output(id: string, stream: 'stdout' | 'stderr', text: string): void {
    this.live.get(id)?.out[stream].add(text);
  }

  finished(id: string, envelope: ExecutionEnvelope): void {
    const kept = this.bounded(envelope);
    const run = this.live.get(id);
    this.live.delete(id);
    this.done.push({
      id,
      vault: run?.vault ?? envelope.result.vault,
      command: run?.command ?? envelope.request.command,
      surface: run?.surface ?? 'unknown',
      started_at: run?.started_at ?? new Date(Date.now() - envelope.result.total_ms).toISOString(),
      state: envelope.result.state,
      // The envelope holds the final output: not kept twice.
      stdout: '',
      stderr: '',
      output_truncated: kept.truncated,
      envelope: kept.envelope,
    });
    if (this.done.length > this.keep) this.done.splice(0, this.done.length - this.keep);
  }

  /**
   * The envelope as remembered: each stream's output cut to the budget of a live run (its head and
   * its latest part), so the history's size is bounded by its number of runs whatever a caller's
   * --max-output (the caller itself got the whole envelope).
   */
  private bounded(envelope: ExecutionEnvelope): { envelope: ExecutionEnvelope; truncated: boolean } {
    const { stdout, stderr } = envelope.result;
    if (stdout.length <= this.outputChars && stderr.length <= this.outputChars) return { envelope, truncated: false };
    const cut = (text: string) => {
      const t = new Tail(this.outputChars);
      t.add(text);
      return t.text();
    };
    const result = {
      ...envelope.result,
      stdout: cut(stdout),
      stderr: cut(stderr),
      stdout_truncated: envelope.result.stdout_truncated || stdout.length > this.outputChars,
      stderr_truncated: envelope.result.stderr_truncated || stderr.length > this.outputChars,
    };
    return { envelope: { ...envelope, result }, truncated: true };
  }

  /**
   * Takes in what another holder listed (exec/list: an editor window that connected late), oldest
   * last as listed; runs already known are left as they are (their events are newer).
   */
  seed(runs: readonly ExecRun[]): void {
    for (const run of [...runs].reverse()) {
      if (this.live.has(run.id) || this.done.some((d) => d.id === run.id)) continue;
      if (run.envelope) {
        this.done.push(run);
        this.done.sort((a, b) => Date.parse(a.started_at) - Date.parse(b.started_at));
      } else {
        this.started(run);
        this.state(run.id, run.state);
        this.output(run.id, 'stdout', run.stdout);
        this.output(run.id, 'stderr', run.stderr);
      }
    }
    if (this.done.length > this.keep) this.done.splice(0, this.done.length - this.keep);
  }

  /** One run, running or finished. */
  get(id: string): ExecRun | undefined {
    return this.list().find((r) => r.id === id);
  }

  /** A run that ended without an envelope (the host stopped under it): forgotten. */
  forget(id: string): void {
    this.live.delete(id);
  }

  /** Newest first: every run going on, then the last `limit` finished ones. */
  list(limit = this.keep): ExecRun[] {
    const running: ExecRun[] = [...this.live.values()].reverse().map((r) => ({
      id: r.id,
      vault: r.vault,
      command: r.command,
      surface: r.surface,
      started_at: r.started_at,
      state: r.state,
      stdout: r.out.stdout.text(),
      stderr: r.out.stderr.text(),
      output_truncated: r.out.stdout.dropped + r.out.stderr.dropped > 0,
      envelope: null,
    }));
    return [...running, ...[...this.done].reverse().slice(0, limit)];
  }
}
