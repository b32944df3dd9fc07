/**
 * The messages between the executions webview (webview/main.ts, in the editor's browser frame) and
 * the extension (extension/executions/executionsView.ts). Both sides validate what they receive
 * with these schemas: the webview is a separate program, and a message it cannot read is logged
 * and dropped, never half-used. The extension sends summaries of every run, the detail of the one
 * selected, and its inline diffs when asked; the webview sends what the person clicked.
 */
import { z } from 'zod';

export const RunSummary = z.object({
  id: z.string(),
  vault: z.string().nullable(),
  command: z.string(),
  state: z.string(),
  running: z.boolean(),
  /** allow, allow_with_checkpoint, require_approval, deny; null before the policy judged it. */
  decision: z.string().nullable(),
  exit_code: z.number().nullable(),
  duration_ms: z.number().nullable(),
  started_at: z.string(),
  changed: z.number().describe('files changed (0 while running)'),
});
export type RunSummary = z.infer<typeof RunSummary>;

export const ChangedFile = z.object({
  kind: z.enum(['added', 'modified', 'deleted', 'renamed']),
  path: z.string().describe('the path now (renamed: its new name)'),
  from: z.string().nullable().describe('renamed: the old name'),
  type: z.string(),
  size: z.string().describe('sizes, for people: "12 B → 40 B"'),
});
export type ChangedFile = z.infer<typeof ChangedFile>;

export const Output = z.object({
  text: z.string(),
  bytes: z.number().nullable().describe('everything the command wrote (finished runs)'),
  truncated: z.boolean(),
});

export const RunDetail = z.object({
  summary: RunSummary,
  surface: z.string(),
  cwd: z.string().nullable(),
  stdout: Output,
  stderr: Output,
  decision: z
    .object({
      action: z.string(),
      categories: z.array(z.string()),
      reason: z.string().nullable(),
      rule: z.string().nullable(),
      parts: z.array(z.object({ command: z.string(), action: z.string(), reason: z.string() })),
    })
    .nullable(),
  approval: z.string().nullable().describe('how the approval was settled, in words'),
  checkpoint: z.string().nullable(),
  /** Whether "Restore to before this run" can work, and why not when it cannot. */
  restore: z.object({ enabled: z.boolean(), reason: z.string() }),
  changes: z.array(ChangedFile),
  error: z.string().nullable(),
  states: z.array(z.string()),
});
export type RunDetail = z.infer<typeof RunDetail>;

export const FileDiff = z.object({
  path: z.string(),
  /** A unified diff (before this run → now), or why there is none (binary, too large, no checkpoint). */
  patch: z.string().nullable(),
  note: z.string().nullable(),
});
export type FileDiff = z.infer<typeof FileDiff>;

/** Extension → webview. */
export const ToWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('runs'), runs: z.array(RunSummary), hostState: z.string() }),
  z.object({ type: z.literal('detail'), run: RunDetail.nullable() }),
  z.object({ type: z.literal('diffs'), id: z.string(), files: z.array(FileDiff) }),
  z.object({ type: z.literal('select'), id: z.string() }),
]);
export type ToWebview = z.infer<typeof ToWebview>;

/** Webview → extension. */
export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), selected: z.string().nullable() }),
  z.object({ type: z.literal('select'), id: z.string() }),
  z.object({ type: z.literal('openDiff'), id: z.string(), path: z.string() }),
  z.object({ type: z.literal('openChanges'), id: z.string() }),
  z.object({ type: z.literal('restore'), id: z.string() }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

/** What the webview keeps across hide/show (vscode.setState): the run shown and the tab open. */
export const WebviewState = z.object({ selected: z.string().nullable(), tab: z.enum(['output', 'changes', 'decision']) });
export type WebviewState = z.infer<typeof WebviewState>;
