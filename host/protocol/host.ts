/**
 * The vault host's own part of the protocol: the methods that exist only with a host (status,
 * clients, approvals), the notifications it sends every client, and the one request it sends
 * approvers. Operations themselves are in methods.ts.
 */
import { z } from 'zod';
import { ApprovalAnswerKind, ApprovalRecord, ApprovalRequest, ExecState, ExecutionEnvelope } from './exec';
import { MountInfo } from './methods';

const define = <P extends z.ZodType, R extends z.ZodType>(params: P, result: R, doc: string) => ({ params, result, doc });

export const ClientKind = z.enum(['vscode', 'cli', 'other']);

/** How many finished runs the host remembers for exec/list (newest kept); running ones are always listed. */
export const EXEC_HISTORY_RUNS = 50;
/** Characters of each stream's output kept for a run still going (its head and its latest part). */
export const EXEC_LIVE_OUTPUT_CHARS = 64 * 1024;

/**
 * One run the host knows of: running (its output so far) or finished (its envelope). A window
 * opened after a run started, or after it ended, reads these to show what it missed.
 */
export const ExecRun = z.object({
  id: z.string(),
  vault: z.string().nullable(),
  command: z.string(),
  surface: z.string(),
  started_at: z.string(),
  state: ExecState,
  stdout: z.string().describe('output so far (while running; the envelope has the final one)'),
  stderr: z.string(),
  output_truncated: z.boolean().describe('the middle of the output so far was left out'),
  envelope: ExecutionEnvelope.nullable().describe('null while the run goes on'),
});
export type ExecRun = z.infer<typeof ExecRun>;

export const HOST_METHODS = {
  'client/hello': define(
    z.object({
      name: z.string().max(200).describe('shown to people: "VS Code (window 2)", "avfs approve (pid 4242)"'),
      kind: ClientKind,
      approver: z.union([z.boolean(), z.literal('own')]).default(false).describe('send this client approval/request: for every run (true), or only for the runs it started itself ("own": a terminal)'),
      pid: z.number().int().optional(),
      output: z
        .enum(['all', 'own', 'none'])
        .default('all')
        .describe('which runs\' exec/output this client is sent: every run\'s (an editor), only the runs it started ("own": a terminal showing its command), or none'),
    }),
    z.object({ client_id: z.string(), host_pid: z.number(), version: z.string(), home: z.string() }),
    'introduce this connection (optional for plain calls; required to be asked for approvals)',
  ),
  'host/status': define(
    z.object({}),
    z.object({
      pid: z.number(),
      version: z.string(),
      home: z.string(),
      socket: z.string(),
      started_at: z.string(),
      uptime_ms: z.number(),
      clients: z.array(z.object({ id: z.string(), name: z.string(), kind: ClientKind, approver: z.boolean(), connected_at: z.string() })),
      mounts: z.array(MountInfo),
      pending_approvals: z.number(),
      running_execs: z.number(),
    }),
    'who the host is and what it holds',
  ),
  'host/shutdown': define(z.object({}), z.object({ stopping: z.boolean() }), 'stop the host (it unmounts what it mounted)'),
  'approval/list': define(z.object({}), z.object({ pending: z.array(ApprovalRequest) }), 'approval requests waiting for an answer'),
  'approval/answer': define(
    z.object({ id: z.string(), answer: ApprovalAnswerKind, by: z.string().max(200).optional().describe('ignored: the host records who answered from the connection (its kind, pid, uid, terminal)') }),
    z.object({ id: z.string(), settled: z.boolean().describe('false: it was settled already (first answer wins)'), rule: z.string().nullable() }),
    'answer a pending approval (from any client: an editor, `avfs approve`)',
  ),
  'exec/list': define(
    z.object({ limit: z.number().int().min(1).max(EXEC_HISTORY_RUNS).default(EXEC_HISTORY_RUNS) }),
    z.object({ runs: z.array(ExecRun).describe('newest first: every run going on, then the last `limit` finished ones') }),
    'the runs going on and the last ones that finished (kept in memory by the host, bounded)',
  ),
} as const;
export type HostMethodName = keyof typeof HOST_METHODS;

/** What the host sends every client, unasked. */
export const VaultChange = z.object({
  seq: z.number(),
  // A string, not the enum: a vault written by another avfs version may hold other operations.
  op: z.string().describe('the journal operation: one of JOURNAL_OPS (host/protocol/changes.ts), or another version\'s'),
  path: z.string().nullable(),
  path2: z.string().nullable(),
  surface: z.string(),
});

export const NOTIFICATIONS = {
  /** Batched: what changed in a vault since the last notice, whichever surface wrote it (CLI, mount, host, exec). */
  'vault/changed': z.object({
    vault: z.string(),
    kind: z.enum(['files', 'created', 'deleted', 'checkpoints', 'meta']),
    changes: z.array(VaultChange),
    truncated: z.boolean().describe('more changes happened than are listed: re-read what is shown'),
  }),
  'exec/started': z.object({ id: z.string(), vault: z.string().nullable(), command: z.string(), surface: z.string(), started_at: z.string() }),
  'exec/state': z.object({ id: z.string(), state: ExecState }),
  /** `dropped_bytes`: output of this run the client missed before this chunk (it was not reading its messages fast enough). */
  'exec/output': z.object({ id: z.string(), stream: z.enum(['stdout', 'stderr']), text: z.string(), dropped_bytes: z.number().int().nonnegative().optional() }),
  'exec/finished': z.object({ id: z.string(), envelope: ExecutionEnvelope }),
  'approval/settled': z.object({ id: z.string(), record: ApprovalRecord }),
  log: z.object({ level: z.enum(['trace', 'debug', 'info', 'warn', 'error']), message: z.string() }),
} as const;
export type NotificationName = keyof typeof NOTIFICATIONS;

/** The one request the host sends: to every connected approver, until one answers. */
export const APPROVAL_REQUEST = 'approval/request';
export const ApprovalReply = z.object({ answer: ApprovalAnswerKind, by: z.string().max(200).optional().describe('ignored: the host names who answered from the connection') });
export type ApprovalReply = z.infer<typeof ApprovalReply>;
export { ApprovalRequest };
