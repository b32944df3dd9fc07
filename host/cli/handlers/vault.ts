/** Handlers of `avfs vault …`: parse → one operation → render. */
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import { checkBackend } from '../../store/backend';
import type { Quotas, VaultDamage, VaultSummary } from '../../protocol/vault';
import { type CliContext, humanBytes, parseCount, table } from '../context';

function readQuotaOptions(o: Record<string, string | undefined>): Partial<Quotas> {
  const q: Partial<Quotas> = {};
  if (o.maxSizeMb !== undefined) q.max_size_mb = parseCount('--max-size-mb', o.maxSizeMb);
  if (o.maxFiles !== undefined) q.max_files = parseCount('--max-files', o.maxFiles);
  if (o.maxFileSizeMb !== undefined) q.max_file_size_mb = parseCount('--max-file-size-mb', o.maxFileSizeMb);
  return q;
}

/** The rows `vault info` adds for a vault a read found damaged: what, where, and the way back. */
function damageRows(d: VaultDamage): string[][] {
  return [
    ['damaged', `since ${d.found_at}: chunk ${d.chunk.slice(0, 16)}… does not match its SHA-256`],
    ['  files', d.files.join(', ') || '-'],
    ['  checkpoints', d.checkpoints.join(', ') || '-'],
    ['  recover', d.recovery],
  ];
}

function renderList(vaults: VaultSummary[]): string {
  if (vaults.length === 0) return "no vaults yet: run 'avfs vault create <name>'";
  const rows: string[][] = [['', 'NAME', 'SIZE', 'FILES', 'ON DISK', 'BACKEND', 'WHERE']];
  const where = (v: VaultSummary) => (v.backend === 'postgres' ? v.location : 'this home');
  const byParent = new Map<string | null, VaultSummary[]>();
  const parentOf = (v: VaultSummary) => (v.status === 'ok' ? v.parent : null);
  for (const v of vaults) {
    const p = parentOf(v);
    const key = p && vaults.some((x) => x.name === p) ? p : null;
    byParent.set(key, [...(byParent.get(key) ?? []), v]);
  }
  const walk = (parent: string | null, depth: number): void => {
    for (const v of byParent.get(parent) ?? []) {
      const name = '  '.repeat(depth) + (depth ? '└ ' : '') + v.name;
      if (v.status === 'ok') rows.push([v.current ? '*' : '', name, humanBytes(v.size), String(v.files), humanBytes(v.size_on_disk), v.backend, where(v)]);
      else rows.push([v.current ? '*' : '', name, 'unreadable', '-', humanBytes(v.size_on_disk), v.backend, where(v), v.reason]);
      walk(v.name, depth + 1);
    }
  };
  walk(null, 0);
  return table(rows);
}

async function ask(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}

