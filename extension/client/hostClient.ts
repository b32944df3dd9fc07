// The extension's connection to the vault host: it spawns `avfs host --stdio` on the Node the
// extension ships, or the one `avfs.nodePath` names (runtime.ts: hostNode) (or, when a host already
// serves this avfs home, connects to that host's socket; the host it spawns is not tied to this
// window: it outlives it while others need it),
// introduces itself, sends requests with a timeout each, passes the host's notifications on, and
// restarts the host after a crash (1, 2, 4 s apart, then it gives up until asked). No `vscode`
// import: the editor's side (messages, status bar, log channel) listens to its events.
import { dirname } from 'node:path';
import * as rpc from 'vscode-jsonrpc/node';
import type { z } from 'zod';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { APPROVAL_REQUEST, type ApprovalReply, ApprovalRequest as ApprovalRequestSchema, HOST_METHODS, type HostMethodName, NOTIFICATIONS } from '../../host/protocol/host';
import { METHODS, type MethodName, type MethodParams, type MethodResult } from '../../host/protocol/methods';
import { HostCallError, typedErrorOf } from '../errors';
import { afterCrash, attemptsUsed, describeState, type HostState, transition } from './hostState';
import { hostEnv, runningHostSocket } from './launch';
import { connectSocket, spawnHost, StartError, type Transport } from './transport';
import { checkRuntime, hostNode } from './runtime';

