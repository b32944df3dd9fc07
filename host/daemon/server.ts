/**
 * The vault host: one long-lived process per avfs home that serves the operations over JSON-RPC
 * (vscode-jsonrpc) on a Unix socket in the home (owner-only) and, with `--stdio`, on its own
 * stdin/stdout for the parent that spawned it (the VS Code extension). The parent is one client
 * among others: when it goes, the host keeps serving while anything holds it (another client, a
 * run, a pending approval, a mount it keeps) and exits once it has been idle for the grace period
 * (`idleExitMs`). It fans vault change
 * events out to every client, runs `exec/run` through the same pipeline as the CLI (mounts are
 * served by mount-server processes, never by this one), and brokers approvals between the
 * commands that need them and the clients that can answer.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import {
  type CancellationToken,
  CancellationTokenSource,
  createMessageConnection,
  ErrorCodes,
  type MessageConnection,
  ResponseError,
} from 'vscode-jsonrpc/node';
import type { z } from 'zod';
import { AvfsError, toAvfsError } from '../protocol/errors';
import type { ApprovalRequest, ExecutionEnvelope } from '../protocol/exec';
import { ExecRequest } from '../protocol/exec';
import { APPROVAL_REQUEST, ApprovalReply, HOST_METHODS, type HostMethodName, type NotificationName, NOTIFICATIONS } from '../protocol/host';
import { METHOD_NAMES, METHODS, type MountInfo } from '../protocol/methods';
import { type PolicyEngine, createPolicyEngine } from '../policy/engine';
import { addAlwaysAllowRules } from '../policy/sources';
import { type Execute, executor } from '../proxy/executor';
import { describePeer, type Peer, peerOfPid, peerOfSocket, runOf, stillThere } from '../proxy/peer';
import { RunnerProcess } from '../proxy/runnerClient';
import { MountRegistry } from '../fuse/registry';
import { stopMount } from '../fuse/server';
import type { AvfsHome } from '../store/home';
import { VERSION } from '../version';
import { ApprovalBroker } from './broker';
import { ChangeWatcher } from './events';
import { ExecHistory } from '../protocol/execHistory';
import { errorFrame, FRAME_TIMEOUT_MS, FrameReader, FrameWriter } from './frames';
import { claimHome, socketPath } from './lock';
import { listenOwnerOnly } from '../store/socketPath';
import { rpcError } from './rpcErrors';
import type { OpName } from '../ops/context';
import type { Surface } from '../store/journal';
import { OpsPool } from './pool';

export interface HostOptions {
  home: AvfsHome;
  /** Threads that run operations (default 2). */
  workers?: number;
  /** Log every call (client, method, milliseconds) on the host's own log; off by default. */
  logCalls?: boolean;
  /** Also serve the parent on stdin/stdout, as one client: its end does not stop the host. */
  stdio?: boolean;
  /**
   * Stop after this long with nothing to hold the host: no client, no run, no pending approval,
   * no live mount it keeps. 0 or undefined: never (a host started in a terminal runs until stopped).
   */
  idleExitMs?: number;
  /** The parent's stdin ended (it went away): its stderr may be gone too. */
  onParentGone?: () => void;
  approvalTimeoutMs?: number;
  /** A socket connection that does not say client/hello, or a message not sent whole, within this is closed (default 30 s). */
  slowClientTimeoutMs?: number;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

interface Client {
  id: string;
  name: string;
  kind: 'vscode' | 'cli' | 'other';
  /** true: asked about every request; 'own': only about the runs it started itself. */
  approver: boolean | 'own';
  conn: MessageConnection;
  connectedAt: string;
  /** Which runs' output it is sent (client/hello). */
  wants: 'all' | 'own' | 'none';
  /** The process on the other end, from the kernel (SO_PEERCRED) or, for stdio, the parent. */
  peer: Peer | undefined;
  /** Why that process belongs to an avfs run, as judged when it connected (undefined: it does not). */
  inRun: string | undefined;
  /** Called when it says client/hello. */
  introduced?: () => void;
  /** Where its messages are written: how much of them it has not read yet bounds what it is sent. */
  out: NodeJS.WritableStream & { writableLength?: number };
  /** Output of runs not sent to it (it was not reading): bytes per run, told with the next chunk it takes. */
  dropped: Map<string, number>;
}

