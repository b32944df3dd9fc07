/**
 * The execution contract: what `avfs proxy exec` (and the host's `exec/run`) is asked to do, the
 * states a run goes through, approvals, and the ExecutionEnvelope every run returns, whatever
 * happened. Field names of the original agentvfs envelope are kept (`schema_version`, `kind`,
 * `success`, `request{…}`, `result{exit_code, stdout, stderr, duration_ms, checkpoint,
 * changed_files, decision, state, timed_out}`); everything else is added, never renamed.
 */
import { z } from 'zod';
import { ChangeSummary } from './changes';
import { ErrorJson } from './errors';
import { Action, Category, DecisionPart } from './policy';
import { SandboxMode, SandboxRecord } from './sandbox';

export const ENVELOPE_SCHEMA_VERSION = 1;
export const DEFAULT_TIMEOUT_MS = 300_000;
export const DEFAULT_GRACE_MS = 2_000;
/** Bytes of each output stream kept in the envelope: the first half and the last half. */
export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
/** The most a caller may ask to keep per stream: the envelope is one JSON document, sent to every client following the run. */
export const MAX_OUTPUT_BYTES_LIMIT = 16 * 1024 * 1024;

/** Exit codes of `avfs proxy exec` when the command itself did not decide one (as `timeout` and `docker run` use them). */
export const EXEC_EXIT = {
  timed_out: 124,
  failed: 125,
  denied: 126,
  cancelled: 130,
} as const;

/**
 * The run's states. Terminal: completed | denied | failed | timed_out | cancelled. `awaiting_approval` only
 * when the policy asks for one; `checkpointing` only when a checkpoint is taken.
 */
export const EXEC_STATES = [
  'validating',
  'policy',
  'awaiting_approval',
  'checkpointing',
  'mounting',
  'executing',
  'settling',
  'summarizing',
  'completed',
  'denied',
  'failed',
  'timed_out',
  'cancelled',
] as const;
export const ExecState = z.enum(EXEC_STATES);
export type ExecState = z.infer<typeof ExecState>;
export const TERMINAL_STATES: readonly ExecState[] = ['completed', 'denied', 'failed', 'timed_out', 'cancelled'];

export const CheckpointMode = z.enum(['auto', 'always', 'never']);
export type CheckpointMode = z.infer<typeof CheckpointMode>;

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name is letters, digits and _, not starting with a digit');

/**
 * What Linux refuses to start a program with (E2BIG): one argument or environment string over
 * 128 KiB (MAX_ARG_STRLEN), or all of them together over ARG_MAX (2 MiB; some is kept for the
 * rest of the environment the command inherits).
 */
export const MAX_ARG_BYTES = 128 * 1024 - 1;
export const MAX_ARGS_TOTAL_BYTES = 2 * 1024 * 1024 - 256 * 1024;
const utf8Bytes = (s: string) => (s.length * 3 <= MAX_ARG_BYTES ? s.length : new TextEncoder().encode(s).length);
const totalBytes = (words: string[]) => words.reduce((n, w) => n + utf8Bytes(w) + 1, 0);
const osString = (what: string) => z.string().refine((s) => utf8Bytes(s) <= MAX_ARG_BYTES, `${what} is over ${MAX_ARG_BYTES + 1} bytes: the system would refuse to start the command (E2BIG)`);