export interface Logger {
  trace(message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface HostSettings {
  /** avfs.nodePath: the Node binary that runs the host (its ABI must match the host's better-sqlite3); empty: the extension's own. */
  nodePath: string;
  /** The avfs home (AVFS_HOME); undefined: the extension host's $AVFS_HOME, else ~/.avfs. */
  home: string | undefined;
  requestTimeoutMs: number;
  /**
   * How long a host this window starts stays once nothing needs it (no window, run, pending
   * approval or kept mount): `avfs host --idle-exit`. Undefined: the host's default (60 s).
   */
  idleExitMs?: number;
}

export interface HostClientOptions {
  /** Read at each start, so a changed setting applies at the next (re)start. */
  settings: () => HostSettings;
  /** dist/avfs.js: the CLI bundle, whose `host` command is the vault host. */
  hostScript: string;
  /** How the host names this client to people ("VS Code (pid 4242)"). */
  clientName: string;
  log: Logger;
  /** Why the host may not start now (Restricted Mode), or undefined when it may. */
  mayStart?: () => string | undefined;
  /**
   * Makes this client an approver: the host puts every `approval/request` to it, and this answers
   * (the token is cancelled when the request is settled elsewhere, or times out).
   */
  onApprovalRequest?: (req: ApprovalRequest, token: rpc.CancellationToken) => Promise<ApprovalReply>;
}

export type VaultChanged = z.infer<(typeof NOTIFICATIONS)['vault/changed']>;
export type HostMethodParams<M extends HostMethodName> = z.input<(typeof HOST_METHODS)[M]['params']>;
export type HostMethodResult<M extends HostMethodName> = z.output<(typeof HOST_METHODS)[M]['result']>;

export interface RequestOptions {
  /** Overrides `avfs.requestTimeoutSeconds` for this call (long operations: diff, gc, mount). */
  timeoutMs?: number;
  token?: rpc.CancellationToken;
}

/** How long a started host may take to answer `client/hello`. */
const HELLO_TIMEOUT_MS = 20_000;
export class HostClient {
  private current: HostState = { name: 'idle' };
  private transport: Transport | undefined;
  /** Bumped by every start, restart and dispose: work of an older generation stops where it is. */
  private generation = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  /** Once the host sends `log` notifications, its stderr (the same lines) goes to trace level. */
  private hostLogsByNotification = false;

  private readonly stateEmitter = new rpc.Emitter<HostState>();
  private readonly changeEmitter = new rpc.Emitter<VaultChanged>();
  private readonly notificationEmitter = new rpc.Emitter<{ method: string; params: unknown }>();
  /** Every state change (the status bar, the "host exited" message). */
  readonly onDidChangeState = this.stateEmitter.event;
  /** `vault/changed` from the host, validated: whichever surface changed a vault. */
  readonly onVaultChanged = this.changeEmitter.event;
  /** Every other notification (exec progress, approvals settled), for the parts that want them. */
  readonly onNotification = this.notificationEmitter.event;

  constructor(private readonly options: HostClientOptions) {}

  get state(): HostState {
    return this.current;
  }

  /** Starts the host if it is idle (and may start). */
  ensureStarted(): void {
    if (this.current.name === 'idle' && !this.options.mayStart?.()) void this.connect(0);
  }

  /**
   * Stops the host this client started (Restart Host; other clients reconnect to the next one), or
   * leaves the socket of one it did not, and starts afresh.
   */
  async restart(): Promise<void> {
    if (this.current.name === 'stopped' || this.options.mayStart?.()) return;
    this.generation++;
    clearTimeout(this.restartTimer);
    const old = this.transport;
    this.transport = undefined;
    this.setState({ name: 'starting', attempt: 0 });
    await old?.stop();
    await this.connect(0);
  }

  async dispose(): Promise<void> {
    this.generation++;
    clearTimeout(this.restartTimer);
    if (this.current.name !== 'stopped') this.setState({ name: 'stopped' });
    const old = this.transport;
    this.transport = undefined;
    await old?.close();
    this.stateEmitter.dispose();
    this.changeEmitter.dispose();
    this.notificationEmitter.dispose();
  }

  /** An operation of host/protocol/methods.ts; its result is validated against the contract. */
  request<M extends MethodName>(method: M, params: MethodParams<M>, opts: RequestOptions = {}): Promise<MethodResult<M>> {
    return this.call(method, params, METHODS[method].result, opts) as Promise<MethodResult<M>>;
  }

  /** A method of the host itself (host/protocol/host.ts): status, approvals. */
  hostRequest<M extends HostMethodName>(method: M, params: HostMethodParams<M>, opts: RequestOptions = {}): Promise<HostMethodResult<M>> {
    return this.call(method, params, HOST_METHODS[method].result, opts) as Promise<HostMethodResult<M>>;
  }

  // ---- requests

  private async call(method: string, params: unknown, result: z.ZodType, opts: RequestOptions): Promise<unknown> {
    const timeoutMs = opts.timeoutMs ?? this.options.settings().requestTimeoutMs;
    const started = Date.now();
    const transport = await this.whenReady(method, timeoutMs);
    const cancel = new rpc.CancellationTokenSource();
    const linked = opts.token?.onCancellationRequested(() => cancel.cancel());
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        cancel.cancel();
        reject(new HostCallError(method, { error: 'Timeout', message: `The vault host did not answer ${method} within ${timeoutMs / 1000} s.` }));
      }, Math.max(0, timeoutMs - (Date.now() - started)));
    });
    try {
      const answer: unknown = await Promise.race([transport.connection.sendRequest(method, params, cancel.token), timedOut]);
      const parsed = result.safeParse(answer);
      if (!parsed.success) {
        throw new HostCallError(method, { error: 'Internal', message: `The vault host answered ${method} with an unexpected result: ${parsed.error.message}` });
      }
      return parsed.data;
    } catch (e) {
      throw this.callError(method, e);
    } finally {
      clearTimeout(timer);
      linked?.dispose();
      cancel.dispose();
    }
  }

  private callError(method: string, e: unknown): HostCallError {
    if (e instanceof HostCallError) return e;
    if (e instanceof rpc.ResponseError) {
      const typed = typedErrorOf(e.data);
      if (typed) return new HostCallError(method, typed);
      return new HostCallError(method, { error: 'Internal', message: `The vault host refused ${method}: ${e.message} (JSON-RPC error ${e.code})` });
    }
    // The connection went away under the request (the host exited).
    const why = e instanceof Error ? e.message : String(e);
    return new HostCallError(method, { error: 'HostUnavailable', message: `The vault host went away during ${method} (${why}).` });
  }

  /** The live transport, starting the host if it is idle and waiting while it (re)starts. */
  private whenReady(method: string, timeoutMs: number): Promise<Transport> {
    const refused = this.options.mayStart?.();
    if (refused) return Promise.reject(new HostCallError(method, { error: 'HostUnavailable', message: refused }));
    this.ensureStarted();
    return new Promise((resolve, reject) => {
      const settle = (state: HostState): boolean => {
        if (state.name === 'ready' && this.transport) {
          resolve(this.transport);
          return true;
        }
        if (state.name === 'failed' || state.name === 'stopped') {
          reject(new HostCallError(method, { error: 'HostUnavailable', message: describeState(state) }));
          return true;
        }
        return false;
      };
      if (settle(this.current)) return;
      const timer = setTimeout(() => {
        listener.dispose();
        reject(new HostCallError(method, { error: 'HostUnavailable', message: `The vault host did not become ready within ${timeoutMs / 1000} s (${describeState(this.current)})` }));
      }, timeoutMs);
      const listener = this.onDidChangeState((state) => {
        if (settle(state)) {
          clearTimeout(timer);
          listener.dispose();
        }
      });
    });
  }

  // ---- starting, crashing, restarting

  private setState(next: HostState): void {
    this.current = transition(this.current, next);
    this.options.log.debug(`host client: ${next.name}: ${describeState(next)}`);
    this.stateEmitter.fire(next);
  }

  private async connect(attempt: number): Promise<void> {
    const generation = ++this.generation;
    const stale = () => generation !== this.generation;
    if (this.current.name !== 'starting' || this.current.attempt !== attempt) this.setState({ name: 'starting', attempt });
    const settings = this.options.settings();
    const env = hostEnv(process.env, settings.home);
    const node = hostNode(settings.nodePath, dirname(dirname(this.options.hostScript)));
    const runtime = await checkRuntime(node.nodePath, dirname(this.options.hostScript), env, undefined, node.label);
    if (stale()) return;
    if (!runtime.ok) {
      this.options.log.error(`${runtime.reason} ${runtime.fix}`);
      this.setState({ name: 'failed', reason: runtime.reason, fix: runtime.fix });
      return;
    }
    this.options.log.info(`starting the vault host: ${node.nodePath} (Node ${runtime.node}, ${{ bundled: "the extension's own", setting: 'avfs.nodePath', path: '`node` from PATH' }[node.source]}) ${this.options.hostScript} host --stdio`);

    let transport: Transport | undefined;
    try {
      transport = spawnHost({
        nodePath: node.nodePath,
        script: this.options.hostScript,
        env,
        ...(settings.idleExitMs !== undefined ? { idleExitMs: settings.idleExitMs } : {}),
        wire: (connection) => this.wire(connection),
        // The host writes its log lines to stderr and sends them as `log` notifications: once those
        // arrive, its stderr goes to trace level (it still explains a crash, see stderrTail).
        onStderr: (line) => (this.hostLogsByNotification ? this.options.log.trace(`[host stderr] ${line}`) : this.options.log.info(`[host] ${line}`)),
      });
      let hello;
      try {
        hello = await this.hello(transport);
      } catch (e) {
        const socket = e instanceof StartError ? runningHostSocket(e.output) : undefined;
        if (!socket || stale()) throw e;
        this.options.log.info(`a vault host already serves this home: connecting to its socket ${socket}`);
        transport = await connectSocket(socket, (connection) => this.wire(connection));
        hello = await this.hello(transport);
      }
      if (stale()) {
        await transport.close();
        return;
      }
      this.transport = transport;
      const pid = transport.pid ?? hello.host_pid;
      this.setState({ name: 'ready', via: transport.via, pid, version: hello.version, home: hello.home, since: Date.now(), attempt });
      this.options.log.info(`vault host ready: ${describeState(this.current)}`);
      const live = transport;
      void live.closed.then((how) => this.onClosed(generation, live, how));
    } catch (e) {
      await transport?.close();
      if (stale()) return;
      const reason = e instanceof Error ? e.message : String(e);
      const output = e instanceof StartError && e.output ? `\n${e.output}` : '';
      this.options.log.error(`the vault host did not start: ${reason}${output}`);
      this.scheduleRestart(afterCrash(attempt, `it did not start: ${reason}`));
    }
  }

  private onClosed(generation: number, transport: Transport, how: string): void {
    if (generation !== this.generation || this.current.name !== 'ready') return;
    this.transport = undefined;
    const tail = transport.stderrTail();
    this.options.log.error(`the vault host exited (${how})${tail ? `; its last output:\n${tail}` : ''}`);
    this.scheduleRestart(afterCrash(attemptsUsed(this.current, Date.now()), how));
  }

  private scheduleRestart(next: HostState): void {
    this.setState(next);
    if (next.name !== 'restarting') return;
    const generation = this.generation;
    this.restartTimer = setTimeout(() => {
      if (generation === this.generation) void this.connect(next.attempt);
    }, next.delayMs);
  }

  private async hello(transport: Transport) {
    const params: HostMethodParams<'client/hello'> = { name: this.options.clientName, kind: 'vscode', approver: this.options.onApprovalRequest !== undefined, pid: process.pid };
    let timer: NodeJS.Timeout | undefined;
    try {
      const answer = await Promise.race([
        transport.connection.sendRequest('client/hello', params),
        transport.closed.then((how) => {
          throw new StartError(`the host exited before it answered (${how})`, transport.stderrTail());
        }),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new StartError(`the host did not answer client/hello within ${HELLO_TIMEOUT_MS / 1000} s`, transport.stderrTail())), HELLO_TIMEOUT_MS);
        }),
      ]);
      const parsed = HOST_METHODS['client/hello'].result.safeParse(answer);
      if (!parsed.success) throw new StartError(`the host answered client/hello with an unexpected result: ${parsed.error.message}`);
      return parsed.data;
    } catch (e) {
      if (e instanceof StartError) throw e;
      // The connection failed (the host is gone): wait for its exit, which says how, and its output.
      const how = await Promise.race([transport.closed, new Promise<string>((r) => setTimeout(() => r(String(e)), 2000))]);
      throw new StartError(`the host exited before it answered (${how})`, transport.stderrTail());
    } finally {
      clearTimeout(timer);
    }
  }

  /** Notifications every connection delivers. */
  private wire(connection: rpc.MessageConnection): void {
    connection.onNotification('log', (params: unknown) => {
      const parsed = NOTIFICATIONS.log.safeParse(params);
      if (!parsed.success) return;
      this.hostLogsByNotification = true;
      this.options.log[parsed.data.level](`[host] ${parsed.data.message}`);
    });
    connection.onNotification('vault/changed', (params: unknown) => {
      const parsed = NOTIFICATIONS['vault/changed'].safeParse(params);
      if (parsed.success) this.changeEmitter.fire(parsed.data);
      else this.options.log.warn(`host client: a vault/changed notification that does not match the protocol: ${parsed.error.message}`);
    });
    connection.onNotification((method: string, params: unknown) => this.notificationEmitter.fire({ method, params }));
    const answer = this.options.onApprovalRequest;
    if (answer) {
      connection.onRequest(APPROVAL_REQUEST, (params: unknown, token: rpc.CancellationToken) => {
        const parsed = ApprovalRequestSchema.safeParse(params);
        if (!parsed.success) {
          this.options.log.warn(`host client: an approval/request that does not match the protocol: ${parsed.error.message}`);
          return new rpc.ResponseError(rpc.ErrorCodes.InvalidParams, `approval/request: ${parsed.error.message}`);
        }
        return answer(parsed.data, token);
      });
    }
    connection.onError(([error]) => this.options.log.debug(`host connection: ${error.message}`));
    connection.listen();
  }
}
