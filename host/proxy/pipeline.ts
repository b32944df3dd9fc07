/**
 * The exec pipeline: one policy-gated run of one command in a vault mount, as an explicit state
 * machine that always ends in an ExecutionEnvelope (never an exception):
 *
 *   validating ─▶ policy ─▶ (awaiting_approval) ─▶ (checkpointing) ─▶ mounting ─▶ executing
 *        │           │              │                                               │
 *        │           └─▶ denied ◀───┘                                            settling ─▶ summarizing
 *        │                                                                                      │
 *        └──────── any state ─▶ failed                     completed | timed_out | cancelled ◀──┘
 *
 * Policy runs first, before anything costly (no mount, no checkpoint, no vault write). The
 * change summary is read from the vault itself after the mount's write barrier, as a diff from
 * the tree before the run (the checkpoint, or an internal baseline) to the tree after it, so it
 * holds every change made through the mount. The CLI and the host run this same code.
 *
 * From the moment a run is allowed it is guarded (guard.ts): should the process running this
 * pipeline die, the run's guard stops the command, releases the one-shot mount and records the
 * run's end, as a time-out would have. The guard is told what the run holds as it comes, and that
 * the run has ended once nothing of it is left to release.
 */
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { posix } from 'node:path';
import { AvfsError, err, type ErrorJson, toAvfsError } from '../protocol/errors';
import type { ChangeSummary, JournalOp } from '../protocol/changes';
import {
  type ApprovalRecord,
  type ApprovalRequest,
  ENVELOPE_SCHEMA_VERSION,
  ExecRequest,
  type ExecRequestInput,
  type ExecState,
  type ExecutionEnvelope,
  type MaterializedRecord,
} from '../protocol/exec';
import type { Decision, PolicyCommand } from '../protocol/policy';
import { shellWord } from '../protocol/shellWord';
import type { SandboxMode, SandboxRecord } from '../protocol/sandbox';
import { decideOnce, type PolicyEngine, refuseCheckpointOptOut } from '../policy/engine';
import { effectiveRuleSets } from '../policy/sources';
import type { AvfsHome } from '../store/home';
import type { CheckpointRow, SaveOptions } from '../store/checkpoints';
import { diffTrees } from '../store/diff';
import type { Vault } from '../store/vault';
import { normalizePath } from '../vfs/paths';
import { Vfs } from '../vfs/vfs';
import { type Approver, recordOf } from './approvals';
import { type MountLease, leaseMount, planMount } from './mounts';
import { childEnv } from './environment';
import { pidAlive } from '../fuse/registry';
import { type RunGuard, startRunGuard } from './guard';
import { prepareOutputPipes } from './pipes';
import { stopGroup } from './processGroup';
import { runCommand, type RunOptions, type RunResult } from './runner';
import { bwrapSizesTmpfs, type SandboxSpec } from '../sandbox/bwrap';
import { homeReadOnly, loadSandboxSettings, planSandbox, sandboxRecordOf, unsandboxedRecord } from '../sandbox/plan';
import { normPath, outside, real, SECRET_SYSTEM_FILES, within } from '../sandbox/secrets';
import { sandboxSupport } from '../sandbox/probe';
import { networkHostsOf } from '../policy/networkHosts';
import { gitRemotesIn, globalGitConfigs } from './gitRemotes';
import { type CommitResult, type PrepareResult, WorkingCopy, workingTreeOf } from './workingCopy';

const TRANSITIONS: Record<ExecState, readonly ExecState[]> = {
  validating: ['policy'],
  policy: ['awaiting_approval', 'checkpointing', 'mounting', 'denied'],
  awaiting_approval: ['checkpointing', 'mounting', 'denied'],
  checkpointing: ['mounting'],
  mounting: ['executing'],
  executing: ['settling'],
  settling: ['summarizing'],
  summarizing: ['completed', 'timed_out', 'cancelled'],
  completed: [],
  denied: [],
  failed: [],
  timed_out: [],
  cancelled: [],
};

/** Legal moves; any state that has not ended may fail. */
export function canMoveExec(from: ExecState, to: ExecState): boolean {
  if (to === 'failed') return TRANSITIONS[from].length > 0;
  return TRANSITIONS[from].includes(to);
}

