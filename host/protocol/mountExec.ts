/**
 * The exec endpoint of a mount server: a Unix socket beside the mount's record, over which a CLI
 * call that finds the mount up hands its run to the process that serves it (warm policy engine,
 * vault open), instead of loading all of that itself. One connection per run; messages are JSON
 * lines. The CLI sends `run` first, then `answer` to an `approval` and `cancel` when it is
 * interrupted (closing the connection cancels too); the server streams `output` and ends with
 * `done`. See docs/exec.md.
 */
import { z } from 'zod';
import { ApprovalAnswerKind, type ApprovalRequest, type ExecutionEnvelope } from './exec';

export const MountExecRun = z.strictObject({
  type: z.literal('run'),
  /** The caller's avfs version: a server of another version is not handed runs. */
  version: z.string(),
  /** Checked by the pipeline itself (its errors belong in the envelope). */
  request: z.unknown(),
  /** The caller's environment: the command inherits it, as it would run in the caller's process. */
  env: z.record(z.string(), z.string()),
  /** Send the command's output as it comes (the caller prints it for a person). */
  stream: z.boolean(),
  /** Whether the caller can ask the person at its terminal; if not, why (the envelope says it). */
  approver: z.strictObject({ interactive: z.boolean(), why: z.string() }),
});
export type MountExecRun = z.infer<typeof MountExecRun>;

const Outcome = z.union([
  z.strictObject({ kind: z.literal('answered'), answer: z.strictObject({ answer: ApprovalAnswerKind, by: z.string(), rule: z.string().optional() }) }),
  z.strictObject({ kind: z.literal('no_approver'), why: z.string() }),
  z.strictObject({ kind: z.literal('timed_out'), after_ms: z.number() }),
  z.strictObject({ kind: z.literal('cancelled') }),
]);

/** What the caller sends after `run`. */
export const MountExecFollowUp = z.union([z.strictObject({ type: z.literal('answer'), outcome: Outcome }), z.strictObject({ type: z.literal('cancel') })]);
export type MountExecFollowUp = z.infer<typeof MountExecFollowUp>;

/** What the server sends. */
export type MountExecReply =
  | { type: 'output'; stream: 'stdout' | 'stderr'; data: string /* base64 */ }
  | { type: 'approval'; request: ApprovalRequest }
  | { type: 'done'; envelope: ExecutionEnvelope; exit_code: number; human: string };
