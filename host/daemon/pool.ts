/**
 * The host's operation threads: a small pool of worker_threads that run the operations table, so
 * a long operation (a diff of 50,000 files, a gc) holds up only the thread it runs on while the
 * host's main thread goes on reading requests and the other threads answer them. Each thread
 * opens vaults itself and keeps them open (host/ops/vaultAccess.ts). A call goes to the thread
 * with the fewest calls in flight.
 *
 * Reads whose cost does not grow with the vault (one path's metadata, one checkpoint's row, the
 * quota counters) are answered on the host's own thread instead, from read-only connections (in
 * WAL mode a reader never waits for a writer): they never queue behind long operations when every
 * thread is busy, and they skip the hop to a thread and back, which is most of a stat's round trip.
 * So is the read of a small file (what an agent's read_file mostly is): its size is looked up
 * inline first, and a file over INLINE_READ_BYTES goes to a thread like any long operation.
 *
 * Deleting a vault is the one operation that must not meet open connections (SQLite's close
 * removes a write-ahead log by its name, which a re-created vault would share): it waits until
 * no call is in flight, has every thread close its vaults, runs alone, and only then lets the
 * next calls in.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { OPS } from '../ops';
import type { OpName, OpsContext } from '../ops/context';
import { KeptVaults } from '../ops/vaultAccess';
import type { PolicyEngine } from '../policy/engine';
import { AvfsError, type ErrorJson } from '../protocol/errors';
import type { ChangeSummary } from '../protocol/changes';
import type { ExecStore } from '../proxy/pipeline';
import type { AvfsHome } from '../store/home';
import type { Surface } from '../store/journal';
import type { EXEC_TASKS, ExecTaskName } from './execTasks';

export type ToWorker =
  | { id: number; kind: 'op'; method: OpName; params: unknown; surface: Surface }
  | { id: number; kind: 'task'; task: ExecTaskName; args: unknown }
  | { id: number; kind: 'closeVaults' }
  | { id: number; kind: 'stop' };
export type FromWorker = { id: number; ok: true; result: unknown } | { id: number; ok: false; error: ErrorJson };

interface Thread {
  worker: Worker;
  inFlight: number;
  /** When it was last given a call: ties go to the one idle longest. */
  lastUsed: number;
  ready: Promise<void>;
}

/** Answered on the host's own thread (see above). */
const INLINE: ReadonlySet<OpName> = new Set<OpName>(['fs/stat', 'checkpoint/stat', 'quota/get']);
/** Reads of one file, answered inline when the file is this small (its stat, inline, says). */
const INLINE_READS: ReadonlySet<OpName> = new Set<OpName>(['fs/readText', 'fs/readFile']);
export const INLINE_READ_BYTES = 64 * 1024;

type Distribute<M> = M extends ToWorker ? Omit<M, 'id'> : never;
type Message = Distribute<ToWorker>;

/** Where the worker's code is: beside the bundle, or the TypeScript source when run through tsx. */
function workerScript(): { file: string; execArgv?: string[] } {
  const bundled = join(__dirname, 'avfs-ops-worker.js');
  if (existsSync(bundled)) return { file: bundled };
  return { file: join(__dirname, 'opsWorker.ts'), execArgv: ['--import', 'tsx'] };
}

