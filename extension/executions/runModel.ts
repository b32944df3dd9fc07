// What the executions view shows of a run, as plain data: its row (command, vault, decision,
// state, exit code, duration), its detail (output with truncation, decision and reasons, approval,
// checkpoint, changed files, whether it can be undone and why not), built from the host's ExecRun
// (running: output so far; finished: the envelope). Pure (no `vscode` import): unit-tested under
// node:test; executionsView.ts sends these to the webview.
import type { ChangeSummary } from '../../host/protocol/changes';
import type { ApprovalRecord } from '../../host/protocol/exec';
import type { ExecRun } from '../../host/protocol/host';
import type { ChangedFile, RunDetail, RunSummary } from '../../webview/protocol';
import { formatBytes } from '../format';

/**
 * A run is `lost` when it was going on a vault host that is gone (crashed or restarted): the new
 * host does not list it and no envelope will come, so it is shown as lost, not "running…" forever.
 */
export const LOST = 'lost';

export function runSummary(run: ExecRun, lost = false): RunSummary {
  const r = run.envelope?.result;
  return {
    id: run.id,
    vault: r?.vault ?? run.vault,
    command: run.command,
    state: lost ? LOST : run.state,
    running: !lost && run.envelope === null,
    decision: r?.decision?.action ?? null,
    exit_code: r?.exit_code ?? null,
    duration_ms: r ? r.total_ms : null,
    started_at: run.started_at,
    changed: r?.changed_files.length ?? 0,
  };
}

/** The files a run changed, in the order the view lists them: modified, renamed, added, deleted. */
export function changedFiles(changes: ChangeSummary | null): ChangedFile[] {
  if (!changes) return [];
  return [
    ...changes.modified.map((m) => ({ kind: 'modified' as const, path: m.path, from: null, type: m.type, size: `${formatBytes(m.size_before)} → ${formatBytes(m.size_after)}` })),
    ...changes.renamed.map((r) => ({ kind: 'renamed' as const, path: r.to, from: r.from, type: r.type, size: formatBytes(r.size) })),
    ...changes.added.map((a) => ({ kind: 'added' as const, path: a.path, from: null, type: a.type, size: formatBytes(a.size) })),
    ...changes.deleted.map((d) => ({ kind: 'deleted' as const, path: d.path, from: null, type: d.type, size: formatBytes(d.size) })),
  ];
}

/**
 * Whether `path` is one of the files a finished run changed: the only paths the webview's Open Diff
 * may open (a message naming any other opens nothing).
 */
export function isChangedPath(run: ExecRun | undefined, path: string): boolean {
  const r = run?.envelope?.result;
  if (!r) return false;
  return r.changed_files.includes(path) || changedFiles(r.changes).some((f) => f.path === path);
}

/**
 * Whether "Restore to before this run" can work. It restores the checkpoint the run took before
 * the command ran; a run without one (the policy said `allow`, or `--checkpoint never`) has no
 * saved "before": the action is disabled and says so, rather than restoring something else.
 */
export function restoreAvailability(run: ExecRun, lost = false): { enabled: boolean; reason: string } {
  const r = run.envelope?.result;
  if (!r && lost) return { enabled: false, reason: 'The vault host stopped while this run was going (it crashed or was restarted): how it ended is unknown, and no checkpoint of it is known to restore.' };
  if (!r) return { enabled: false, reason: 'The run is still going: wait for it to finish.' };
  if (r.checkpoint && r.vault) return { enabled: true, reason: `Restores vault ${r.vault} to checkpoint ${r.checkpoint}, taken just before the command ran (the current tree is saved first, so this can be undone).` };
  if (r.state === 'denied' || r.exit_code === null) return { enabled: false, reason: 'The command never ran: there is nothing to undo.' };
  const why =
    run.envelope?.request.checkpoint_mode === 'never'
      ? 'it was run with --checkpoint never'
      : `the policy let it run without one (${r.decision?.action ?? 'allow'})`;
  return {
    enabled: false,
    reason: `This run took no checkpoint (${why}), so the tree before it was not kept. Run commands with --checkpoint always to be able to undo any run.`,
  };
}

export function approvalText(a: ApprovalRecord | null | undefined): string | null {
  if (!a) return null;
  const by = a.by ? ` by ${a.by}` : '';
  const waited = ` after ${(a.waited_ms / 1000).toFixed(1)} s`;
  switch (a.outcome) {
    case 'approved':
      return `Approved${a.scope === 'always' ? ' (always allow' + (a.rule ? `: rule ${a.rule}` : '') + ')' : ' once'}${by}${waited}`;
    case 'denied':
      return `Denied${by}${waited}`;
    case 'timed_out':
      return `Nobody answered in time: denied${waited}`;
    case 'no_approver':
      return 'Denied: no approver was connected';
    case 'cancelled':
      return `Cancelled while waiting for approval${waited}`;
  }
}

export function runDetail(run: ExecRun, lost = false): RunDetail {
  const env = run.envelope;
  const r = env?.result;
  const decision = r?.decision ?? null;
  return {
    summary: runSummary(run, lost),
    surface: run.surface,
    cwd: r?.cwd ?? null,
    stdout: r ? { text: r.stdout, bytes: r.stdout_bytes, truncated: r.stdout_truncated } : { text: run.stdout, bytes: null, truncated: run.output_truncated },
    stderr: r ? { text: r.stderr, bytes: r.stderr_bytes, truncated: r.stderr_truncated } : { text: run.stderr, bytes: null, truncated: run.output_truncated },
    decision: decision && {
      action: decision.action,
      categories: decision.categories,
      reason: decision.reason,
      rule: decision.rule,
      parts: decision.parts.map((p) => ({ command: p.command, action: p.action, reason: p.reason })),
    },
    approval: approvalText(r?.approval),
    checkpoint: r?.checkpoint ?? null,
    restore: restoreAvailability(run, lost),
    changes: changedFiles(r?.changes ?? null),
    error: r?.error ? r.error.message : null,
    states: r?.states ?? (lost ? [run.state, LOST] : [run.state]),
  };
}
