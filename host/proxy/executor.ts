/**
 * Exec wired once for each kind of process that runs commands: the vault host, a mount server, a
 * one-shot CLI call (and `avfs mcp` without a host). What belongs to the process (its home, policy
 * engine, command runner, store, whether it may serve mounts itself, how the audit trail names it)
 * is given once, to `executor()`; what belongs to one run is its `RunSurface`, the same three things
 * for every way in: who approves, where the output goes as it comes, and what cancels the run.
 */
import type { ExecRequestInput, ExecState, ExecutionEnvelope } from '../protocol/exec';
import type { Approver } from './approvals';
import type { ExecDeps } from './pipeline';

/** One run as its caller sees it. */
export interface RunSurface {
  /** Asked when the policy wants a person (`noApprover(why)` when nobody can be). */
  approver: Approver;
  /** The command's output as it comes (the envelope keeps its head and tail anyway). */
  output?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /** Cancels the run: Ctrl-C, `$/cancelRequest`, the caller's socket closing. */
  signal?: AbortSignal;
  /** Each state the run enters. */
  onState?: (state: ExecState) => void;
  /** The environment the command inherits (default: this process's; a server is given its caller's). */
  env?: NodeJS.ProcessEnv;
  /** Who asked, for the audit trail and approvers, when not the process's own `surface`. */
  surface?: string;
}

/** What the process gives once: everything of the pipeline's dependencies but the run's own. */
export type ExecProcess = Omit<ExecDeps, 'approver' | 'signal' | 'onOutput' | 'onState' | 'baseEnv'>;

export type Execute = (request: ExecRequestInput, run: RunSurface) => Promise<ExecutionEnvelope>;

export function executor(proc: ExecProcess): Execute {
  return async (request, run) => {
    const { output, onState } = run;
    // Loaded when a run starts: a CLI call that hands its run to a host never loads the pipeline.
    const { runExec } = await import('./pipeline');
    return runExec(request, {
      ...proc,
      approver: run.approver,
      ...(run.surface ? { surface: run.surface } : {}),
      ...(run.signal ? { signal: run.signal } : {}),
      ...(run.env ? { baseEnv: run.env } : {}),
      ...(onState ? { onState: (_id: string, state: ExecState) => onState(state) } : {}),
      ...(output ? { onOutput: (_id: string, stream: 'stdout' | 'stderr', chunk: Buffer) => output(stream, chunk) } : {}),
    });
  };
}

/**
 * Cancellation from the signals a person sends a terminal command (Ctrl-C, a closed terminal, a
 * kill): the run is cancelled as a time-out would be, instead of the process dying mid-run.
 */
export function cancelOnSignals(signals: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP']): { signal: AbortSignal; dispose(): void } {
  const cancel = new AbortController();
  const onSignal = () => cancel.abort();
  for (const s of signals) process.once(s, onSignal);
  return {
    signal: cancel.signal,
    dispose: () => {
      for (const s of signals) process.removeListener(s, onSignal);
    },
  };
}