/**
 * The steps of a run whose cost grows with the vault's tree. In-process they run on the run's own
 * connection; the host hands them to its operation threads, so they never hold up its other clients.
 */
export interface ExecStore {
  saveCheckpoint(vault: string, opts: SaveOptions): Promise<CheckpointRow>;
  deleteCheckpoint(vault: string, name: string): Promise<void>;
  diffToLive(vault: string, from: { id: number; name: string }): Promise<ChangeSummary>;
  /** Brings a --materialize run's working copy (taken by the run) up to date with the vault. */
  prepareCopy(vault: string, copy: WorkingCopy): Promise<PrepareResult>;
  /** Commits what the run changed in its working copy back to the vault. */
  commitCopy(vault: string, copy: WorkingCopy): Promise<CommitResult>;
}

/** ExecStore over an open vault, in this thread. */
function storeOf(v: Vault): ExecStore {
  return {
    saveCheckpoint: async (_vault, opts) => v.checkpoints.save(opts),
    deleteCheckpoint: async (_vault, name) => {
      v.checkpoints.delete(name);
    },
    diffToLive: async (_vault, from) => diffTrees(v.store, v.inodes.chunks, { kind: 'checkpoint', ...from }, { kind: 'live' }),
    prepareCopy: async (_vault, copy) => copy.prepare(v),
    commitCopy: async (_vault, copy) => copy.commit(v),
  };
}

export interface ExecDeps {
  home: AvfsHome;
  /** Loaded once per process (the host keeps one; the CLI loads it per call). */
  engine: () => Promise<PolicyEngine>;
  approver: Approver;
  /** May this process serve a mount itself (one-shot CLI calls) or must a mount server do it (the host)? */
  inProcessMounts: boolean;
  /** Who asked, for the audit trail and approvers: cli, rpc. */
  surface: string;
  /** This process, as the audit trail names it should it die mid-run (`the vault host (pid 4242)`). */
  owner?: string;
  signal?: AbortSignal;
  onState?: (id: string, state: ExecState) => void;
  onOutput?: (id: string, stream: 'stdout' | 'stderr', chunk: Buffer) => void;
  /** Where checkpoints and the change summary are made (default: this thread, on the run's connection). */
  store?: ExecStore;
  /**
   * The run's connection to its vault (default: opened for the run, closed after it). A mount
   * server keeps one open between runs: it serves the vault anyway, and opening costs each run.
   */
  vaults?: { open(name: string): Vault; release(vault: Vault): void };
  /** The environment the command inherits (default: this process's; a mount server is given its caller's). */
  baseEnv?: NodeJS.ProcessEnv;
  /** What starts the command (default: this process; the host hands it to a small process of its own). */
  run?: (opts: RunOptions) => Promise<RunResult>;
}

/** The state machine of one run, with the time spent in each state. */
class ExecRun {
  readonly id: string;
  state: ExecState = 'validating';
  readonly states: ExecState[] = ['validating'];
  readonly timings: Partial<Record<ExecState, number>> = {};
  private since = performance.now();
  readonly started = performance.now();

  constructor(
    id: string | undefined,
    private readonly onState?: (id: string, state: ExecState) => void,
  ) {
    this.id = id ?? randomUUID();
    onState?.(this.id, 'validating');
  }

  move(to: ExecState): void {
    if (!canMoveExec(this.state, to)) throw new Error(`exec run ${this.id}: cannot go from ${this.state} to ${to}`);
    const now = performance.now();
    this.timings[this.state] = Math.round((now - this.since) * 10) / 10;
    this.since = now;
    this.state = to;
    this.states.push(to);
    this.onState?.(this.id, to);
  }
}

function describeCommand(cmd: PolicyCommand): { text: string; mode: 'argv' | 'shell'; argv: string[] } {
  if ('shell' in cmd) return { text: cmd.shell, mode: 'shell', argv: ['bash', '-c', cmd.shell] };
  return { text: cmd.argv.map(shellWord).join(' '), mode: 'argv', argv: cmd.argv };
}

