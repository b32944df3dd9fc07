/** Whole-vault commands: import, export, quota, gc. */
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import { QuotaKey, type QuotaStatus } from '../../protocol/vault';
import { writeTxn } from '../../store/db';
import { descendantRefs } from '../../store/forks';
import { collectGarbage } from '../../store/gc';
import type { Vault } from '../../store/vault';
import { fromCliPath } from '../../vfs/paths';
import { exportTree, importTree } from '../../vfs/transfer';
import { action, type CliContext, example, humanBytes, parseCount, table } from '../context';

function quotaStatus(v: Vault): QuotaStatus {
  const q = v.inodes.quotas.get();
  const c = v.inodes.counters();
  const pct = (used: number, limit: number | null) => (limit === null || limit === 0 ? null : Math.round((used / limit) * 1000) / 10);
  return {
    ...q,
    current_size_bytes: c.liveBytes,
    current_size_human: humanBytes(c.liveBytes),
    current_files: c.liveInodes,
    size_usage_percent: pct(c.liveBytes, q.max_size_mb === null ? null : q.max_size_mb * 1024 * 1024),
    files_usage_percent: pct(c.liveInodes, q.max_files),
  };
}

function parseQuotaKey(key: string): QuotaKey {
  const r = QuotaKey.safeParse(key);
  if (!r.success) throw new AvfsError('InvalidInput', `unknown quota ${JSON.stringify(key)}: use one of ${QuotaKey.options.join(', ')}`, { key });
  return r.data;
}

