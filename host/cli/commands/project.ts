/** `avfs apply` and `avfs vault sync`: a vault made from a project, and the way back (handlers: ../handlers/project.ts). */
import { type Command, Option } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  example(
    program
      .command('apply [paths...]')
      .description("bring the vault's changes since its base to the project folder (or only PATHS): three-way, all or nothing")
      .option('--to <dir>', 'the project folder (default: the folder the vault was made from)')
      .option('-n, --dry-run', 'print the plan (added, modified, deleted, renamed, mode changes, conflicts); write nothing')
      .option('--patch', 'with the plan, unified diffs of the text files that change')
      .option('--git-branch <name>', 'commit the changes onto a new branch from the base commit instead (HEAD, index, working tree untouched)')
      .option('-m, --message <text>', 'the commit message with --git-branch')
      .option('--patch-out <file>', 'write a git-apply-able patch of the changes to FILE instead')
      .addOption(
        new Option('--keep <side>', "settle the conflicts at PATHS (every one without PATHS), then apply: vault writes the vault's entry into the project, project takes the project's into the vault").choices([
          'vault',
          'project',
        ]),
      )
      .action(act('project.apply')),
    'avfs apply --vault task-42 --dry-run --patch',
    'avfs apply --vault task-42 src/app.py',
    'avfs apply --vault task-42 --keep project src/util.py',
    'avfs apply --vault task-42 --git-branch agent/task-42',
  );
  const vault = program.commands.find((c) => c.name() === 'vault');
  if (!vault) throw new Error('the vault command is registered first');
  example(
    vault
      .command('sync')
      .description("bring the project's changes since the base into the vault: three-way, all or nothing")
      .option('--from <dir>', 'the project folder (default: the folder the vault was made from)')
      .option('-n, --dry-run', 'print the plan; write nothing')
      .option('--patch', 'with the plan, unified diffs of the text files that change')
      .action(act('project.sync')),
    'avfs vault sync --vault task-42',
  );
}