/** What the policy judges: the command, with any variables the caller sets for it in front (`env K=V …`). */
function judgedCommand(cmd: PolicyCommand, env: Record<string, string>): PolicyCommand {
  const assignments = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  if (assignments.length === 0) return cmd;
  return { argv: ['env', ...assignments, ...describeCommand(cmd).argv] };
}

function changedFiles(s: ChangeSummary): string[] {
  const paths = new Set<string>();
  for (const e of [...s.added, ...s.modified, ...s.deleted]) paths.add(e.path);
  for (const r of s.renamed) {
    paths.add(r.from);
    paths.add(r.to);
  }
  return [...paths].sort();
}

/** Internal baselines of runs whose process died are dropped (they would pin chunks forever). */
function dropStaleBaselines(vault: Vault): void {
  for (const row of vault.checkpoints.internal()) {
    const pid = Number(/^\.exec-base-(\d+)-/.exec(row.name)?.[1]);
    if (Number.isInteger(pid) && pid > 0 && !pidAlive(pid)) vault.checkpoints.delete(row.name);
  }
}

export async function runExec(input: ExecRequestInput, deps: ExecDeps): Promise<ExecutionEnvelope> {
  const vaults = deps.vaults ?? { open: (name: string) => deps.home.open(name, { surface: 'exec' }), release: (v: Vault) => v.close() };
  const run = new ExecRun(typeof input.id === 'string' ? input.id : undefined, deps.onState);
  // Without zod's compiled fast path: compiling it costs a one-shot call ~8 ms, more than it ever saves there.
  const parsed = ExecRequest.safeParse(input, { jitless: true });
  const raw = (parsed.success ? parsed.data : input) as Partial<ExecRequest>;
  const command = parsed.success ? describeCommand(parsed.data.command) : { text: JSON.stringify(raw.command ?? null), mode: 'argv' as const, argv: [] };
  const timeoutMs = typeof raw.timeout_ms === 'number' ? raw.timeout_ms : 0;

  let vaultName: string | null = null;
  let vault: Vault | undefined;
  let store: ExecStore | undefined;
  let decision: Decision | undefined;
  let approval: ApprovalRecord | null = null;
  let checkpoint: CheckpointRow | undefined;
  let baseline: CheckpointRow | undefined;
  let lease: MountLease | undefined;
  let plannedMountpoint: string | null = raw.mountpoint ?? null;
  let mountReused = false;
  let guard: RunGuard | undefined;
  /** The command's process group from its start until the runner returns. */
  let group: number | undefined;
  let result: RunResult | undefined;
  let changes: ChangeSummary | null = null;
  let error: ErrorJson | null = null;
  let sandbox: SandboxRecord | null = null;
  let sandboxMode: SandboxMode | undefined;
  let workingCopy: WorkingCopy | undefined;
  let materialized: MaterializedRecord | null = null;
  const cwd = typeof raw.cwd === 'string' ? raw.cwd : '/';

  const audit = (op: JournalOp, details: Record<string, unknown>) => {
    try {
      vault?.journal.append(op, null, { details: { id: run.id, command: command.text, surface: deps.surface, ...details } });
    } catch {
      /* the audit trail must not turn a run into a failure */
    }
  };

  try {
    // ---- validating
    if (!parsed.success) throw toAvfsError(parsed.error);
    const req = parsed.data;
    // Started first: a one-shot call reads the probe's answer kept in the avfs home (or probes bwrap
    // while it opens the vault); a host or mount server keeps it in memory.
    const support = req.sandbox === 'none' ? undefined : sandboxSupport(deps.home.dir);
    const vaultCwd = normalizePath(req.cwd);
    vaultName = deps.home.resolve(req.vault);
    vault = vaults.open(vaultName);
    store = deps.store ?? storeOf(vault);
    if (req.materialize && (req.mountpoint !== undefined || req.allow_other)) {
      throw err.invalidInput('--materialize runs the command in a working copy, not a mount: --mountpoint and --allow-other do not apply', { field: req.mountpoint !== undefined ? 'mountpoint' : 'allow_other' });
    }
    // A materialized run's place is its vault's working copy; a mount's, the mount (a live one, or one to make).
    const plan = req.materialize ? undefined : planMount(deps.home, { vault: vaultName, readonly: req.readonly, allowOther: req.allow_other, keep: req.keep_mount, ...(req.mountpoint !== undefined ? { mountpoint: req.mountpoint } : {}) });
    const place = plan ? plan.mountpoint : workingTreeOf(deps.home.dir, vaultName);
    plannedMountpoint = place;
    const hostCwd = vaultCwd === '/' ? place : posix.join(place, vaultCwd);
    // The sandbox the run gets: the policy judges by it. Asked for, it must be possible here; by
    // default it is `workspace` where bubblewrap can run, else `none` (recorded as a fallback).
    const supported = await support;
    if (req.sandbox === 'workspace' && supported && !supported.ok) {
      throw new AvfsError('SandboxUnavailable', `cannot isolate the run (--sandbox workspace): ${supported.reason}; nothing ran. \`avfs doctor\` says more; --sandbox none runs it without isolation`, { reason: supported.reason });
    }
    const mode: SandboxMode = req.sandbox ?? (supported?.ok ? 'workspace' : 'none');
    const sandboxSettings = mode === 'workspace' ? loadSandboxSettings(deps.home.dir) : undefined;
    sandboxMode = mode;
    const noneWhy = req.sandbox === 'none' ? '--sandbox none: no isolation' : `bubblewrap cannot run here (${supported && !supported.ok ? supported.reason : 'unknown'}): the default fell back to no isolation`;

    // ---- policy
    run.move('policy');
    const rules = effectiveRuleSets(deps.home.dir, vault);
    decision = await decideOnce(deps.engine, judgedCommand(req.command, req.env), {
      mountpoint: place,
      cwd: hostCwd,
      home: homedir(),
      rules,
      sandbox: mode,
    });
    // The policy's checkpoint is skipped (--checkpoint never) only where the user's own rules allow it.
    if (req.checkpoint === 'never' && !req.readonly) decision = refuseCheckpointOptOut(decision, rules);
    audit('exec_request', { cwd: vaultCwd, action: decision.action, categories: decision.categories, rule: decision.rule });
    if (decision.action === 'deny') {
      error = { error: 'PolicyDenied', message: `denied by policy: ${decision.reason}`, rule: decision.rule };
      run.move('denied');
      audit('exec_denied', { reason: decision.reason, rule: decision.rule });
      return envelope();
    }

    if (decision.action === 'require_approval') {
      run.move('awaiting_approval');
      approval = await askApproval(vaultName, vaultCwd, decision);
      audit('exec_approval', { outcome: approval.outcome, answer: approval.answer, by: approval.by, rule: approval.rule, waited_ms: approval.waited_ms });
      if (approval.outcome !== 'approved') {
        const why: Record<ApprovalRecord['outcome'], string> = {
          approved: '',
          denied: `denied by ${approval.by ?? 'the approver'}`,
          timed_out: `no approver answered within ${approval.waited_ms} ms`,
          no_approver: 'no approver was reachable (run it in a terminal, or with a running `avfs host` that an editor or `avfs approve` answers)',
          cancelled: 'the request was cancelled',
        };
        error = { error: 'ApprovalRequired', message: `needs approval: ${why[approval.outcome]}; ${decision.reason}`, outcome: approval.outcome };
        run.move('denied');
        audit('exec_denied', { reason: error.message });
        return envelope();
      }
    }

    // From here the run holds things (a checkpoint, a mount, a command): its guard ends them should this process die.
    guard = startRunGuard({
      home: deps.home.dir,
      vault: vaultName,
      id: run.id,
      // In the guard's argv (one argument is at most 128 KiB); the audit trail's request entry has it whole.
      command: command.text.length > 4096 ? `${command.text.slice(0, 4096)}…` : command.text,
      surface: deps.surface,
      owner: deps.owner ?? `avfs (pid ${process.pid})`,
      owner_pid: process.pid,
      grace_ms: req.grace_ms,
    });

    // ---- checkpointing (the checkpoint is also the baseline of the change summary)
    const risky = decision.action === 'allow_with_checkpoint' || decision.action === 'require_approval';
    const wantCheckpoint = req.checkpoint === 'always' || (req.checkpoint === 'auto' && risky && !req.readonly);
    if (wantCheckpoint) {
      run.move('checkpointing');
      checkpoint = await store.saveCheckpoint(vaultName, { auto: true, prefix: 'exec', description: `before: ${command.text}`.slice(0, 500), run: run.id });
      guard?.tell({ checkpoint: checkpoint.name });
    }

    // ---- mounting (with the baseline of the change summary when no checkpoint serves as one)
    run.move('mounting');
    // The command starts in this process: its output pipes are made while the mount is.
    if (!deps.run) prepareOutputPipes();
    dropStaleBaselines(vault);
    const vfs = new Vfs(vault);
    if (req.readonly) {
      if (vfs.stat(vaultCwd).type !== 'directory') throw err.notDir(vaultCwd);
    } else {
      if (!checkpoint && !req.materialize) {
        baseline = await store.saveCheckpoint(vaultName, { internal: true, prefix: `exec-base-${process.pid}` });
        guard?.tell({ baseline: baseline.name });
      }
      vfs.mkdir(vaultCwd, { parents: true });
    }
    if (!plan) {
      // The working copy, brought up to date with the vault (and marked in use until its commit).
      const t0 = performance.now();
      workingCopy = WorkingCopy.take(deps.home.dir, vaultName);
      const ready = await store.prepareCopy(vaultName, workingCopy);
      materialized = { working_copy: workingCopy.tree, synced: ready.synced, pulled: ready.pulled, committed: false, applied: 0, merged: 0, prepare_ms: Math.round(performance.now() - t0), commit_ms: 0, commit_steps: null, kept_aside: null };
    } else {
      // The guard releases a mount only if it is this run's one-shot mount. One in avfs's own directory
      // is, from the start (the name is the run's alone): the guard hears of it before it is made, so
      // a death while mounting is covered too. Elsewhere, only once the lease says this run made it.
      const oneShot = { mountpoint: plan.mountpoint, served_by_owner: deps.inProcessMounts, remove_dir: plan.auto };
      const toldEarly = !plan.live && !req.keep_mount && plan.auto;
      if (toldEarly) guard?.tell({ mount: oneShot });
      lease = await leaseMount(deps.home, plan, { keep: req.keep_mount, inProcess: deps.inProcessMounts });
      mountReused = lease.reused;
      if (lease.reused || lease.kept) {
        if (toldEarly) guard?.tell({ mount: null });
      } else if (!toldEarly) guard?.tell({ mount: oneShot });
    }

    // ---- executing
    const env = childEnv({ ...(deps.baseEnv ? { base: deps.baseEnv } : {}), clean: req.clean_env, extra: req.env, vault: vaultName, mountpoint: place, vaultCwd, hostCwd, execId: run.id });
    let spec: SandboxSpec | undefined;
    if (mode === 'workspace' && supported?.ok && sandboxSettings) {
      const networked = decision.categories.includes('networked');
      // The hosts the policy read from the command's network parts; null: not known, the whole network.
      // Git inside reads the global files the private home shows (sandbox.json's home_read_only).
      // What git inside reads outside the vault: the system, and of the home only what the sandbox shows.
      // (A home or avfs home that is a link is out of sight by either path.) Links are never followed
      // into the run's mount, which this process may serve (outside()).
      const parts = decision.parts;
      const hosts = !networked
        ? null
        : outside([place], () => {
            const shown = homeReadOnly(sandboxSettings, homedir(), deps.home.dir);
            const gitGlobals = globalGitConfigs(homedir()).filter((f) => shown.some((p) => f === p || f.startsWith(`${p}/`)));
            const home = normPath(homedir());
            const homes = [home, real(home)];
            const hiddenHere = [normPath(deps.home.dir), real(normPath(deps.home.dir)), '/tmp'];
            const visible = (f: string) => (!homes.some((h) => within(f, h)) || shown.some((p) => within(f, p) || within(f, real(p)))) && !hiddenHere.some((h) => within(f, h)) && !SECRET_SYSTEM_FILES.includes(f);
            return networkHostsOf(parts, gitRemotesIn(vfs, vaultCwd, gitGlobals, { root: place, env, visible }));
          });
      spec = planSandbox({
        bwrap: supported.bwrap,
        userns: supported.userns,
        avfsHome: deps.home.dir,
        home: homedir(),
        mountpoint: place,
        readonly: req.readonly,
        network: networked,
        allowHosts: hosts,
        settings: sandboxSettings,
        // The tools of the caller's own environment: a PATH or PYENV_ROOT the request sets (an agent's
        // `env`) must not choose what of the home the run is shown.
        env: deps.baseEnv ?? process.env,
        pidMax: supported.pidMax,
        tmpfsSize: bwrapSizesTmpfs(supported.version),
      });
      const to = hosts ? ` (${hosts.join(', ')} alone)` : ' (hosts the policy cannot name: the whole network)';
      const why = !networked
        ? 'the policy found no network use in the command'
        : approval
          ? `approved by ${approval.by ?? 'an approver'}: the command talks to the network${to}`
          : `the policy let its network use run (${decision.rule})${to}`;
      sandbox = sandboxRecordOf(spec, supported.version, why);
    } else {
      sandbox = unsandboxedRecord(place, noneWhy);
    }
    // The caller's temporary directory may be read-only inside: the run's own /tmp is there.
    if (spec && env.TMPDIR !== undefined) env.TMPDIR = '/tmp';
    run.move('executing');
    result = await (deps.run ?? runCommand)({
      argv: command.argv,
      cwd: hostCwd,
      env,
      ...(spec ? { sandbox: spec } : {}),
      timeoutMs: req.timeout_ms,
      graceMs: req.grace_ms,
      maxOutputBytes: req.max_output_bytes,
      ...(req.stdin !== undefined ? { stdin: req.stdin } : {}),
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(deps.onOutput ? { onOutput: (s, c) => deps.onOutput!(run.id, s, c) } : {}),
      onStart: (pgid: number) => {
        group = pgid;
        guard?.tell({ pgid });
      },
    });
    // Its group is empty now (the runner stopped what it left): the number may name another group later.
    group = undefined;
    if (sandbox && result.sandbox) sandbox = { ...sandbox, limits: result.sandbox.limits, violations: result.sandbox.violations };
    guard?.tell({ pgid: null });

    // ---- settling: every write the command made through the mount is committed, then the lease ends
    run.move('settling');
    if (lease) {
      await lease.barrier();
      await lease.release();
      lease = undefined;
    }
    if (workingCopy && materialized) {
      // Committed only when the command ran to its end; otherwise the vault stays as it was and the
      // next run rebuilds the copy. A commit that fails leaves the vault as it was, the copy kept aside.
      const t0 = performance.now();
      if (req.readonly) workingCopy.settleUnchanged();
      else if (!result.timedOut && !result.cancelled) {
        try {
          const done = await store.commitCopy(vaultName, workingCopy);
          changes = done.changes;
          materialized = { ...materialized, committed: true, applied: done.applied, merged: done.merged, commit_steps: done.steps };
        } catch (e) {
          const kept = workingCopy.keepAside(run.id);
          materialized = { ...materialized, kept_aside: kept };
          const ae = toAvfsError(e);
          throw new AvfsError(ae.kind, `${ae.message} (the run's files are kept in ${kept})`, { ...ae.details, working_copy: kept });
        } finally {
          materialized = { ...materialized, commit_ms: Math.round(performance.now() - t0) };
        }
      }
      materialized = { ...materialized, commit_ms: Math.round(performance.now() - t0) };
    }

    // ---- summarizing
    run.move('summarizing');
    const before = checkpoint ?? baseline;
    // A materialized run's summary is its commit's: what the command changed, exactly (not others' writes).
    if (before && !workingCopy) {
      changes = await store.diffToLive(vaultName, { id: before.id, name: checkpoint ? before.name : 'before-run' });
    }
    if (baseline) {
      await store.deleteCheckpoint(vaultName, baseline.name);
      baseline = undefined;
    }
    run.move(result.cancelled ? 'cancelled' : result.timedOut ? 'timed_out' : 'completed');
    audit('exec_result', {
      state: run.state,
      exit_code: result.exitCode,
      signal: result.signal,
      duration_ms: result.durationMs,
      checkpoint: checkpoint?.name ?? null,
      changes: changes?.totals ?? null,
    });
    return envelope();
  } catch (e) {
    error = toAvfsError(e).toJSON();
    if (run.state !== 'failed') run.move('failed');
    audit('exec_failed', { error: error.error, message: error.message, checkpoint: checkpoint?.name ?? null });
    return envelope();
  } finally {
    try {
      // The runner failed under a running command (it died): nothing else will stop that command.
      if (group !== undefined) await stopGroup(group, typeof raw.grace_ms === 'number' ? raw.grace_ms : 0).catch(() => undefined);
      if (lease) await lease.release().catch(() => undefined);
      workingCopy?.release();
      if (baseline && store && vaultName) await store.deleteCheckpoint(vaultName, baseline.name).catch(() => undefined); // else dropped by a later run
      if (vault) vaults.release(vault);
    } finally {
      // Last: should this process die before, the guard still releases what is left.
      guard?.done();
    }
  }

  async function askApproval(vname: string, vaultCwd: string, d: Decision): Promise<ApprovalRecord> {
    const request: ApprovalRequest = {
      id: run.id,
      vault: vname,
      command: command.text,
      cwd: vaultCwd,
      action: d.action,
      categories: d.categories,
      reason: d.reason,
      rule: d.rule,
      requested_at: new Date().toISOString(),
      surface: deps.surface,
      parts: d.parts,
      timeout_ms: deps.approver.timeoutMs,
    };
    const t0 = performance.now();
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    deps.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const o = await deps.approver.ask(request, ac.signal);
      return recordOf(run.id, o, Math.round(performance.now() - t0));
    } finally {
      deps.signal?.removeEventListener('abort', onAbort);
    }
  }

  function envelope(): ExecutionEnvelope {
    run.timings[run.state] = 0;
    const total = Math.round(performance.now() - run.started);
    const r = result;
    const exitCode = r ? r.exitCode : null;
    return {
      schema_version: ENVELOPE_SCHEMA_VERSION,
      kind: 'proxy_exec_result',
      id: run.id,
      success: run.state === 'completed' && exitCode === 0,
      request: {
        vault: vaultName ?? (typeof raw.vault === 'string' ? raw.vault : null),
        cwd,
        readonly: !!raw.readonly,
        keep_mount: !!raw.keep_mount,
        mountpoint: raw.mountpoint ?? null,
        checkpoint_mode: raw.checkpoint ?? 'auto',
        command: command.text,
        command_mode: command.mode,
        argv: command.argv,
        timeout: timeoutMs > 0 ? { millis: timeoutMs } : 'none',
        grace_ms: typeof raw.grace_ms === 'number' ? raw.grace_ms : 0,
        sandbox: sandboxMode ?? (raw.sandbox === 'none' ? 'none' : 'workspace'),
        materialize: !!raw.materialize,
      },
      result: {
        vault: vaultName,
        mountpoint: plannedMountpoint,
        cwd,
        command: command.text,
        exit_code: exitCode,
        signal: r?.signal ?? null,
        stdout: r?.stdout.text ?? '',
        stderr: r?.stderr.text ?? '',
        stdout_bytes: r?.stdout.bytes ?? 0,
        stderr_bytes: r?.stderr.bytes ?? 0,
        stdout_truncated: r?.stdout.truncated ?? false,
        stderr_truncated: r?.stderr.truncated ?? false,
        readonly: !!raw.readonly,
        kept_mounted: r !== undefined && !raw.materialize && (!!raw.keep_mount || mountReused),
        mount_reused: mountReused,
        duration_ms: r?.durationMs ?? 0,
        total_ms: total,
        checkpoint: checkpoint?.name ?? null,
        changed_files: changes ? changedFiles(changes) : [],
        changes,
        decision: decision
          ? { action: decision.action, categories: decision.categories, reason: decision.reason, rule: decision.rule, parts: decision.parts }
          : null,
        approval,
        state: run.state,
        states: run.states,
        timings: run.timings,
        timed_out: r?.timedOut ?? false,
        cancelled: r?.cancelled ?? false,
        leftover_processes: r?.leftovers ?? 0,
        error,
        sandbox,
        materialized,
      },
    };
  }
}