export const vaultHandlers = {
  'vault.create': async (ctx: CliContext, name: string, opts: Record<string, string | undefined> & { use: boolean }, cmd: Command) => {
    const backend = opts.backend === undefined ? undefined : checkBackend(opts.backend);
    if (opts.from !== undefined) {
      const exclude = (opts as unknown as { exclude?: string[] }).exclude ?? [];
      const f = await ctx.call('project/create', { name, host_path: opts.from, host_cwd: process.cwd(), exclude, quotas: readQuotaOptions(opts), use: opts.use, backend });
      ctx.print(cmd, f, () =>
        `created vault ${name} from ${f.base.source}: ${f.files_imported} files, ${f.dirs_created} directories, ${f.symlinks} symlinks (${humanBytes(f.total_bytes)})` +
        `${f.base.git_commit ? `; base commit ${f.base.git_commit.slice(0, 12)}` : ''}${f.current ? ' (now current)' : ''}`,
      );
      return;
    }
    if (opts.exclude !== undefined) throw new AvfsError('InvalidInput', '--exclude goes with --from');
    const r = await ctx.call('vault/create', { name, quotas: readQuotaOptions(opts), use: opts.use, backend, ...(opts.url !== undefined ? { url: opts.url } : {}) });
    ctx.print(cmd, r, () => `created vault ${name}${r.backend === 'postgres' ? ` on ${r.location}` : ''}${r.current ? ' (now current)' : ''}`);
  },

  'vault.attach': async (ctx: CliContext, name: string, opts: { backend: string; url: string; use: boolean }, cmd: Command) => {
    const backend = checkBackend(opts.backend);
    if (backend !== 'postgres') throw new AvfsError('InvalidInput', `only a vault on a server can be attached (--backend postgres), not ${backend}`, { backend });
    const r = await ctx.call('vault/attach', { name, backend, url: opts.url, use: opts.use });
    ctx.print(cmd, r, () => `attached vault ${name} on ${r.location}${r.current ? ' (now current)' : ''}`);
  },

  'vault.list': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('vault/list', {});
    ctx.print(cmd, r, () => renderList(r.vaults));
  },

  'vault.info': async (ctx: CliContext, name: string | undefined, _opts: unknown, cmd: Command) => {
    const given = name ?? ctx.vault(cmd);
    const info = await ctx.call('vault/info', given !== undefined ? { name: given } : {});
    ctx.print(cmd, info, () =>
      table([
        ['name', info.name + (info.current ? ' (current)' : '')],
        ['path', info.path],
        ['backend', info.backend],
        ['location', info.location],
        ['created', info.created_at ?? '-'],
        ['size', `${humanBytes(info.size)} in ${info.files} entries`],
        ['on disk', humanBytes(info.size_on_disk)],
        ['parent', info.parent ?? '-'],
        ['forks', info.forks.join(', ') || '-'],
        ['checkpoints', String(info.checkpoints.length)],
        ['quotas', Object.entries(info.quotas).map(([k, v]) => `${k}=${v ?? 'none'}`).join(' ')],
        ...(info.damaged ? damageRows(info.damaged) : []),
      ]),
    );
  },

  'vault.use': async (ctx: CliContext, name: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('vault/use', { name });
    ctx.print(cmd, r, () => `now using vault ${name}`);
  },

  'vault.fork': async (ctx: CliContext, source: string, name: string, opts: { use?: boolean }, cmd: Command) => {
    const r = await ctx.call('vault/fork', { source, name, use: !!opts.use });
    ctx.print(cmd, r, () => `forked ${source} into ${name} in ${r.duration_ms} ms${r.current ? ' (now current)' : ''}`);
  },

  'vault.convert': async (ctx: CliContext, name: string, opts: { backend: string }, cmd: Command) => {
    const r = await ctx.call('vault/convert', { name, backend: checkBackend(opts.backend) });
    ctx.print(cmd, r, () => `converted vault ${name} from ${r.from} to ${r.to}: ${r.files} files, ${r.checkpoints} checkpoints, ${r.chunks} chunks, verified (${r.duration_ms} ms)`);
  },

  'vault.upgrade': async (ctx: CliContext, name: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('vault/upgrade', { name });
    ctx.print(cmd, r, () => (r.upgraded ? `upgraded vault ${name} from schema ${r.from} to ${r.to}` : `vault ${name} is up to date (schema ${r.to})`));
  },

  'vault.delete': async (ctx: CliContext, name: string, opts: { yes?: boolean; flatten?: boolean }, cmd: Command) => {
    if (!opts.yes && !ctx.globals(cmd).json && process.stdin.isTTY) {
      if (!/^y(es)?$/i.test((await ask(`delete vault ${name} and all its files? [y/N] `)).trim())) {
        throw new AvfsError('InvalidInput', 'deletion cancelled', { vault: name });
      }
    }
    const r = await ctx.call('vault/delete', { name, flatten: !!opts.flatten });
    ctx.print(cmd, r, () => `deleted vault ${name}${r.flattened.length ? ` (flattened into ${r.flattened.join(', ')})` : ''}`);
  },
};