export function register(program: Command, ctx: CliContext): void {
  example(
    program
      .command('import <hostPath> [vaultDir]')
      .description('copy a host file or directory into the vault (modes, mtimes, symlinks, hard links, FIFOs and sockets kept; devices skipped and listed)')
      .option('-f, --force', 'replace vault entries that exist (directories are merged)')
      .action(
        action(ctx, (hostPath: string, vaultDir: string | undefined, opts: { force?: boolean }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const dst = fromCliPath(vaultDir ?? '/');
            const s = importTree(vfs, hostPath, dst, { force: !!opts.force });
            ctx.print(
              cmd,
              {
                source: hostPath,
                vfs_path: dst,
                files_imported: s.files,
                dirs_created: s.dirs,
                symlinks: s.symlinks,
                hardlinks: s.hardlinks,
                special_files: s.special,
                total_bytes: s.bytes,
                skipped_count: s.skipped.length,
                skipped: s.skipped,
              },
              () =>
                `imported ${s.files} files, ${s.dirs} directories, ${s.symlinks} symlinks, ${s.special} fifos/sockets (${humanBytes(s.bytes)}) into ${dst}` +
                s.skipped.map((x) => `\nskipped ${x.path} (${x.type}): ${x.reason}`).join(''),
            );
          });
        }),
      ),
    'avfs import ./my-project /',
    'avfs import notes.txt /notes.txt --force',
  );

  example(
    program
      .command('export <vaultPath> <hostDir>')
      .description('copy a vault file or directory out to the host')
      .option('-f, --force', 'replace host files that exist')
      .action(
        action(ctx, (vaultPath: string, hostDir: string, opts: { force?: boolean }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const src = fromCliPath(vaultPath);
            const s = exportTree(vfs, src, hostDir, { force: !!opts.force });
            ctx.print(
              cmd,
              {
                vfs_path: src,
                destination: hostDir,
                files_exported: s.files,
                dirs_created: s.dirs,
                symlinks: s.symlinks,
                hardlinks: s.hardlinks,
                special_files: s.special,
                total_bytes: s.bytes,
              },
              () => `exported ${s.files} files, ${s.dirs} directories, ${s.symlinks} symlinks, ${s.special} fifos/sockets (${humanBytes(s.bytes)}) to ${hostDir}`,
            );
          }, { readonly: true });
        }),
      ),
    'avfs export /src ./out',
  );

  const quota = program.command('quota').description('show or change the vault\'s quotas');
  example(
    quota
      .command('show', { isDefault: true })
      .description('show quotas and usage')
      .action(
        action(ctx, (_opts: unknown, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            const s = quotaStatus(v);
            ctx.print(cmd, s, () =>
              table([
                ['QUOTA', 'LIMIT', 'USED'],
                ['max_size_mb', String(s.max_size_mb ?? 'none'), `${s.current_size_human}${s.size_usage_percent !== null ? ` (${s.size_usage_percent}%)` : ''}`],
                ['max_files', String(s.max_files ?? 'none'), `${s.current_files}${s.files_usage_percent !== null ? ` (${s.files_usage_percent}%)` : ''}`],
                ['max_file_size_mb', String(s.max_file_size_mb ?? 'none'), '-'],
              ]),
            );
          }, { readonly: true });
        }),
      ),
    'avfs quota --json',
  );
  example(
    quota
      .command('set <key> <value>')
      .description('set a quota: max_size_mb, max_files or max_file_size_mb')
      .action(
        action(ctx, (key: string, value: string, _opts: unknown, cmd: Command) => {
          const k = parseQuotaKey(key);
          const n = parseCount(k, value);
          ctx.withVault(cmd, (v) => writeTxn(v.db, () => {
            v.inodes.quotas.set(k, n);
            v.journal.append('quota_set', null, { details: { key: k, value: n } });
          }));
          ctx.print(cmd, { action: 'set', key: k, value: n }, () => `${k} = ${n}`);
        }),
      ),
    'avfs quota set max_files 10000',
  );
  example(
    quota
      .command('clear <key>')
      .description('remove a quota')
      .action(
        action(ctx, (key: string, _opts: unknown, cmd: Command) => {
          const k = parseQuotaKey(key);
          ctx.withVault(cmd, (v) => writeTxn(v.db, () => {
            v.inodes.quotas.clear(k);
            v.journal.append('quota_clear', null, { details: { key: k } });
          }));
          ctx.print(cmd, { action: 'clear', key: k }, () => `${k} cleared`);
        }),
      ),
    'avfs quota clear max_size_mb',
  );

  example(
    program
      .command('stats')
      .description('what the vault holds: entries by type, logical bytes, stored chunks, checkpoints')
      .action(
        action(ctx, (_opts: unknown, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            const count = (sql: string) => (v.db.prepare(sql).get() as { n: number }).n;
            const stats = {
              files: count('SELECT COUNT(*) AS n FROM inodes WHERE (mode & 61440) = 32768'),
              directories: count('SELECT COUNT(*) AS n FROM inodes WHERE (mode & 61440) = 16384 AND ino != 1'),
              symlinks: count('SELECT COUNT(*) AS n FROM inodes WHERE (mode & 61440) = 40960'),
              total_size_bytes: v.inodes.counters().liveBytes,
              content_chunks: count('SELECT COUNT(*) AS n FROM chunks'),
              stored_bytes: count('SELECT COALESCE(SUM(LENGTH(data)), 0) AS n FROM chunks'),
              checkpoints: count('SELECT COUNT(*) AS n FROM checkpoints'),
              journal_entries: count('SELECT COUNT(*) AS n FROM journal'),
              size_on_disk: ctx.home.sizeOnDisk(v.name),
            };
            ctx.print(cmd, stats, () => table(Object.entries(stats).map(([k, n]) => [k, k.includes('bytes') || k === 'size_on_disk' ? humanBytes(n) : String(n)])));
          }, { readonly: true });
        }),
      ),
    'avfs stats --json',
  );

  example(
    program
      .command('gc')
      .description('delete chunks that nothing references any more and give the space back')
      .option('--dry-run', 'only count what would be freed')
      .action(
        action(ctx, (opts: { dryRun?: boolean }, cmd: Command) => {
          ctx.withVault(cmd, (v) => {
            const s = collectGarbage(v.db, {
              dryRun: !!opts.dryRun,
              extraRefs: () => descendantRefs(ctx.home, v.name),
            });
            ctx.print(cmd, s, () => `${opts.dryRun ? 'would remove' : 'removed'} ${s.orphans_found} of ${s.chunks_total} chunks (${humanBytes(s.bytes_freed)})`);
          });
        }),
      ),
    'avfs gc --dry-run',
  );
}
