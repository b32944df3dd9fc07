/** `avfs checkpoint save|list|info|restore|delete|diff` (alias `snapshot`) and `avfs audit`. */
import { restoreCheckpoint } from '../../ops/checkpoints';
import { AvfsError } from '../../protocol/errors';
import type { Command } from 'commander';
import type { AuditEntry, ChangeSummary, CheckpointInfo } from '../../protocol/changes';
import type { CheckpointRow } from '../../store/checkpoints';
import { diffTrees, type TreeRef } from '../../store/diff';
import type { Vault } from '../../store/vault';
import { action, type CliContext, example, humanBytes, parseCount, table } from '../context';

export function checkpointInfo(row: CheckpointRow): CheckpointInfo {
  return {
    name: row.name,
    created_at: new Date(row.created_ms).toISOString(),
    description: row.description,
    auto: row.auto === 1,
    file_count: row.file_count,
    total_size: row.total_bytes,
    total_size_human: humanBytes(row.total_bytes),
  };
}

function treeRef(v: Vault, name: string | undefined): TreeRef {
  if (name === undefined || name === 'current') return { kind: 'live' };
  const row = v.checkpoints.get(name);
  return { kind: 'checkpoint', id: row.id, name: row.name };
}

/** Added or deleted entries with those inside an added or deleted directory folded into it. */
function folded(entries: ChangeSummary['added']): Array<{ path: string; type: string; size: number; inside: number }> {
  const dirs = entries.filter((e) => e.type === 'directory').map((e) => e.path);
  const top = entries.filter((e) => !dirs.some((d) => e.path.startsWith(d + '/')));
  return top.map((e) => ({ ...e, inside: e.type === 'directory' ? entries.filter((x) => x.path.startsWith(e.path + '/')).length : 0 }));
}

export function renderSummary(s: ChangeSummary): string {
  const lines: string[] = [];
  for (const e of folded(s.added)) {
    lines.push(e.type === 'directory' ? `A  ${e.path}/${e.inside ? `  (+${e.inside} entries)` : ''}` : `A  ${e.path}  (${e.size} B)`);
  }
  for (const e of s.modified) {
    const what = [e.content_changed ? `${e.size_before} → ${e.size_after} B` : '', e.mode_after ? `mode ${e.mode_before} → ${e.mode_after}` : ''].filter(Boolean).join(', ');
    lines.push(`M  ${e.path}  (${what})`);
  }
  for (const e of s.renamed) lines.push(`R  ${e.from} → ${e.to}${e.content_changed ? ' (modified)' : ''}`);
  for (const e of folded(s.deleted)) lines.push(e.type === 'directory' ? `D  ${e.path}/${e.inside ? `  (-${e.inside} entries)` : ''}` : `D  ${e.path}`);
  const t = s.totals;
  lines.push(`${s.from} → ${s.to}: ${t.added} added, ${t.modified} modified, ${t.renamed} renamed, ${t.deleted} deleted`);
  if (s.patch) lines.push('', s.patch);
  return lines.join('\n');
}

