// How the client reaches a host: a spawned `avfs host --stdio` child (its stdin and stdout carry
// JSON-RPC, its stderr the host's log), or the Unix socket of a host that already serves the home.
// Either way the client gets a Transport: a connection, a promise of how it ended, and close().
// The spawned host is not this window's: it runs in a session of its own (a window's process group
// being stopped does not reach it), and close() only leaves it. It goes on serving other windows,
// runs and approvals, and exits by itself once idle (`--idle-exit`).
import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import * as rpc from 'vscode-jsonrpc/node';
import { describeExit } from './launch';

/** Lines of the host's stderr kept to explain a crash. */
const STDERR_TAIL_LINES = 40;

/** One connection to a host: over a spawned child's stdio, or over a running host's socket. */
export interface Transport {
  via: 'spawned' | 'socket';
  connection: rpc.MessageConnection;
  /** Settles once, when the host side is gone, with how it ended. */
  closed: Promise<string>;
  /** What the host printed on stderr lately (spawned only). */
  stderrTail(): string;
  pid: number | undefined;
  /** Leaves the host: this client's runs are cancelled; the host itself lives on while others need it. */
  close(): Promise<void>;
  /**
   * Stops the host this client spawned (Restart Host): asked to shut down (it cancels its runs and
   * unmounts what it mounted), SIGTERM after 3 s, SIGKILL 2 s later. A socket connection only leaves.
   */
  stop(): Promise<void>;
}

/** A host that did not come up; `output` is what it printed (a refusal names a running host's socket). */
export class StartError extends Error {
  constructor(
    message: string,
    readonly output = '',
  ) {
    super(message);
  }
}

/**
 * Spawns `<nodePath> <script> host --stdio` in a session of its own. `wire` sets the connection up
 * and starts it; each line the host writes on stderr goes to `onStderr` and is kept (the last ones)
 * for stderrTail(). `idleExitMs`: how long the host stays once nothing needs it.
 */
export function spawnHost(opts: {
  nodePath: string;
  script: string;
  env: NodeJS.ProcessEnv;
  idleExitMs?: number;
  wire: (connection: rpc.MessageConnection) => void;
  onStderr: (line: string) => void;
}): Transport {
  const { nodePath } = opts;
  const args = [opts.script, 'host', '--stdio', ...(opts.idleExitMs !== undefined ? ['--idle-exit', String(opts.idleExitMs)] : [])];
  const child = spawn(nodePath, args, { env: opts.env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  // Writes to a host that just died fail with EPIPE: the exit is handled through `closed`.
  child.stdin.on('error', () => {});
  const tail: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    tail.push(line);
    if (tail.length > STDERR_TAIL_LINES) tail.shift();
    opts.onStderr(line);
  });
  const closed = new Promise<string>((resolve) => {
    child.on('error', (e) => resolve(`could not run ${nodePath}: ${e.message}`));
    child.on('close', (code, signal) => resolve(describeExit(code, signal)));
  });
  const connection = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
  opts.wire(connection);
  return {
    via: 'spawned',
    connection,
    closed,
    pid: child.pid,
    stderrTail: () => tail.join('\n'),
    close: async () => leaveChild(child, connection),
    stop: () => stopChild(child, connection, closed),
  };
}

/** How long a host that holds the home but does not listen yet (it is starting) is waited for. */
const READY_WAIT_MS = 15_000;

function connectOnce(path: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket: Socket = createConnection(path);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.removeListener('error', reject);
      resolve(socket);
    });
  });
}

/**
 * Connects to a running host's Unix socket (same protocol as stdio); `wire` sets up and starts the
 * connection. A host that has claimed the home is not listening yet for a moment (two windows
 * starting together: one host wins, the other is told its socket before it exists): no socket
 * (ENOENT) or nobody accepting (ECONNREFUSED) is waited out, up to READY_WAIT_MS.
 */
export async function connectSocket(path: string, wire: (connection: rpc.MessageConnection) => void): Promise<Transport> {
  const deadline = Date.now() + READY_WAIT_MS;
  let socket: Socket;
  for (;;) {
    try {
      socket = await connectOnce(path);
      break;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if ((code !== 'ENOENT' && code !== 'ECONNREFUSED') || Date.now() >= deadline) {
        throw new StartError(`cannot connect to the running host's socket ${path}: ${(e as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  const closed = new Promise<string>((r) => socket.once('close', () => r('its socket closed')));
  const connection = rpc.createMessageConnection(new rpc.SocketMessageReader(socket), new rpc.SocketMessageWriter(socket));
  socket.on('error', () => {});
  wire(connection);
  const close = async () => {
    connection.dispose();
    socket.end();
    socket.destroy();
    await closed;
  };
  return { via: 'socket', connection, closed, pid: undefined, stderrTail: () => '', close, stop: close };
}

const STOP_GRACE_MS = 3000;
const KILL_GRACE_MS = 2000;

/** Stops a spawned host: host/shutdown, then SIGTERM, then SIGKILL, each given its time. */
async function stopChild(child: ChildProcess, connection: rpc.MessageConnection, closed: Promise<string>): Promise<void> {
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const wait = (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  void connection.sendRequest('host/shutdown', {}).catch(() => undefined);
  if (exited() || (await wait(STOP_GRACE_MS))) return leaveChild(child, connection);
  child.kill('SIGTERM');
  if (await wait(KILL_GRACE_MS)) return leaveChild(child, connection);
  child.kill('SIGKILL');
  await wait(KILL_GRACE_MS);
  leaveChild(child, connection);
}

/**
 * Leaves a spawned host: the connection goes and its stdin ends (the host drops this client and
 * cancels its runs), and its pipes are let go so this process does not wait on them. The host is
 * not stopped: other windows and terminals may be using it; it exits once idle.
 */
function leaveChild(child: ChildProcess, connection: rpc.MessageConnection): void {
  connection.dispose();
  child.stdin?.end();
  child.stdout?.destroy();
  child.stderr?.destroy();
  child.unref();
}