/** What a caller asks for. The CLI builds it from flags; the host takes it as `exec/run` params. */
export const ExecRequest = z.strictObject({
  id: z.string().uuid().optional().describe('the caller may name the run, to follow its exec/* notifications'),
  vault: z.string().optional().describe('the vault (default: the current one)'),
  command: z.union([z.strictObject({ shell: osString('the shell command').pipe(z.string().min(1)) }), z.strictObject({ argv: z.array(osString('an argument')).min(1).refine((a) => totalBytes(a) <= MAX_ARGS_TOTAL_BYTES, `the arguments are over ${MAX_ARGS_TOTAL_BYTES} bytes together: the system would refuse to start the command (E2BIG)`) })]),
  cwd: z
    .string()
    .refine((p) => !/[\x00-\x1f\x7f]/.test(p), 'a working directory holds no control characters')
    .default('/')
    .describe('absolute path inside the vault; created if missing'),
  readonly: z.boolean().default(false),
  keep_mount: z.boolean().default(false).describe('leave the mount up for the next call (and reuse one that is up)'),
  mountpoint: z.string().optional().describe('where to mount (default: under the avfs home)'),
  allow_other: z.boolean().default(false).describe('let other users reach the mount (kernel permission checks apply)'),
  timeout_ms: z.number().int().min(0).default(DEFAULT_TIMEOUT_MS).describe('0 means no time limit'),
  grace_ms: z.number().int().min(0).default(DEFAULT_GRACE_MS).describe('SIGTERM to SIGKILL delay'),
  checkpoint: CheckpointMode.default('auto'),
  env: z
    .record(EnvName, osString('an environment variable'))
    .refine((e) => totalBytes(Object.entries(e).map(([k, v]) => `${k}=${v}`)) <= MAX_ARGS_TOTAL_BYTES / 2, `the variables are over ${MAX_ARGS_TOTAL_BYTES / 2} bytes together: the system would refuse to start the command (E2BIG)`)
    .default({}),
  clean_env: z.boolean().default(false).describe('pass only a minimal environment (see docs/exec.md)'),
  caller_env: z
    .record(z.string(), z.string())
    .optional()
    .describe("the caller's environment, which the command inherits as it would run directly (a client of the host sends its own); default: that of the process running the call"),
  stdin: z.string().optional().describe('bytes fed to the command (default: none, /dev/null)'),
  max_output_bytes: z.number().int().min(1024).max(MAX_OUTPUT_BYTES_LIMIT).default(DEFAULT_MAX_OUTPUT_BYTES),
  sandbox: SandboxMode.optional().describe('workspace: isolated by bubblewrap, an error where it cannot run (docs/exec.md); none: no isolation, recorded in the envelope; default: workspace where bubblewrap can run here, else none'),
  materialize: z
    .boolean()
    .default(false)
    .describe('run in a native working copy of the vault (kept warm between runs) instead of its mount, then commit what changed back in one transaction (docs/exec.md); keep_mount, mountpoint and allow_other do not apply'),
});
export type ExecRequestInput = z.input<typeof ExecRequest>;
export type ExecRequest = z.output<typeof ExecRequest>;

export const ApprovalAnswerKind = z.enum(['approve_once', 'always_allow', 'deny']);
export type ApprovalAnswerKind = z.infer<typeof ApprovalAnswerKind>;

/** What an approver is shown. */
export const ApprovalRequest = z.object({
  id: z.string(),
  vault: z.string(),
  command: z.string(),
  cwd: z.string(),
  action: Action,
  categories: z.array(Category),
  reason: z.string(),
  rule: z.string(),
  requested_at: z.string(),
  surface: z.string().describe('who asks: cli (a terminal), rpc (through the host)'),
  parts: z.array(DecisionPart).describe('each judged part of the command; "always allow" adds an exact rule for the parts that asked'),
  timeout_ms: z.number().describe('unanswered for this long, the request is denied'),
});
export type ApprovalRequest = z.infer<typeof ApprovalRequest>;

/** How a request was settled, as recorded in the envelope and the audit trail. */
export const ApprovalRecord = z.object({
  id: z.string(),
  outcome: z.enum(['approved', 'denied', 'timed_out', 'no_approver', 'cancelled']),
  answer: ApprovalAnswerKind.nullable(),
  by: z.string().nullable().describe('who answered, as the host knows the connection ("cli client (pid 4242, uid 1000, /dev/pts/3)", "vscode client (pid 77, uid 1000, no terminal)"), or "terminal" for the CLI\'s own prompt'),
  at: z.string(),
  scope: z.enum(['once', 'always']).nullable(),
  rule: z.string().nullable().describe('the rule added by always_allow'),
  waited_ms: z.number(),
});
export type ApprovalRecord = z.infer<typeof ApprovalRecord>;

export const ExecDecision = z.object({
  action: Action,
  categories: z.array(Category),
  reason: z.string().nullable(),
  rule: z.string().nullable(),
  parts: z.array(DecisionPart),
});

