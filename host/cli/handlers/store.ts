/** Handlers of the whole-vault commands: import, export, quota, stats, gc. */
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import { QuotaKey } from '../../protocol/vault';
import { fromCliPath } from '../../vfs/paths';
import { type CliContext, humanBytes, parseCount, table } from '../context';

function parseQuotaKey(key: string): QuotaKey {
  const r = QuotaKey.safeParse(key);
  if (!r.success) throw new AvfsError('InvalidInput', `unknown quota ${JSON.stringify(key)}: use one of ${QuotaKey.options.join(', ')}`, { key });
  return r.data;
}

export const storeHandlers = {
  /** Host paths are taken from this process's working directory, wherever the operation runs. */
  'store.import': async (ctx: CliContext, hostPath: string, vaultDir: string | undefined, opts: { force?: boolean }, cmd: Command) => {
    const s = await ctx.call('fs/import', { ...ctx.inVault(cmd), host_path: hostPath, host_cwd: process.cwd(), path: fromCliPath(vaultDir ?? '/'), force: !!opts.force });
    ctx.print(cmd, s, () =>
      `imported ${s.files_imported} files, ${s.dirs_created} directories, ${s.symlinks} symlinks, ${s.special_files} fifos/sockets (${humanBytes(s.total_bytes)}) into ${s.vfs_path}` +
      s.skipped.map((x) => `\nskipped ${x.path} (${x.type}): ${x.reason}`).join(''),
    );
  },

  'store.export': async (ctx: CliContext, vaultPath: string, hostDir: string, opts: { force?: boolean }, cmd: Command) => {
    const s = await ctx.call('fs/export', { ...ctx.inVault(cmd), path: fromCliPath(vaultPath), host_path: hostDir, host_cwd: process.cwd(), force: !!opts.force });
    ctx.print(cmd, s, () => `exported ${s.files_exported} files, ${s.dirs_created} directories, ${s.symlinks} symlinks, ${s.special_files} fifos/sockets (${humanBytes(s.total_bytes)}) to ${hostDir}`);
  },

  'store.quotaShow': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const s = await ctx.call('quota/get', ctx.inVault(cmd));
    ctx.print(cmd, s, () =>
      table([
        ['QUOTA', 'LIMIT', 'USED'],
        ['max_size_mb', String(s.max_size_mb ?? 'none'), `${s.current_size_human}${s.size_usage_percent !== null ? ` (${s.size_usage_percent}%)` : ''}`],
        ['max_files', String(s.max_files ?? 'none'), `${s.current_files}${s.files_usage_percent !== null ? ` (${s.files_usage_percent}%)` : ''}`],
        ['max_file_size_mb', String(s.max_file_size_mb ?? 'none'), '-'],
      ]),
    );
  },

  'store.quotaSet': async (ctx: CliContext, key: string, value: string, _opts: unknown, cmd: Command) => {
    const k = parseQuotaKey(key);
    const r = await ctx.call('quota/set', { ...ctx.inVault(cmd), key: k, value: parseCount(k, value) });
    ctx.print(cmd, r, () => `${r.key} = ${r.value}`);
  },

  'store.quotaClear': async (ctx: CliContext, key: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('quota/clear', { ...ctx.inVault(cmd), key: parseQuotaKey(key) });
    ctx.print(cmd, r, () => `${r.key} cleared`);
  },

  'store.stats': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const stats = await ctx.call('vault/stats', ctx.inVault(cmd));
    ctx.print(cmd, stats, () => table(Object.entries(stats).map(([k, n]) => [k, k.includes('bytes') || k === 'size_on_disk' ? humanBytes(n) : String(n)])));
  },

  'store.gc': async (ctx: CliContext, opts: { dryRun?: boolean }, cmd: Command) => {
    const s = await ctx.call('vault/gc', { ...ctx.inVault(cmd), dry_run: !!opts.dryRun });
    ctx.print(cmd, s, () => `${s.dry_run ? 'would remove' : 'removed'} ${s.orphans_found} of ${s.chunks_total} chunks (${humanBytes(s.bytes_freed)})`);
  },
};
