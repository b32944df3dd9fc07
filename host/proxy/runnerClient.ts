/**
 * Commands started from a small process of their own (runnerProcess.ts) rather than from the
 * caller, for a long-lived caller whose size makes every fork costly (the vault host: measured
 * ~10 ms more per command, see docs/architecture.md). Same options and result as runCommand.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunOptions, RunResult } from './runner';

type SentOptions = Omit<RunOptions, 'signal' | 'onOutput' | 'onStart'>;
export type RunnerRequest = { type: 'run'; id: number; opts: SentOptions } | { type: 'cancel'; id: number } | { type: 'ack'; id: number; bytes: number };

/**
 * Output the runner sends ahead of the host's acknowledgements, per run: past it the command's
 * pipes are not read until the host has taken what was sent, so a flood is held in the pipes
 * (the command waits), not in either process's memory.
 */
export const OUTPUT_WINDOW_BYTES = 4 * 1024 * 1024;

/** The runner's argument that makes it keep the next run's sandbox ready (runner.ts: a runner serving one mount). */
export const KEEP_SANDBOX_READY = '--keep-sandbox-ready';
export type RunnerReply =
  | { type: 'ready' }
  | { type: 'started'; id: number; pid: number }
  | { type: 'output'; id: number; stream: 'stdout' | 'stderr'; chunk: Uint8Array }
  | { type: 'done'; id: number; result: RunResult }
  | { type: 'failed'; id: number; message: string };

function runnerScript(): { file: string; execArgv: string[] } {
  const bundled = join(__dirname, 'avfs-runner.js');
  if (existsSync(bundled)) return { file: bundled, execArgv: [] };
  return { file: join(__dirname, 'runnerProcess.ts'), execArgv: ['--import', 'tsx'] };
}

interface Run {
  opts: RunOptions;
  resolve: (r: RunResult) => void;
  reject: (e: Error) => void;
}

export class RunnerProcess {
  /** `keepSandboxReady`: for a runner whose runs all use one mount (runner.ts; stop() lets it go). */
  constructor(private readonly options: { keepSandboxReady?: boolean } = {}) {}

  private child: ChildProcess | undefined;
  private ready: Promise<void> | undefined;
  private readonly runs = new Map<number, Run>();
  private nextId = 1;

  /** Starts the process (once); resolves when it can take commands. */
  start(): Promise<void> {
    if (this.ready) return this.ready;
    const { file, execArgv } = runnerScript();
    const child = fork(file, this.options.keepSandboxReady ? [KEEP_SANDBOX_READY] : [], { execArgv, serialization: 'advanced', stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    this.child = child;
    this.ready = new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.on('message', (m: RunnerReply) => {
        if (m.type === 'ready') return resolve();
        const run = this.runs.get(m.id);
        if (!run) return;
        if (m.type === 'output') {
          void run.opts.onOutput?.(m.stream, Buffer.from(m.chunk.buffer, m.chunk.byteOffset, m.chunk.byteLength));
          // Taken (the host's own buffers are bounded, see server.ts): the runner may send more.
          if (child.connected) child.send({ type: 'ack', id: m.id, bytes: m.chunk.byteLength } satisfies RunnerRequest);
        }
        else if (m.type === 'started') run.opts.onStart?.(m.pid);
        else {
          this.runs.delete(m.id);
          if (m.type === 'done') run.resolve(m.result);
          else run.reject(new Error(m.message));
        }
      });
    });
    child.once('exit', (code, signal) => {
      // Commands it was running are out of reach now; the next run starts another process.
      for (const run of this.runs.values()) run.reject(new Error(`the command runner exited (${signal ?? code})`));
      this.runs.clear();
      if (this.child === child) {
        this.child = undefined;
        this.ready = undefined;
      }
    });
    return this.ready;
  }

  async run(opts: RunOptions): Promise<RunResult> {
    await this.start();
    const child = this.child!;
    const id = this.nextId++;
    const { signal, onOutput: _onOutput, onStart: _onStart, ...sent } = opts;
    return new Promise<RunResult>((resolve, reject) => {
      this.runs.set(id, { opts, resolve, reject });
      child.send({ type: 'run', id, opts: sent } satisfies RunnerRequest);
      const cancel = () => child.connected && child.send({ type: 'cancel', id } satisfies RunnerRequest);
      if (signal?.aborted) cancel();
      else signal?.addEventListener('abort', cancel, { once: true });
    });
  }

  /** Ends the process (its running commands are stopped as a cancellation stops them); resolves once it has exited (at most `ms`). */
  async stop(ms = 5000): Promise<void> {
    const child = this.child;
    if (!child?.connected) return;
    const gone = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      setTimeout(resolve, ms).unref();
    });
    child.disconnect();
    await gone;
  }
}