/** What a `materialize` run's working copy did. */
export const MaterializedRecord = z.object({
  working_copy: z.string().describe('the directory the command ran in'),
  synced: z.enum(['full', 'journal']).describe("full: rebuilt from the vault's tree; journal: only the paths the vault's journal names since the last run"),
  pulled: z.number().describe('paths written into the working copy before the run'),
  committed: z.boolean().describe('the run\'s changes were committed to the vault (not when it timed out, was cancelled, was read-only, or its commit failed)'),
  applied: z.number().describe('vault paths written, created, linked, renamed or removed by the commit'),
  merged: z.number().describe('paths another writer changed in the vault during the run (none the run changed), brought into the working copy after it'),
  prepare_ms: z.number(),
  commit_ms: z.number(),
  commit_steps: z
    .object({
      walk_ms: z.number().describe("the walk of the working copy (every path's stat)"),
      compare_ms: z.number().describe('working out the changes from the walk and the manifest'),
      read_ms: z.number().describe("reading the new files' bytes"),
      write_ms: z.number().describe("the vault's one transaction (with the journal rows and the new manifest)"),
      finish_ms: z.number().describe("saving the manifest, and bringing others' changes into the copy"),
    })
    .nullable()
    .optional()
    .describe('where commit_ms went, step by step; null when nothing was committed'),
  kept_aside: z.string().nullable().describe('where the working copy was moved when its commit failed: the run\'s files are there'),
});
export type MaterializedRecord = z.infer<typeof MaterializedRecord>;

const Timeout = z.union([z.object({ millis: z.number() }), z.literal('none')]);

export const PhaseTimings = z.partialRecord(ExecState, z.number()).describe('milliseconds spent in each state');

export const ExecutionEnvelope = z.object({
  schema_version: z.literal(ENVELOPE_SCHEMA_VERSION),
  kind: z.literal('proxy_exec_result'),
  id: z.string().describe('this run, as named in the audit trail and in host events'),
  success: z.boolean().describe('the run completed and the command exited 0'),
  request: z.object({
    vault: z.string().nullable(),
    cwd: z.string(),
    readonly: z.boolean(),
    keep_mount: z.boolean(),
    mountpoint: z.string().nullable(),
    checkpoint_mode: CheckpointMode,
    command: z.string(),
    command_mode: z.enum(['argv', 'shell']),
    argv: z.array(z.string()).describe('what was executed: the argv, or [bash, -c, STRING]'),
    timeout: Timeout,
    grace_ms: z.number(),
    sandbox: SandboxMode.describe('the isolation the run was to get (asked for, or the default here)'),
    materialize: z.boolean().describe('run in a working copy, committed back after it'),
  }),
  result: z.object({
    vault: z.string().nullable(),
    mountpoint: z.string().nullable(),
    cwd: z.string(),
    command: z.string(),
    exit_code: z.number().int().nullable().describe('null when the command never ran; 128+N when killed by signal N'),
    signal: z.string().nullable(),
    stdout: z.string(),
    stderr: z.string(),
    stdout_bytes: z.number().describe('bytes the command wrote, kept or not'),
    stderr_bytes: z.number(),
    stdout_truncated: z.boolean(),
    stderr_truncated: z.boolean(),
    readonly: z.boolean(),
    kept_mounted: z.boolean(),
    mount_reused: z.boolean(),
    duration_ms: z.number().describe('the command\'s own run time'),
    total_ms: z.number().describe('the whole call, policy to envelope'),
    checkpoint: z.string().nullable().describe('taken before the command ran: restore it to undo the run'),
    changed_files: z.array(z.string()).describe('every path added, modified, deleted or renamed (both names)'),
    changes: ChangeSummary.nullable(),
    decision: ExecDecision.nullable().describe('null when the run failed before the policy judged it'),
    approval: ApprovalRecord.nullable(),
    state: ExecState,
    states: z.array(ExecState).describe('every state the run went through, in order'),
    timings: PhaseTimings,
    timed_out: z.boolean(),
    cancelled: z.boolean(),
    leftover_processes: z.number().describe('processes of the command\'s group still running when it exited, then stopped'),
    error: ErrorJson.nullable().describe('why the run failed (state failed), or why it was denied'),
    sandbox: SandboxRecord.nullable().describe('the isolation the command ran in; null when it never ran'),
    materialized: MaterializedRecord.nullable().describe('with materialize: how the working copy was made ready and committed; null otherwise, or before it was made'),
  }),
});
export type ExecutionEnvelope = z.infer<typeof ExecutionEnvelope>;