export class OpsPool {
  private readonly threads: Thread[] = [];
  private readonly calls = new Map<number, { thread: Thread; resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  /** Vault deletions run one after the other… */
  private exclusiveQueue: Promise<unknown> = Promise.resolve();
  private exclusivePending = 0;
  /** …and while one is waiting or running, other calls wait for this. */
  private blocked: { done: Promise<void>; open: () => void } | undefined;
  /** Called when the last call in flight is answered (a deletion is waiting for that). */
  private drained: (() => void) | undefined;
  private stopping = false;
  /** This thread's own connections, for the inline reads. */
  private readonly vaults: KeptVaults;
  private readonly contexts = new Map<Surface, OpsContext>();

  constructor(
    private readonly home: AvfsHome,
    private readonly size: number,
    private readonly log: (message: string) => void,
    private readonly engine: () => Promise<PolicyEngine>,
  ) {
    this.vaults = new KeptVaults(home);
  }

  /** Starts the threads; resolves once each has loaded the operations. */
  async start(): Promise<void> {
    for (let i = 0; i < Math.max(1, this.size); i++) this.threads.push(this.spawn());
    await Promise.all(this.threads.map((t) => t.ready));
  }

  private spawn(): Thread {
    const { file, execArgv } = workerScript();
    const worker = new Worker(file, {
      workerData: { home: this.home.dir },
      ...(execArgv ? { execArgv } : {}),
      // A mount server is started with the avfs script, which a worker's own argv does not name.
      env: { ...process.env, AVFS_CLI_SCRIPT: process.env.AVFS_CLI_SCRIPT ?? process.argv[1] ?? '' },
    });
    let ready!: () => void;
    let failed!: (e: Error) => void;
    const thread: Thread = { worker, inFlight: 0, lastUsed: 0, ready: new Promise<void>((res, rej) => ((ready = res), (failed = rej))) };
    worker.on('message', (m: FromWorker) => {
      if (m.id === 0) return ready();
      const call = this.calls.get(m.id);
      if (!call) return;
      this.calls.delete(m.id);
      this.settled(call.thread);
      if (m.ok) call.resolve(m.result);
      else {
        const { error: kind, message, ...details } = m.error;
        call.reject(new AvfsError(kind, message, details));
      }
    });
    worker.on('error', (e) => {
      this.log(`an operation thread failed: ${e.message}`);
      failed(e);
    });
    worker.on('exit', (code) => {
      // Its calls cannot be answered any more; a thread lost outside a stop is replaced.
      for (const [id, call] of this.calls) {
        if (call.thread !== thread) continue;
        this.calls.delete(id);
        this.settled(thread);
        call.reject(new AvfsError('Internal', `the operation thread stopped (exit code ${code}) before it answered`));
      }
      const i = this.threads.indexOf(thread);
      if (i >= 0 && !this.stopping) {
        this.log(`an operation thread exited with code ${code}; starting another`);
        this.threads[i] = this.spawn();
      }
    });
    return thread;
  }

  private settled(thread: Thread): void {
    thread.inFlight--;
    if (this.drained && this.inFlight() === 0) this.drained();
  }

  private inFlight(): number {
    return this.threads.reduce((n, t) => n + t.inFlight, 0);
  }

  private send(thread: Thread, message: Message): Promise<unknown> {
    const id = this.nextId++;
    thread.inFlight++;
    thread.lastUsed = performance.now();
    return new Promise((resolve, reject) => {
      this.calls.set(id, { thread, resolve, reject });
      thread.worker.postMessage({ ...message, id });
    });
  }

  /** The thread with the fewest calls in flight (the longest idle among equals). */
  private pick(): Thread {
    let best = this.threads[0]!;
    for (const t of this.threads) if (t.inFlight < best.inFlight || (t.inFlight === best.inFlight && t.lastUsed < best.lastUsed)) best = t;
    return best;
  }

  private async dispatch(message: Message): Promise<unknown> {
    for (;;) {
      while (this.blocked) await this.blocked.done;
      if (this.stopping) throw new AvfsError('Busy', 'the host is stopping');
      const thread = this.pick();
      await thread.ready;
      // A deletion may have started while this waited: it must find nothing in flight.
      if (!this.blocked) return this.send(thread, message);
    }
  }

  /** Runs an operation: inline if it is one of the cheap reads, else on one of the threads. */
  async run(method: OpName, params: unknown, surface: Surface): Promise<unknown> {
    if (method === 'vault/delete') return this.alone({ kind: 'op', method, params, surface });
    if (!INLINE.has(method) && !INLINE_READS.has(method)) return this.dispatch({ kind: 'op', method, params, surface });
    while (this.blocked) await this.blocked.done;
    if (INLINE_READS.has(method) && !(await this.smallFile(params as { vault?: string; path: string }, surface))) return this.dispatch({ kind: 'op', method, params, surface });
    return (OPS[method] as (ctx: OpsContext, p: unknown) => unknown)(this.context(surface), params);
  }

  /** Whether a read's file is small enough to read inline; anything else (a missing file, a bad path) goes to a thread, which says what is wrong. */
  private async smallFile(p: { vault?: string; path: string }, surface: Surface): Promise<boolean> {
    try {
      const st = await OPS['fs/stat'](this.context(surface), { ...(p.vault !== undefined ? { vault: p.vault } : {}), path: p.path, follow: true });
      return st.type === 'file' && st.size <= INLINE_READ_BYTES;
    } catch {
      return false;
    }
  }

  private context(surface: Surface): OpsContext {
    let ctx = this.contexts.get(surface);
    if (!ctx) {
      ctx = { home: this.home, surface, vaults: this.vaults, engine: this.engine };
      this.contexts.set(surface, ctx);
    }
    return ctx;
  }

  /** Runs one of the exec tasks (execTasks.ts) on one of the threads. */
  task<T extends ExecTaskName>(task: T, args: Parameters<(typeof EXEC_TASKS)[T]>[1]): Promise<ReturnType<(typeof EXEC_TASKS)[T]>> {
    return this.dispatch({ kind: 'task', task, args }) as Promise<ReturnType<(typeof EXEC_TASKS)[T]>>;
  }

  /** The exec pipeline's tree-sized steps, run on the threads. */
  execStore(): ExecStore {
    return {
      saveCheckpoint: (vault, opts) => this.task('checkpoint.save', { vault, opts }),
      deleteCheckpoint: async (vault, name) => {
        await this.task('checkpoint.delete', { vault, name });
      },
      diffToLive: (vault, from) => this.task('diff.toLive', { vault, from }) as Promise<ChangeSummary>,
      prepareCopy: async (vault, copy) => {
        const { result, state } = await this.task('copy.prepare', { vault, dir: copy.dir });
        copy.adopt(state);
        return result;
      },
      commitCopy: (vault, copy) => this.task('copy.commit', { vault, dir: copy.dir, state: copy.prepared! }),
    };
  }

  /** Runs `message` with no other call in flight and every thread's vaults closed; calls that come meanwhile wait. */
  private alone(message: Message): Promise<unknown> {
    this.exclusivePending++;
    if (!this.blocked) {
      let open!: () => void;
      this.blocked = { done: new Promise<void>((r) => (open = r)), open };
    }
    const result = this.exclusiveQueue.then(async () => {
      if (this.inFlight() > 0) await new Promise<void>((r) => (this.drained = r));
      this.drained = undefined;
      this.vaults.closeAll();
      await Promise.all(this.threads.map((t) => this.send(t, { kind: 'closeVaults' })));
      return this.send(this.pick(), message);
    });
    this.exclusiveQueue = result.catch(() => undefined);
    void result
      .catch(() => undefined)
      .finally(() => {
        if (--this.exclusivePending === 0 && this.blocked) {
          this.blocked.open();
          this.blocked = undefined;
        }
      });
    return result;
  }

  /** Stops the threads: each closes its vaults first. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.vaults.stop();
    await Promise.all(
      this.threads.map(async (t) => {
        const exited = new Promise<void>((r) => t.worker.once('exit', () => r()));
        const asked = this.send(t, { kind: 'stop' }).catch(() => undefined);
        const timer = setTimeout(() => void t.worker.terminate(), 5000);
        await Promise.race([asked.then(() => exited), exited]);
        clearTimeout(timer);
      }),
    );
  }
}
