/**
 * The exec endpoint of a mount server (protocol: host/protocol/mountExec.ts). A CLI call that
 * finds a live mount of its vault hands the run to the process serving it: that process has the
 * policy engine warm and the command runner started, where the CLI would load both for one
 * decision (most of a call's time). The run is the same pipeline with the same checks; the
 * command gets the caller's environment; an approval is asked of the caller's terminal.
 *
 * This process serves the mount the run uses, so nothing here touches the mount synchronously
 * (PLATFORM.md): the pipeline reaches the vault through its own connection, the command starts in
 * the runner process (host/proxy/runnerClient.ts), and the write barrier is an asynchronous fsync.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import type { ApprovalRequest, ExecRequestInput, ExecutionEnvelope } from '../protocol/exec';
import { MountExecFollowUp, type MountExecReply, MountExecRun } from '../protocol/mountExec';
import type { PolicyEngine } from '../policy/engine';
import type { AvfsHome } from '../store/home';
import type { Vault } from '../store/vault';
import { listenOwnerOnly } from '../store/socketPath';
import { VERSION } from '../version';
import { type Approver, type ApprovalOutcome, DEFAULT_APPROVAL_TIMEOUT_MS, noApprover } from './approvals';
import { describePeer, type Peer, peerOfSocket, runOf, stillThere } from './peer';
import { executor } from './executor';
import { RunnerProcess } from './runnerClient';

const WARM_AFTER_MS = 300;

export interface MountExecOptions {
  home: AvfsHome;
  /** The vault this process serves. */
  vault: string;
  socket: string;
  /** How the CLI shows a finished run: its exit code and the text for a person. */
  present: (envelope: ExecutionEnvelope) => { exitCode: number; human: string };
}

export interface MountExecEndpoint {
  close(): Promise<void>;
}

/** Reads JSON lines from a socket. */
function lines(socket: Socket, onLine: (line: string) => void): void {
  let buf = '';
  socket.setEncoding('utf8');
  socket.on('data', (d: string) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      onLine(line);
    }
  });
}

export async function serveMountExec(opts: MountExecOptions): Promise<MountExecEndpoint> {
  let engine: Promise<PolicyEngine> | undefined;
  const policyEngine = () => (engine ??= import('../policy/engine').then((m) => m.createPolicyEngine()));
  // Its runs all use this mount: the runner keeps the next one's sandbox ready, let go on close.
  const runner = new RunnerProcess({ keepSandboxReady: true });
  // The connection to the mount's own vault stays open between runs (this process keeps that vault
  // open anyway); a run in another vault (the caller found no mount of it) opens its own.
  let own: Vault | undefined;
  const vaults = {
    open: (name: string) => (name === opts.vault ? (own ??= opts.home.open(name, { surface: 'exec' })) : opts.home.open(name, { surface: 'exec' })),
    release: (v: Vault) => {
      if (v !== own) v.close();
    },
  };
  const runs = new Set<AbortController>();
  const execRun = executor({
    home: opts.home,
    engine: policyEngine,
    // This process serves a mount already; any other mount a run needs is served by its own process.
    inProcessMounts: false,
    surface: 'cli',
    owner: `the server of a mount of ${opts.vault} (pid ${process.pid})`,
    vaults,
    run: (o) => runner.run(o),
  });

  const serveOne = (socket: Socket) => {
    const cancel = new AbortController();
    // Who connected, from the kernel: a caller that claims to be interactive must be a process
    // outside every run, with a terminal; else its run is asked of no one (peer.ts).
    const peer: Peer | undefined = peerOfSocket(socket);
    const cannotAsk = (): string | undefined => {
      if (!peer) return 'the caller cannot be told (no peer credentials)';
      if (!stillThere(peer)) return `the caller (pid ${peer.pid}) has exited`;
      return runOf(peer.pid) ?? (peer.tty ? undefined : `the caller (pid ${peer.pid}) has no terminal to ask at`);
    };
    const send = (m: MountExecReply) => {
      if (!socket.destroyed) socket.write(JSON.stringify(m) + '\n');
    };
    let started = false;
    let pendingAnswer: ((o: ApprovalOutcome) => void) | undefined;
    socket.on('close', () => cancel.abort());
    socket.on('error', () => cancel.abort());
    lines(socket, (line) => {
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch {
        return socket.destroy();
      }
      if (!started) {
        const run = MountExecRun.safeParse(msg);
        if (!run.success || run.data.version !== VERSION) return socket.destroy();
        started = true;
        runs.add(cancel);
        void execute(run.data).finally(() => runs.delete(cancel));
        return;
      }
      const next = MountExecFollowUp.safeParse(msg);
      if (!next.success) return;
      if (next.data.type === 'cancel') cancel.abort();
      else {
        // Judged again as the answer comes: the process that asked may be gone, its connection handed on.
        const refused = next.data.outcome.kind === 'answered' ? cannotAsk() : undefined;
        const o = next.data.outcome;
        // Recorded as the process the kernel names, not as the caller calls itself.
        pendingAnswer?.(refused ? { kind: 'no_approver', why: `an answer was refused: ${refused}` } : o.kind === 'answered' ? { ...o, answer: { ...o.answer, by: describePeer('terminal', peer) } } : o);
        pendingAnswer = undefined;
      }
    });

    /** Asks the caller, which asks the person at its terminal. */
    const callerApprover: Approver = {
      timeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS,
      ask: (request: ApprovalRequest, signal: AbortSignal) =>
        new Promise<ApprovalOutcome>((resolve) => {
          if (signal.aborted) return resolve({ kind: 'cancelled' });
          signal.addEventListener('abort', () => resolve({ kind: 'cancelled' }), { once: true });
          pendingAnswer = resolve;
          send({ type: 'approval', request });
        }),
    };

    const execute = async (run: MountExecRun) => {
      const refused = run.approver.interactive ? cannotAsk() : undefined;
      const envelope = await execRun(run.request as ExecRequestInput, {
        approver: run.approver.interactive && !refused ? callerApprover : noApprover(refused ? `the caller claims a terminal to ask at, but ${refused}` : run.approver.why),
        signal: cancel.signal,
        env: run.env,
        ...(run.stream ? { output: (stream: 'stdout' | 'stderr', chunk: Buffer) => send({ type: 'output', stream, data: chunk.toString('base64') }) } : {}),
      });
      const { exitCode, human } = opts.present(envelope);
      send({ type: 'done', envelope, exit_code: exitCode, human });
      socket.end();
    };
  };

  const server: Server = createServer(serveOne);
  // Owner-only: whoever connects runs commands in this vault with the environment they send.
  await listenOwnerOnly(server, opts.socket);
  server.unref();
  // Warmed soon, so the first run handed here costs what the next ones do; not at once: the call
  // that started this server is about to run its command in the mount, and loading the engine
  // holds this thread (which answers that command's FUSE requests) for tens of milliseconds.
  const warm = setTimeout(() => {
    void policyEngine().catch(() => (engine = undefined));
    void runner.start().catch(() => undefined);
  }, WARM_AFTER_MS);
  warm.unref();

  return {
    close: async () => {
      clearTimeout(warm);
      for (const c of runs) c.abort();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runner.stop();
      own?.close();
      own = undefined;
      rmSync(opts.socket, { force: true });
    },
  };
}
