/** Whole-vault commands: import, export, quota, stats, gc (handlers: ../handlers/store.ts). */
import type { Command } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  example(
    program
      .command('import <hostPath> [vaultDir]')
      .description('copy a host file or directory into the vault (modes, mtimes, symlinks, hard links, FIFOs and sockets kept; devices skipped and listed)')
      .option('-f, --force', 'replace vault entries that exist (directories are merged)')
      .action(act('store.import')),
    'avfs import ./my-project /',
    'avfs import notes.txt /notes.txt --force',
  );
  example(
    program
      .command('export <vaultPath> <hostDir>')
      .description('copy a vault file or directory out to the host')
      .option('-f, --force', 'replace host files that exist')
      .action(act('store.export')),
    'avfs export /src ./out',
  );

  const quota = program.command('quota').description('show or change the vault\'s quotas');
  example(quota.command('show', { isDefault: true }).description('show quotas and usage').action(act('store.quotaShow')), 'avfs quota --json');
  example(
    quota.command('set <key> <value>').description('set a quota: max_size_mb, max_files or max_file_size_mb').action(act('store.quotaSet')),
    'avfs quota set max_files 10000',
  );
  example(quota.command('clear <key>').description('remove a quota').action(act('store.quotaClear')), 'avfs quota clear max_size_mb');

  example(
    program.command('stats').description('what the vault holds: entries by type, logical bytes, stored chunks, checkpoints').action(act('store.stats')),
    'avfs stats --json',
  );
  example(
    program
      .command('gc')
      .description('delete chunks that nothing references any more and give the space back')
      .option('--dry-run', 'only count what would be freed')
      .action(act('store.gc')),
    'avfs gc --dry-run',
  );
}