/**
 * What a client may have unread of its messages before a run's output is no longer sent to it
 * (dropped and counted: the envelope keeps the byte counts and head and tail for everyone).
 */
const CLIENT_BACKLOG_BYTES = 2 * 1024 * 1024;

/** Connections the socket takes at once (each is cheap; this bounds what idle ones can hold). */
const MAX_CONNECTIONS = 256;

export class VaultHost {
  private readonly clients = new Map<string, Client>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private release: (() => void) | undefined;
  private watcher: ChangeWatcher | undefined;
  readonly broker: ApprovalBroker;
  private engine: Promise<PolicyEngine> | undefined;
  /** Runs in progress: id → (requesting client, cancel). */
  private readonly runs = new Map<string, { client: string; cancel: AbortController }>();
  /** What exec/list answers: runs going on and the last that finished. */
  private readonly history = new ExecHistory();
  /** Mounts this host made and keeps: unmounted when it stops. */
  private readonly ownMounts = new Set<string>();
  readonly socket: string;
  private readonly startedAt = new Date();
  private readonly pool: OpsPool;
  /** Starts the commands of exec/run: a fork of this process would cost several times more. */
  private readonly runner = new RunnerProcess();
  /** exec/run's pipeline, wired once for this process (host/proxy/executor.ts). */
  private readonly execute: Execute;
  private stopping: Promise<void> | undefined;
  private idleTimer: NodeJS.Timeout | undefined;
  private idleSweep: NodeJS.Timeout | undefined;
  private resolveStopped!: () => void;
  readonly stopped = new Promise<void>((r) => (this.resolveStopped = r));

  constructor(private readonly opts: HostOptions) {
    this.socket = socketPath(opts.home);
    this.pool = new OpsPool(opts.home, opts.workers ?? 2, (m) => this.log('warn', m), () => this.policyEngine());
    this.broker = new ApprovalBroker({
      timeoutMs: opts.approvalTimeoutMs ?? 300_000,
      peers: (req) => this.approversFor(req),
      alwaysAllow: (req, by) => addAlwaysAllowRules(opts.home.dir, req, by),
      onSettled: (id, record) => {
        this.notify('approval/settled', { id, record });
        this.checkIdle();
      },
      log: (m) => this.log('warn', m),
    });
    this.execute = executor({
      home: opts.home,
      engine: () => this.policyEngine(),
      inProcessMounts: false,
      surface: 'rpc',
      owner: `the vault host (pid ${process.pid})`,
      store: this.pool.execStore(),
      run: (o) => this.runner.run(o),
    });
  }

  log(level: 'info' | 'warn' | 'error', message: string): void {
    this.opts.log?.(level, message);
    for (const c of this.clients.values()) void c.conn.sendNotification('log', { level, message }).catch(() => undefined);
  }

  async start(): Promise<void> {
    this.release = claimHome(this.opts.home, { pid: process.pid, socket: this.socket, started_at: this.startedAt.toISOString(), version: VERSION });
    try {
      // The operation threads and the command runner start with the host: the first call finds them ready.
      await Promise.all([this.pool.start(), this.runner.start()]);
      this.server = createServer((s) => this.accept(s, s, s, 'socket'));
      this.server.maxConnections = MAX_CONNECTIONS;
      await listenOwnerOnly(this.server, this.socket);
      this.watcher = new ChangeWatcher(this.opts.home, (n) => this.notify('vault/changed', n), (m) => this.log('warn', m));
      this.watcher.start();
      if (this.opts.stdio) {
        // Writes to a parent that went away fail (EPIPE); the parent's end is its client's end.
        process.stdout.on('error', () => undefined);
        process.stdin.once('end', () => this.opts.onParentGone?.());
        this.accept(process.stdin, process.stdout, undefined, 'stdio');
      }
      if (this.opts.idleExitMs) {
        // A kept mount that was unmounted elsewhere sends no event: look again now and then.
        this.idleSweep = setInterval(() => this.checkIdle(), Math.min(5_000, this.opts.idleExitMs));
        this.idleSweep.unref();
      }
      this.log('info', `host ${process.pid} serving ${this.opts.home.dir} on ${this.socket}${this.opts.stdio ? ' and stdio' : ''}${this.opts.idleExitMs ? `; exits after ${this.opts.idleExitMs} ms idle` : ''}`);
      this.checkIdle();
    } catch (e) {
      await this.pool.stop();
      this.runner.stop();
      this.release();
      throw e;
    }
  }

