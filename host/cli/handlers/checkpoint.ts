/** Handlers of `avfs checkpoint …` and `avfs audit`, and the change summary as people read it. */
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import type { ChangeSummary } from '../../protocol/changes';
import { type CliContext, parseCount, table } from '../context';

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

function parseSince(value: string): number {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new AvfsError('InvalidInput', `--since must be unix seconds, RFC 3339 or YYYY-MM-DD, got ${JSON.stringify(value)}`, { field: 'since', value });
  }
  return ms;
}

export const checkpointHandlers = {
  'checkpoint.save': async (ctx: CliContext, name: string | undefined, opts: { message?: string; description?: string }, cmd: Command) => {
    const description = opts.message ?? opts.description;
    const info = await ctx.call('checkpoint/save', { ...ctx.inVault(cmd), ...(name !== undefined ? { name } : {}), ...(description !== undefined ? { description } : {}) });
    ctx.print(cmd, info, () => `saved checkpoint ${info.name} (${info.file_count} entries, ${info.total_size_human})`);
  },

  'checkpoint.list': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('checkpoint/list', ctx.inVault(cmd));
    ctx.print(cmd, r, () =>
      r.checkpoints.length === 0
        ? 'no checkpoints'
        : table([
            ['NAME', 'CREATED', 'KIND', 'ENTRIES', 'SIZE', 'ALONE', 'DESCRIPTION'],
            ...r.checkpoints.map((c) => [c.name, c.created_at, c.auto ? 'auto' : 'named', String(c.file_count), c.total_size_human, c.alone_size_human ?? '-', c.description ?? '']),
          ]) + '\nALONE: what deleting the checkpoint (then `avfs gc`) gives back',
    );
  },

  'checkpoint.retention': async (ctx: CliContext, opts: { keepLast?: string; maxAge?: string; off?: boolean; holdRecent?: string }, cmd: Command) => {
    const none = (v: string | undefined) => (v === undefined ? undefined : v.trim().toLowerCase() === 'none' ? null : v);
    const keep = none(opts.keepLast);
    const r = await ctx.call('checkpoint/retention', {
      ...ctx.inVault(cmd),
      ...(keep !== undefined ? { keep_last: keep === null ? null : parseCount('--keep-last', keep) } : {}),
      ...(opts.maxAge !== undefined ? { max_age: none(opts.maxAge) ?? null } : {}),
      ...(opts.holdRecent !== undefined ? { hold_recent: opts.holdRecent } : {}),
      off: !!opts.off,
    });
    ctx.print(cmd, r, () => `retention: ${r.description}`);
  },

  'checkpoint.prune': async (ctx: CliContext, opts: { dryRun?: boolean; gc?: boolean }, cmd: Command) => {
    const r = await ctx.call('checkpoint/prune', { ...ctx.inVault(cmd), dry_run: !!opts.dryRun, gc: !!opts.gc });
    ctx.print(cmd, r, () => {
      const lines = [`retention: ${r.retention.description}`];
      for (const c of r.pruned) lines.push(`${r.dry_run ? 'would delete' : 'deleted'} ${c.name}  (${c.created_at}, alone ${c.alone_size_human ?? '-'})`);
      for (const h of r.held) lines.push(`held ${h.name}: ${h.reason}`);
      const n = r.pruned.length;
      lines.push(`${r.dry_run ? 'would prune' : 'pruned'} ${n} automatic checkpoint${n === 1 ? '' : 's'}, kept ${r.kept}, held ${r.held.length}; they held ${r.freed_size_human} alone`);
      if (r.gc) lines.push(`gc: ${r.gc.dry_run ? 'would free' : 'freed'} ${r.gc.orphans_found} chunks, ${r.gc.bytes_freed} B`);
      else if (n > 0 && !r.dry_run) lines.push('run `avfs gc` (or prune with --gc) to give the space back');
      return lines.join('\n');
    });
  },

  'checkpoint.info': async (ctx: CliContext, name: string, _opts: unknown, cmd: Command) => {
    const info = await ctx.call('checkpoint/info', { ...ctx.inVault(cmd), name });
    ctx.print(cmd, info, () => table(Object.entries(info).map(([k, val]) => [k, String(val ?? '-')])));
  },

  'checkpoint.restore': async (ctx: CliContext, name: string, opts: { force?: boolean }, cmd: Command) => {
    const r = await ctx.call('checkpoint/restore', { ...ctx.inVault(cmd), name, force: !!opts.force });
    const t = r.changes;
    ctx.print(cmd, r, () => `restored ${r.checkpoint}: ${t.added} added, ${t.modified} modified, ${t.deleted} deleted, ${t.renamed} renamed\nundo with: avfs checkpoint restore ${r.undo_checkpoint}`);
  },

  'checkpoint.delete': async (ctx: CliContext, name: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('checkpoint/delete', { ...ctx.inVault(cmd), name });
    ctx.print(cmd, r, () => `deleted checkpoint ${name}`);
  },

  'checkpoint.diff': async (ctx: CliContext, from: string, to: string | undefined, opts: { patch?: boolean }, cmd: Command) => {
    const summary = await ctx.call('checkpoint/diff', { ...ctx.inVault(cmd), from, to: to ?? 'current', patch: !!opts.patch });
    ctx.print(cmd, summary, () => renderSummary(summary));
  },

  'checkpoint.audit': async (ctx: CliContext, opts: { limit: string; since?: string }, cmd: Command) => {
    const limit = parseCount('--limit', opts.limit);
    const since_ms = opts.since === undefined ? 0 : parseSince(opts.since);
    const r = await ctx.call('audit/list', { ...ctx.inVault(cmd), limit, since_ms });
    ctx.print(cmd, r, () =>
      table([
        ['ID', 'TIME', 'SURFACE', 'OPERATION', 'PATH'],
        ...r.entries.map((e) => [String(e.id), e.timestamp, e.surface, e.operation, [e.path, e.path2].filter(Boolean).join(' → ')]),
      ]),
    );
  },
};
