/** `avfs vault create|list|info|use|fork|upgrade|delete`: definitions (handlers: ../handlers/vault.ts). */
import type { Command } from 'commander';
import { type Act, example } from '../define';

function quotaOptions(cmd: Command): Command {
  return cmd
    .option('--max-size-mb <n>', 'quota: logical size of the live tree, in MiB')
    .option('--max-files <n>', 'quota: number of files, directories and symlinks')
    .option('--max-file-size-mb <n>', 'quota: size of any one file, in MiB');
}

export function register(program: Command, act: Act): void {
  const vault = program.command('vault').description('create, list, inspect, select and delete vaults');

  example(
    quotaOptions(vault.command('create <name>').description('create a vault and make it the current one'))
      .option('--no-use', 'do not make the new vault the current one')
      .option('-b, --backend <name>', 'storage backend: sqlite, lmdb or postgres (default sqlite, or $AVFS_BACKEND)')
      .option('--url <url>', 'postgres: the server, postgresql://user@host[:port]/database (default $AVFS_PG_URL; a password is better in PGPASSWORD or ~/.pgpass)')
      .option('--from <dir>', 'fill it from a project folder and remember that base (for avfs apply and vault sync); .git and .gitignore\'d paths are left out')
      .option('--exclude <pattern>', 'with --from: also leave out paths matching this gitignore-style pattern (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
      .action(act('vault.create')),
    'avfs vault create demo --max-size-mb 512',
    'avfs vault create task-42 --from . --exclude dist',
    'avfs vault create shared --backend postgres --url postgresql://avfs@db.internal/avfs',
  );
  example(
    vault
      .command('attach <name>')
      .description('use from this home a vault that lives on a server (made from another home or machine)')
      .requiredOption('-b, --backend <name>', 'where it lives: postgres')
      .requiredOption('--url <url>', 'the server, postgresql://user@host[:port]/database (a password is better in PGPASSWORD or ~/.pgpass)')
      .option('--no-use', 'do not make it the current vault')
      .action(act('vault.attach')),
    'avfs vault attach shared --backend postgres --url postgresql://avfs@db.internal/avfs',
  );
  example(vault.command('list').description('list vaults (forks under their parent)').action(act('vault.list')), 'avfs vault list --json');
  example(vault.command('info [name]').description('show a vault: sizes, quotas, parent, forks, checkpoints').action(act('vault.info')), 'avfs vault info demo');
  example(vault.command('use <name>').description('make a vault the current one').action(act('vault.use')), 'avfs vault use demo');
  example(
    vault
      .command('fork <source> <name>')
      .description('make an independent task copy of a vault; costs metadata only, whatever the bytes')
      .option('--use', 'make the fork the current vault')
      .action(act('vault.fork')),
    'avfs vault fork main task-42 --use',
  );
  example(
    vault
      .command('convert <name>')
      .description('copy a vault onto another storage backend (checkpoints and journal included), verify the copy, and put it in its place')
      .requiredOption('-b, --backend <name>', 'the backend to convert to: sqlite or lmdb')
      .action(act('vault.convert')),
    'avfs vault convert demo --backend lmdb',
  );
  example(
    vault
      .command('upgrade <name>')
      .description('upgrade a vault file written by an older avfs to this schema (read-only commands never do)')
      .action(act('vault.upgrade')),
    'avfs vault upgrade demo',
  );
  example(
    vault
      .command('delete <name>')
      .description('delete a vault and its files (an unreadable vault file too)')
      .option('-y, --yes', 'do not ask for confirmation on a terminal')
      .option('--flatten', 'first copy into its forks the chunks they still read from this vault')
      .action(act('vault.delete')),
    'avfs vault delete demo --yes',
  );
}