  /** The policy engine, loaded once and kept warm. */
  private policyEngine(): Promise<PolicyEngine> {
    this.engine ??= createPolicyEngine();
    return this.engine;
  }

  private approversFor(req: ApprovalRequest) {
    const requester = this.runs.get(req.id)?.client;
    return [...this.clients.values()]
      .filter((c) => (c.approver === true || (c.approver === 'own' && c.id === requester)) && this.refusal(c) === undefined)
      .map((c) => ({
        id: c.id,
        name: describePeer(c.kind, c.peer),
        ask: async (r: ApprovalRequest, signal: AbortSignal) => {
          const cts = new CancellationTokenSource();
          signal.addEventListener('abort', () => cts.cancel(), { once: true });
          const reply = ApprovalReply.parse(await c.conn.sendRequest(APPROVAL_REQUEST, r, cts.token));
          // Judged again when the answer comes: the process may have gone, or its pid been taken.
          const refused = this.refusal(c);
          if (refused) throw new AvfsError('SelfApproval', `an answer from ${describePeer(c.kind, c.peer)} was refused: ${refused}`, { client: c.id });
          // Who answered is what the host knows of the connection, never a name the client sends.
          return { answer: reply.answer, by: describePeer(c.kind, c.peer) };
        },
      }));
  }

  /**
   * Why this client may not answer approvals or change rules (host/proxy/peer.ts), or undefined
   * when it may: its process is part of a run (when it connected, or now), it has exited (the
   * connection was handed on, or the pid is another process's now), or it cannot be told.
   */
  private refusal(c: Client): string | undefined {
    if (c.inRun) return c.inRun;
    if (!c.peer) return 'the process on this connection cannot be told (no peer credentials)';
    if (!stillThere(c.peer)) return `the process that opened this connection (pid ${c.peer.pid}) has exited`;
    return runOf(c.peer.pid);
  }

  private refuseFromRun(c: Client, what: string): void {
    const why = this.refusal(c);
    if (!why) return;
    this.log('warn', `refused ${what} from ${describePeer(c.kind, c.peer)}: ${why}`);
    throw new AvfsError('SelfApproval', `${what} refused: ${why}. Only a person answers approvals and changes the rules, from outside the runs.`, {
      ...(c.peer ? { pid: c.peer.pid } : {}),
    });
  }

  notify<N extends NotificationName>(name: N, params: z.input<(typeof NOTIFICATIONS)[N]>): void {
    for (const c of this.clients.values()) void c.conn.sendNotification(name, params).catch(() => undefined);
  }

