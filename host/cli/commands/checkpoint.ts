/** `avfs checkpoint save|list|info|restore|delete|retention|prune|diff` (alias `snapshot`) and `avfs audit` (handlers: ../handlers/checkpoint.ts). */
import type { Command } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  const cp = program.command('checkpoint').alias('snapshot').description('rollback points: save, list, restore, diff, delete');

  example(
    cp
      .command('save [name]')
      .description('save the current tree as a checkpoint (metadata only: cheap whatever the bytes)')
      .option('-m, --message <text>', 'a description')
      .option('-d, --description <text>', 'same as --message')
      .action(act('checkpoint.save')),
    'avfs checkpoint save before-refactor -m "green tests"',
  );
  example(cp.command('list').description('list checkpoints, oldest first').action(act('checkpoint.list')), 'avfs checkpoint list --json');
  example(cp.command('info <name>').description('show one checkpoint').action(act('checkpoint.info')), 'avfs checkpoint info before-refactor');
  example(
    cp
      .command('restore <name>')
      .description('put the tree back as it was at a checkpoint (the current tree is saved first, so this can be undone)')
      .option('--force', 'restore even if the restored tree passes a quota (writes stay refused until usage is under it again)')
      .action(act('checkpoint.restore')),
    'avfs checkpoint restore before-refactor',
  );
  example(
    cp.command('delete <name>').description('delete a checkpoint (run `avfs gc` to free the chunks only it referenced)').action(act('checkpoint.delete')),
    'avfs checkpoint delete before-refactor',
  );
  example(
    cp
      .command('retention')
      .description('which automatic checkpoints (before proxy exec runs, before restores) are kept: show it, or set it (applied after each automatic checkpoint, and by prune)')
      .option('--keep-last <n>', 'keep the last N automatic checkpoints (none: drop this rule)')
      .option('--max-age <age>', 'keep automatic checkpoints younger than AGE: 30m, 12h, 7d, 2w (none: drop this rule)')
      .option('--off', 'keep every automatic checkpoint')
      .option('--hold-recent <age>', "how long after a run ended its restore point is held whatever the rules: 10m (the default), 1h, 0 (only while the run is pending)")
      .action(act('checkpoint.retention')),
    'avfs checkpoint retention --keep-last 20 --max-age 7d',
    'avfs checkpoint retention --json',
  );
  example(
    cp
      .command('prune')
      .description('delete the automatic checkpoints the retention does not keep (named ones stay; a pending or recent run\'s restore point is held)')
      .option('--dry-run', 'say what would go and the bytes it would give back, delete nothing')
      .option('--gc', 'then run gc, giving the space back to the file system')
      .action(act('checkpoint.prune')),
    'avfs checkpoint prune --dry-run',
    'avfs checkpoint prune --gc',
  );
  example(
    cp
      .command('diff <from> [to]')
      .description('what changed between two checkpoints, or from a checkpoint to the current tree')
      .option('-p, --patch', 'add unified diffs of the text files that changed')
      .action(act('checkpoint.diff')),
    'avfs checkpoint diff before-refactor --patch',
    'avfs checkpoint diff cp-a cp-b --json',
  );
  example(
    program
      .command('audit')
      .description('the vault\'s audit trail: every mutation, checkpoint and exec decision, newest first')
      .option('-n, --limit <n>', 'at most N entries', '50')
      .option('--since <time>', 'only entries at or after TIME (unix seconds, RFC 3339, or YYYY-MM-DD)')
      .action(act('checkpoint.audit')),
    'avfs audit --limit 20 --since 2026-01-01',
  );
}
