// How the client reaches a host: a spawned `avfs host --stdio` child (its stdin and stdout carry
// JSON-RPC, its stderr the host's log), or the Unix socket of a host that already serves the home.
// Either way the client gets a Transport: a connection, a promise of how it ended, and close().
import { type ChildProcess, spawn } from 'node:child_process';
import { createConnection, type Socket } from 'node:net';
import { createInterface } from 'node:readline';
import * as rpc from 'vscode-jsonrpc/node';
import { describeExit } from './launch';

/**
 * Deliberate stop: stdin closed (the host's signal to shut down: it cancels its runs and unmounts
 * what it mounted), then SIGTERM, then SIGKILL.
 */
const STOP_GRACE_MS = 3000;
const KILL_GRACE_MS = 2000;
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
  close(): Promise<void>;
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
 * Spawns `<nodePath> <script> host --stdio`. `wire` sets the connection up and starts it; each line
 * the host writes on stderr goes to `onStderr` and is kept (the last ones) for stderrTail().
 */
export function spawnHost(opts: {
  nodePath: string;
  script: string;
  env: NodeJS.ProcessEnv;
  wire: (connection: rpc.MessageConnection) => void;
  onStderr: (line: string) => void;
}): Transport {
  const { nodePath } = opts;
  const child = spawn(nodePath, [opts.script, 'host', '--stdio'], { env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
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
    close: () => stopChild(child, connection, closed),
  };
  }

/** Connects to a running host's Unix socket (same protocol as stdio); `wire` sets up and starts the connection. */
export function connectSocket(path: string, wire: (connection: rpc.MessageConnection) => void): Promise<Transport> {
  return new Promise((resolve, reject) => {
    const socket: Socket = createConnection(path);
    socket.once('error', (e) => reject(new StartError(`cannot connect to the running host's socket ${path}: ${e.message}`)));
    socket.once('connect', () => {
      const closed = new Promise<string>((r) => socket.once('close', () => r('its socket closed')));
      const connection = rpc.createMessageConnection(new rpc.SocketMessageReader(socket), new rpc.SocketMessageWriter(socket));
      socket.on('error', () => {});
      wire(connection);
      resolve({
        via: 'socket',
        connection,
        closed,
        pid: undefined,
        stderrTail: () => '',
        close: async () => {
          connection.dispose();
          socket.end();
          socket.destroy();
          await closed;
        },
      });
    });
  });
}

/** Stops a host child: end of stdin (it shuts down, unmounting what it mounted), then SIGTERM, then SIGKILL. */
async function stopChild(child: ChildProcess, connection: rpc.MessageConnection, closed: Promise<string>): Promise<void> {
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const wait = (ms: number) => Promise.race([closed.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
  connection.dispose();
  child.stdin?.end();
  if (exited() || (await wait(STOP_GRACE_MS))) return;
  child.kill('SIGTERM');
  if (await wait(KILL_GRACE_MS)) return;
  child.kill('SIGKILL');
  await wait(KILL_GRACE_MS);
}