  private accept(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, socket: Socket | undefined, via: string): void {
    const id = randomUUID();
    const timeoutMs = this.opts.slowClientTimeoutMs ?? FRAME_TIMEOUT_MS;
    const reader = new FrameReader(input, { frameTimeoutMs: timeoutMs });
    const conn = createMessageConnection(reader, new FrameWriter(output));
    // Taken at once: the process that connected, and whether it is part of a run (peer.ts).
    const peer = socket ? peerOfSocket(socket) : peerOfPid(process.ppid);
    const inRun = peer ? runOf(peer.pid) : undefined;
    const client: Client = { id, name: `${via} client`, kind: 'other', approver: false, conn, connectedAt: new Date().toISOString(), peer, inRun, out: output, dropped: new Map(), wants: 'all' };
    if (socket) this.sockets.add(socket);
    let closed = false;
    const drop = (why: string) => {
      if (closed) return;
      closed = true;
      clearTimeout(helloTimer);
      this.clients.delete(id);
      this.log('info', `client ${client.name} disconnected (${why})`);
      // Its runs are stopped as a cancelled request would be; other clients' runs go on.
      for (const r of this.runs.values()) if (r.client === id) r.cancel.abort();
      conn.dispose();
      // end(), not destroy(): a last error answer still reaches the client; destroyed soon after
      // if it does not read it.
      socket?.end();
      socket?.setTimeout(1000, () => socket.destroy());
      if (socket) this.sockets.delete(socket);
      if (via === 'stdio') this.log('info', 'the parent that started this host went away: serving the other clients on the socket');
      this.checkIdle();
    };
    /**
     * Answers a message it cannot read with a JSON-RPC error (id null unless the message had a
     * valid one); when the framing is lost, stops reading this client. Written straight to the
     * stream: the connection may be closing already, and its writer would queue the answer behind
     * the close.
     */
    reader.onRefused((r) => {
      if (closed) return;
      output.write(errorFrame({ ...r, message: `avfs host: ${r.message}${r.fatal ? '; closing this connection' : ''}` }), () => undefined);
      if (r.fatal) drop(r.message);
    });
    // A connection that never introduces itself holds a place for nothing: closed after the timeout.
    const helloTimer = socket && timeoutMs > 0 ? setTimeout(() => reader.refuse({ code: ErrorCodes.InvalidRequest, message: `no client/hello within ${timeoutMs} ms`, id: null, fatal: true }), timeoutMs) : undefined;
    helloTimer?.unref();
    client.introduced = () => clearTimeout(helloTimer);
    conn.onError(([e]) => reader.refuse({ code: ErrorCodes.ParseError, message: `unreadable message: ${e.message}`, id: null, fatal: true }));
    conn.onClose(() => drop('closed'));
    socket?.on('error', () => drop('socket error'));
    this.register(client);
    this.clients.set(id, client);
    this.checkIdle();
    conn.listen();
  }

  private register(client: Client): void {
    const { conn } = client;
    const handle = <P>(method: string, schema: z.ZodType<P>, fn: (params: P, token: CancellationToken) => unknown) => {
      conn.onRequest(method, async (raw: unknown, token) => {
        const started = this.opts.logCalls ? performance.now() : 0;
        let outcome = 'ok';
        const parsed = schema.safeParse(raw ?? {});
        try {
          if (!parsed.success) throw rpcError(toAvfsError(parsed.error), ErrorCodes.InvalidParams);
          return await fn(parsed.data, token);
        } catch (e) {
          const re = e instanceof ResponseError ? e : rpcError(toAvfsError(e));
          outcome = `error ${(re.data as { error?: string } | undefined)?.error ?? re.code}`;
          throw re;
        } finally {
          if (this.opts.logCalls) this.opts.log?.('info', `call ${method} from ${client.name}: ${outcome} in ${(performance.now() - started).toFixed(2)} ms`);
        }
      });
    };

    const hostMethod = <M extends HostMethodName>(m: M, fn: (p: z.output<(typeof HOST_METHODS)[M]['params']>) => z.input<(typeof HOST_METHODS)[M]['result']>) =>
      handle(m, HOST_METHODS[m].params as unknown as z.ZodType<z.output<(typeof HOST_METHODS)[M]["params"]>>, (p) => fn(p));

    hostMethod('client/hello', (p) => {
      client.introduced?.();
      client.name = p.name;
      client.kind = p.kind;
      if (p.approver === true) this.refuseFromRun(client, 'offering to answer approvals');
      // "Ask me at my terminal" needs a terminal, and a process outside the runs: else it is not asked.
      const ownRefused = p.approver === 'own' ? (this.refusal(client) ?? (client.peer?.tty ? undefined : 'it has no terminal')) : undefined;
      if (ownRefused) this.log('warn', `client ${p.name} is not asked about its own runs: ${ownRefused}`);
      client.approver = ownRefused ? false : p.approver;
      client.wants = p.output;
      this.log('info', `client ${p.name} connected${p.approver ? ` (approver${p.approver === 'own' ? ' of its own runs' : ''})` : ''}`);
      if (p.approver) this.broker.askPeers();
      return { client_id: client.id, host_pid: process.pid, version: VERSION, home: this.opts.home.dir };
    });
    hostMethod('host/status', () => this.status());
    hostMethod('host/shutdown', () => {
      setImmediate(() => void this.stop('asked by a client'));
      return { stopping: true };
    });
    hostMethod('approval/list', () => ({ pending: this.broker.list() }));
    hostMethod('exec/list', (p) => ({ runs: this.history.list(p.limit) }));
    hostMethod('approval/answer', (p) => {
      this.refuseFromRun(client, `answering approval ${p.id}`);
      // `by` from the client is not believed: the answer is recorded as the connection's.
      return { id: p.id, ...this.broker.answer(p.id, p.answer, describePeer(client.kind, client.peer)) };
    });

    for (const method of METHOD_NAMES) {
      if (method === 'exec/run') continue;
      handle(method, METHODS[method].params as z.ZodType<unknown>, async (p) => {
        if (RULE_CHANGES.has(method)) this.refuseFromRun(client, `${method} (a change of policy rules)`);
        const result = await this.pool.run(method as OpName, p, surfaceOf(client));
        // A mount an editor asked for goes when the host goes; one a terminal made stays, as without a host.
        if (method === 'mount/mount' && client.kind !== 'cli') this.ownMounts.add((result as MountInfo).mountpoint);
        return result;
      });
    }
    handle('exec/run', ExecRequest, (req, token) => this.exec(client, req, token));
  }

