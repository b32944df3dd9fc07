/**
 * Reaching the host of an avfs home from another process (the CLI, a test, a second window):
 * find it through `<home>/host.json`, connect to its socket, introduce yourself. No host, or one
 * that crashed (its record is cleared on the way), means the caller works in-process.
 */
import { connect, Socket } from 'node:net';
import { createMessageConnection, ErrorCodes, type MessageConnection, ResponseError, CancellationTokenSource } from 'vscode-jsonrpc/node';
import type { z } from 'zod';
import { AvfsError } from '../protocol/errors';
import { HOST_METHODS, type HostMethodName } from '../protocol/host';
import type { MethodName, MethodParams, MethodResult } from '../protocol/methods';
import type { HomeDir } from '../store/homeDir';
import { type HostRecord, readHost } from './lock';
import { FrameReader, FrameWriter } from './frames';
import { pidAlive } from '../fuse/liveness';
import { fromRpcError } from './rpcErrors';

/** A connection of another process (the CLI, MCP, a test) to the host of an avfs home. The editor's own, with restarts and a state, is extension/client/hostClient.ts's HostClient. */
export interface HostConnection {
  host: HostRecord;
  conn: MessageConnection;
  clientId: string;
  /** Calls an operation or a host method; errors come back as the AvfsError the host raised. */
  call<M extends MethodName>(method: M, params: MethodParams<M>, signal?: AbortSignal): Promise<MethodResult<M>>;
  callHost<M extends HostMethodName>(method: M, params: z.input<(typeof HOST_METHODS)[M]['params']>): Promise<z.output<(typeof HOST_METHODS)[M]['result']>>;
  close(): void;
}

export interface ConnectOptions {
  name: string;
  kind: 'vscode' | 'cli' | 'other';
  approver?: boolean | 'own';
  /** Which runs' exec/output to be sent (default every run's). */
  output?: 'all' | 'own' | 'none';
  /** Before listening: register handlers for what the host may send (approval/request, notifications). */
  setup?: (conn: MessageConnection) => void;
  /** How long to wait for the socket to connect, and then for the host to answer the introduction. */
  timeoutMs?: number;
}

/** How long a host that holds the home but is not listening yet (it is starting) is waited for. */
const READY_WAIT_MS = 15_000;

function connectOnce(path: string, timeoutMs: number): Promise<Socket | NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const s = connect(path);
    const timer = setTimeout(() => {
      s.destroy();
      resolve(undefined);
    }, timeoutMs);
    s.once('connect', () => {
      clearTimeout(timer);
      resolve(s);
    });
    s.once('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve(e);
    });
  });
}

/**
 * Connects to the host's socket. A host claims the home (host.json) before its socket listens: a
 * caller that comes in between finds no socket (ENOENT) or nobody accepting (ECONNREFUSED), and
 * waits while that host's process lives, rather than taking the host for gone.
 */
async function openSocket(host: HostRecord, timeoutMs: number): Promise<Socket | undefined> {
  const deadline = Date.now() + Math.max(timeoutMs, READY_WAIT_MS);
  for (;;) {
    const r = await connectOnce(host.socket, timeoutMs);
    if (r instanceof Socket) return r;
    const starting = r !== undefined && (r.code === 'ENOENT' || r.code === 'ECONNREFUSED') && pidAlive(host.pid);
    if (!starting || Date.now() >= deadline) return undefined;
    await new Promise((res) => setTimeout(res, 50));
  }
}

/** A call the host will never answer: it closed the connection (it died, or stopped) while the call was in flight. */
function unanswered(e: unknown): boolean {
  return e instanceof ResponseError && e.code === ErrorCodes.PendingResponseRejected;
}

async function request<T>(conn: MessageConnection, method: string, params: unknown, signal?: AbortSignal, host?: HostRecord): Promise<T> {
  const cts = new CancellationTokenSource();
  const onAbort = () => cts.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return (await conn.sendRequest(method, params, cts.token)) as T;
  } catch (e) {
    if (host && unanswered(e)) {
      throw new AvfsError('OwnerDied', `the vault host (pid ${host.pid}) closed the connection before it answered ${method}: it died or was stopped`, { host_pid: host.pid, method });
    }
    throw fromRpcError(e);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    cts.dispose();
  }
}

/** The running host of `home`, connected; undefined when there is none (or it does not answer). */
export async function connectHost(home: HomeDir, opts: ConnectOptions): Promise<HostConnection | undefined> {
  const host = readHost(home);
  if (!host) return undefined;
  const socket = await openSocket(host, opts.timeoutMs ?? 2000);
  if (!socket) return undefined;
  const reader = new FrameReader(socket);
  const conn = createMessageConnection(reader, new FrameWriter(socket));
  opts.setup?.(conn);
  // A host that dies mid-call (mid-message too) closes the socket without answering: disposing the
  // connection fails the calls in flight (OwnerDied, below) and the reader holds no timer, so this
  // process ends. Left pending, the calls would let it end quietly, exit 0.
  conn.onClose(() => {
    conn.dispose();
    socket.destroy();
  });
  // What the host sends that this side cannot read loses the connection: nothing more can be trusted.
  reader.onRefused((r) => {
    if (r.fatal) socket.destroy();
  });
  conn.listen();
  const close = () => {
    conn.dispose();
    socket.destroy();
  };
  try {
    // A host that accepts connections but does not answer (stopped, or hung) counts as none.
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the host did not answer')), opts.timeoutMs ?? 2000);
    });
    const answer = request(conn, 'client/hello', { name: opts.name, kind: opts.kind, approver: opts.approver ?? false, pid: process.pid, ...(opts.output ? { output: opts.output } : {}) });
    const hello = HOST_METHODS['client/hello'].result.parse(await Promise.race([answer, silent]).finally(() => clearTimeout(timer)));
    return {
      host,
      conn,
      clientId: hello.client_id,
      call: (method, params, signal) => request(conn, method, params, signal, host),
      callHost: async (method, params) => HOST_METHODS[method].result.parse(await request(conn, method, params, undefined, host)) as never,
      close,
    };
  } catch (e) {
    close();
    // A host that answered, refusing what this client offered (to answer approvals from inside a run), is not "no host".
    if (e instanceof AvfsError && e.kind === 'SelfApproval') throw e;
    return undefined;
  }
}
