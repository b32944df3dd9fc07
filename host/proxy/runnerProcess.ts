/**
 * A small process that starts commands for the vault host (see runnerClient.ts). Starting a
 * process forks the one that asks, and a fork costs in proportion to that process's memory: the
 * host, with its operation threads and warm policy engine, pays several times what this process
 * (the runner module and Node, nothing else) pays, on every command. Messages come and go over
 * the IPC channel; when the host goes away, the commands still running are stopped.
 */
import { becomeRunner, reapAdopted } from './peer';
import { keepSparePipes } from './pipes';
import { dropReadySandbox, keepSandboxReady, runCommand } from './runner';
import { KEEP_SANDBOX_READY, OUTPUT_WINDOW_BYTES, type RunnerReply, type RunnerRequest } from './runnerClient';

/** A run: its cancellation, and the output sent that the host has not acknowledged yet. */
interface Running {
  cancel: AbortController;
  unacked: number;
  /** Resolved when the host has taken enough for the pipes to be read again. */
  room?: { promise: Promise<void>; resolve: () => void };
}
const running = new Map<number, Running>();
/** The commands' leaders this process spawned (Node waits for those); any other child is adopted. */
const leaders = new Set<number>();
const send = (m: RunnerReply) => process.send?.(m);

process.on('message', (m: RunnerRequest) => {
  if (m.type === 'cancel') {
    running.get(m.id)?.cancel.abort();
    return;
  }
  if (m.type === 'ack') {
    const r = running.get(m.id);
    if (!r) return;
    r.unacked -= m.bytes;
    if (r.room && r.unacked <= OUTPUT_WINDOW_BYTES / 2) {
      r.room.resolve();
      r.room = undefined;
    }
    return;
  }
  const cancel = new AbortController();
  const run: Running = { cancel, unacked: 0 };
  running.set(m.id, run);
  let leader: number | undefined;
  runCommand({
    ...m.opts,
    signal: cancel.signal,
    onOutput: (stream, chunk) => {
      send({ type: 'output', id: m.id, stream, chunk });
      run.unacked += chunk.length;
      if (run.unacked <= OUTPUT_WINDOW_BYTES) return undefined;
      if (!run.room) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        run.room = { promise, resolve };
      }
      return run.room.promise;
    },
    onStart: (pid) => {
      leader = pid;
      leaders.add(pid);
      send({ type: 'started', id: m.id, pid });
    },
  })
    .then(
      (result) => send({ type: 'done', id: m.id, result }),
      (e: unknown) => send({ type: 'failed', id: m.id, message: e instanceof Error ? e.message : String(e) }),
    )
    .finally(() => {
      running.delete(m.id);
      // Node has waited for it by now (runCommand settles after its exit).
      if (leader !== undefined) leaders.delete(leader);
    });
});

// A runner serving one mount keeps the next run's sandbox ready (runner.ts).
keepSandboxReady(process.argv.includes(KEEP_SANDBOX_READY));

process.on('disconnect', () => {
  for (const r of running.values()) {
    r.cancel.abort();
    r.room?.resolve();
  }
  // The ready sandbox holds a bind of its mount: gone before this process is (its mount is unmounted next).
  keepSandboxReady(false);
  const dropped = dropReadySandbox();
  const leave = setInterval(() => {
    if (running.size === 0) void dropped.then(() => process.exit(0));
  }, 50);
  leave.unref();
});

keepSparePipes();
// A run's processes keep this one as an ancestor, however they fork (host/proxy/peer.ts); what it
// adopts that way is collected when it ends.
if (becomeRunner()) {
  let sweep: NodeJS.Timeout | undefined;
  process.on('SIGCHLD', () => {
    sweep ??= setTimeout(() => {
      sweep = undefined;
      reapAdopted((pid) => leaders.has(pid));
    }, 100);
  });
}
send({ type: 'ready' });