  private async exec(client: Client, req: z.output<typeof ExecRequest>, token: CancellationToken): Promise<ExecutionEnvelope> {
    const id = req.id ?? randomUUID();
    // A run's id names its notifications, its approval request and its place in exec/list: one run each.
    if (this.runs.has(id) || this.history.get(id)) throw new AvfsError('InvalidInput', `a run with the id ${id} exists already: give each run its own id (or none)`, { id });
    const cancel = new AbortController();
    const cancelled = token.onCancellationRequested(() => cancel.abort());
    this.runs.set(id, { client: client.id, cancel });
    const started = { id, vault: req.vault ?? null, command: 'shell' in req.command ? req.command.shell : req.command.argv.join(' '), surface: `rpc:${client.name}`, started_at: new Date().toISOString() };
    this.history.started(started);
    this.notify('exec/started', started);
    try {
      const envelope = await this.execute(
        { ...req, id },
        {
          approver: this.broker,
          surface: `rpc:${client.name}`,
          signal: cancel.signal,
          // The command inherits its caller's environment, as it would run directly (docs/exec.md).
          ...(req.caller_env ? { env: req.caller_env } : {}),
          onState: (state) => {
            this.history.state(id, state);
            this.notify('exec/state', { id, state });
          },
          output: (stream, chunk) => this.output(id, stream, chunk),
        },
      );
      if (envelope.result.kept_mounted && !envelope.result.mount_reused && envelope.result.mountpoint) this.ownMounts.add(envelope.result.mountpoint);
      this.history.finished(id, envelope);
      this.notify('exec/finished', { id, envelope });
      return envelope;
    } catch (e) {
      // The pipeline answers every outcome with an envelope; this is a fault of the host. Clients
      // following the run are told it ended, so no window shows it running for ever.
      this.notify('exec/state', { id, state: 'failed' });
      throw e;
    } finally {
      this.history.forget(id);
      // A client that missed the run's last chunks is told now: no later chunk would carry the count.
      for (const c of this.clients.values()) {
        const dropped = c.dropped.get(id);
        if (dropped === undefined) continue;
        c.dropped.delete(id);
        void c.conn.sendNotification('exec/output', { id, stream: 'stdout', text: '', dropped_bytes: dropped }).catch(() => undefined);
      }
      cancelled.dispose();
      this.runs.delete(id);
      this.checkIdle();
    }
  }