export function register(program: Command, ctx: CliContext): void {
  const cp = program.command('checkpoint').alias('snapshot').description('rollback points: save, list, restore, diff, delete');

  example(
    cp
      .command('save [name]')
      .description('save the current tree as a checkpoint (metadata only: cheap whatever the bytes)')
      .option('-m, --message <text>', 'a description')
      .option('-d, --description <text>', 'same as --message')
      .action(
        action(ctx, (name: string | undefined, opts: { message?: string; description?: string }, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            const description = opts.message ?? opts.description;
            const row = v.checkpoints.save({ ...(name !== undefined ? { name } : {}), ...(description !== undefined ? { description } : {}) });
            const info = checkpointInfo(row);
            ctx.print(cmd, info, () => `saved checkpoint ${info.name} (${info.file_count} entries, ${info.total_size_human})`);
          });
        }),
      ),
    'avfs checkpoint save before-refactor -m "green tests"',
  );

  example(
    cp
      .command('list')
      .description('list checkpoints, oldest first')
      .action(
        action(ctx, (_opts: unknown, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            const checkpoints = v.checkpoints.list().map(checkpointInfo);
            ctx.print(cmd, { checkpoints }, () =>
              checkpoints.length === 0
                ? 'no checkpoints'
                : table([['NAME', 'CREATED', 'ENTRIES', 'SIZE', 'DESCRIPTION'], ...checkpoints.map((c) => [c.name, c.created_at, String(c.file_count), c.total_size_human, c.description ?? ''])]),
            );
          }, { readonly: true });
        }),
      ),
    'avfs checkpoint list --json',
  );

  example(
    cp
      .command('info <name>')
      .description('show one checkpoint')
      .action(
        action(ctx, (name: string, _opts: unknown, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            const info = checkpointInfo(v.checkpoints.get(name));
            ctx.print(cmd, info, () => table(Object.entries(info).map(([k, val]) => [k, String(val ?? '-')])));
          }, { readonly: true });
        }),
      ),
    'avfs checkpoint info before-refactor',
  );

  example(
    cp
      .command('restore <name>')
      .description('put the tree back as it was at a checkpoint (the current tree is saved first, so this can be undone)')
      .option('--force', 'restore even if the restored tree passes a quota (writes stay refused until usage is under it again)')
      .action(
        action(ctx, (name: string, opts: { force?: boolean }, cmd: Command) => {
          const r = restoreCheckpoint(ctx.home, ctx.home.resolve(ctx.globals(cmd).vault), name, { force: !!opts.force });
          const t = r.changes;
          ctx.print(cmd, r, () => `restored ${r.checkpoint}: ${t.added} added, ${t.modified} modified, ${t.deleted} deleted, ${t.renamed} renamed\nundo with: avfs checkpoint restore ${r.undo_checkpoint}`);
        }),
      ),
    'avfs checkpoint restore before-refactor',
  );

  example(
    cp
      .command('delete <name>')
      .description('delete a checkpoint (run `avfs gc` to free the chunks only it referenced)')
      .action(
        action(ctx, (name: string, _opts: unknown, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            v.checkpoints.delete(name);
            ctx.print(cmd, { action: 'delete', name }, () => `deleted checkpoint ${name}`);
          });
        }),
      ),
    'avfs checkpoint delete before-refactor',
  );

  example(
    cp
      .command('diff <from> [to]')
      .description('what changed between two checkpoints, or from a checkpoint to the current tree')
      .option('-p, --patch', 'add unified diffs of the text files that changed')
      .action(
        action(ctx, (from: string, to: string | undefined, opts: { patch?: boolean }, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            const summary = diffTrees(v.db, v.inodes.chunks, treeRef(v, from), treeRef(v, to), { patch: !!opts.patch });
            ctx.print(cmd, summary, () => renderSummary(summary));
          }, { readonly: true });
        }),
      ),
    'avfs checkpoint diff before-refactor --patch',
    'avfs checkpoint diff cp-a cp-b --json',
  );

  example(
    program
      .command('audit')
      .description('the vault\'s audit trail: every mutation, checkpoint and exec decision, newest first')
      .option('-n, --limit <n>', 'at most N entries', '50')
      .option('--since <time>', 'only entries at or after TIME (unix seconds, RFC 3339, or YYYY-MM-DD)')
      .action(
        action(ctx, (opts: { limit: string; since?: string }, cmd: Command) => {
          const limit = parseCount('--limit', opts.limit);
          const since = opts.since === undefined ? 0 : parseSince(opts.since);
          ctx.withVault(cmd, (v) => {
            const rows = v.db
              .prepare('SELECT seq, ts_ms, op, path, path2, size, surface, details FROM journal WHERE ts_ms >= ? ORDER BY seq DESC LIMIT ?')
              .all(since, limit) as Array<{ seq: number; ts_ms: number; op: string; path: string | null; path2: string | null; size: number | null; surface: string; details: string | null }>;
            const total = (v.db.prepare('SELECT COUNT(*) AS n FROM journal WHERE ts_ms >= ?').get(since) as { n: number }).n;
            const entries: AuditEntry[] = rows.map((r) => ({
              id: r.seq,
              timestamp: new Date(r.ts_ms).toISOString(),
              operation: r.op,
              path: r.path,
              path2: r.path2,
              size: r.size,
              surface: r.surface,
              details: r.details === null ? null : (JSON.parse(r.details) as unknown),
            }));
            ctx.print(cmd, { entries, total_count: total }, () =>
              table([
                ['ID', 'TIME', 'SURFACE', 'OPERATION', 'PATH'],
                ...entries.map((e) => [String(e.id), e.timestamp, e.surface, e.operation, [e.path, e.path2].filter(Boolean).join(' → ')]),
              ]),
            );
          }, { readonly: true });
        }),
      ),
    'avfs audit --limit 20 --since 2026-01-01',
  );
}

function parseSince(value: string): number {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new AvfsError(
      'InvalidInput',
      `--since must be unix seconds, RFC 3339 or YYYY-MM-DD, got ${JSON.stringify(value)}`,
      { field: 'since', value },
    );
  }
  return ms;
}