  /**
   * A chunk of a run's output to every client that is keeping up; one that is not (its unread
   * messages past CLIENT_BACKLOG_BYTES) misses it, and is told how many bytes it missed with the
   * next chunk it takes (or, past the run's end, with an empty chunk). Nothing is held for a slow client.
   */
  private output(runId: string, stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const text = chunk.toString('utf8');
    this.history.output(runId, stream, text);
    const requester = this.runs.get(runId)?.client;
    for (const c of this.clients.values()) {
      if (c.wants === 'none' || (c.wants === 'own' && c.id !== requester)) continue;
      if ((c.out.writableLength ?? 0) > CLIENT_BACKLOG_BYTES) {
        c.dropped.set(runId, (c.dropped.get(runId) ?? 0) + chunk.length);
        continue;
      }
      const dropped = c.dropped.get(runId);
      if (dropped !== undefined) c.dropped.delete(runId);
      void c.conn.sendNotification('exec/output', { id: runId, stream, text, ...(dropped !== undefined ? { dropped_bytes: dropped } : {}) }).catch(() => undefined);
    }
  }

  /** What keeps this host up; empty: idle. */
  holds(): string[] {
    const out: string[] = [];
    if (this.clients.size) out.push(`${this.clients.size} client(s)`);
    if (this.runs.size) out.push(`${this.runs.size} run(s)`);
    const pending = this.broker.list().length;
    if (pending) out.push(`${pending} pending approval(s)`);
    if (this.ownMounts.size) {
      const reg = new MountRegistry(this.opts.home);
      const live = reg.records().filter((r) => this.ownMounts.has(r.mountpoint) && reg.isLive(r)).length;
      if (live) out.push(`${live} kept mount(s)`);
    }
    return out;
  }

  /** Starts the idle countdown when nothing holds the host, and calls it off when something does. */
  private checkIdle(): void {
    const grace = this.opts.idleExitMs;
    if (!grace || this.stopping) return;
    if (this.holds().length > 0) {
      clearTimeout(this.idleTimer);
      this.idleTimer = undefined;
      return;
    }
    this.idleTimer ??= setTimeout(() => {
      this.idleTimer = undefined;
      if (this.holds().length === 0) void this.stop(`idle for ${grace} ms (no client, run, pending approval or kept mount)`);
    }, grace);
  }

  status() {
    const reg = new MountRegistry(this.opts.home);
    const mounts = reg.records().map((r) => ({ ...r, allow_other: !!r.allow_other, live: reg.isLive(r), owner: this.ownMounts.has(r.mountpoint) ? 'host' : 'other' }));
    return {
      pid: process.pid,
      version: VERSION,
      home: this.opts.home.dir,
      socket: this.socket,
      started_at: this.startedAt.toISOString(),
      uptime_ms: Date.now() - this.startedAt.getTime(),
      clients: [...this.clients.values()].map((c) => ({ id: c.id, name: c.name, kind: c.kind, approver: c.approver !== false, connected_at: c.connectedAt })),
      mounts,
      pending_approvals: this.broker.list().length,
      running_execs: this.runs.size,
    };
  }

  /** Stops: no new clients, pending approvals denied, running commands cancelled, own mounts unmounted. */
  stop(why: string): Promise<void> {
    this.stopping ??= (async () => {
      this.log('info', `host stopping: ${why}`);
      clearTimeout(this.idleTimer);
      clearInterval(this.idleSweep);
      this.server?.close();
      this.broker.cancelAll();
      for (const r of this.runs.values()) r.cancel.abort();
      const deadline = Date.now() + 15_000;
      while (this.runs.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const mp of this.ownMounts) {
        try {
          await stopMount(this.opts.home, mp, 5_000);
        } catch (e) {
          this.log('warn', `could not unmount ${mp}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      this.watcher?.stop();
      await this.pool.stop();
      this.runner.stop();
      for (const c of this.clients.values()) c.conn.dispose();
      for (const s of this.sockets) s.destroy();
      rmSync(this.socket, { force: true });
      this.release?.();
      this.resolveStopped();
    })();
    return this.stopping;
  }
}

/** Operations that change what the policy allows: a run may not make them (only a person does). */
const RULE_CHANGES = new Set<string>(['policy/setVaultRules']);

/** Who a client's changes are recorded as in the audit trail: a terminal is `cli`, an editor `editor`, anything else `rpc`. */
function surfaceOf(client: Client): Surface {
  return client.kind === 'cli' ? 'cli' : client.kind === 'vscode' ? 'editor' : 'rpc';
}
