/** `avfs vault create|list|info|use|delete`. */
import type { Command } from 'commander';
import { deleteVault, listVaults, upgradeVault, vaultInfo } from '../../ops/vaults';
import { AvfsError } from '../../protocol/errors';
import type { Quotas, VaultSummary } from '../../protocol/vault';
import { forkVault } from '../../store/forks';
import { action, type CliContext, example, humanBytes, parseCount, table } from '../context';

function quotaOptions(cmd: Command): Command {
  return cmd
    .option('--max-size-mb <n>', 'quota: logical size of the live tree, in MiB')
    .option('--max-files <n>', 'quota: number of files, directories and symlinks')
    .option('--max-file-size-mb <n>', 'quota: size of any one file, in MiB');
}

function readQuotaOptions(o: Record<string, string | undefined>): Partial<Quotas> {
  const q: Partial<Quotas> = {};
  if (o.maxSizeMb !== undefined) q.max_size_mb = parseCount('--max-size-mb', o.maxSizeMb);
  if (o.maxFiles !== undefined) q.max_files = parseCount('--max-files', o.maxFiles);
  if (o.maxFileSizeMb !== undefined) q.max_file_size_mb = parseCount('--max-file-size-mb', o.maxFileSizeMb);
  return q;
}

export function register(program: Command, ctx: CliContext): void {
  const vault = program.command('vault').description('create, list, inspect, select and delete vaults');

  example(
    quotaOptions(vault.command('create <name>').description('create a vault and make it the current one'))
      .option('--no-use', 'do not make the new vault the current one')
      .option('-b, --backend <name>', 'storage backend (sqlite)', 'sqlite')
      .action(
        action(ctx, (name: string, opts: Record<string, string | undefined> & { use: boolean }, cmd: Command) => {
          if (opts.backend !== 'sqlite') {
            throw new AvfsError('NotSupported', `backend ${JSON.stringify(opts.backend)} is not available: this build has sqlite`, { backend: opts.backend });
          }
          const quotas = readQuotaOptions(opts);
          const v = ctx.home.create(name, quotas);
          v.close();
          if (opts.use) ctx.home.setCurrent(name);
          ctx.print(cmd, { created: name, current: opts.use, backend: 'sqlite', path: v.file, quotas: { ...nullQuotas, ...quotas } }, () =>
            `created vault ${name}${opts.use ? ' (now current)' : ''}`,
          );
        }),
      ),
    'avfs vault create demo --max-size-mb 512',
  );

  example(
    vault
      .command('list')
      .description('list vaults (forks under their parent)')
      .action(
        action(ctx, (_opts: unknown, cmd: Command) => {
          const vaults = listVaults(ctx.home);
          ctx.print(cmd, { vaults }, () => {
            if (vaults.length === 0) return "no vaults yet: run 'avfs vault create <name>'";
            const rows: string[][] = [['', 'NAME', 'SIZE', 'FILES', 'ON DISK']];
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
                if (v.status === 'ok') rows.push([v.current ? '*' : '', name, humanBytes(v.size), String(v.files), humanBytes(v.size_on_disk)]);
                else rows.push([v.current ? '*' : '', name, 'unreadable', '-', humanBytes(v.size_on_disk), v.reason]);
                walk(v.name, depth + 1);
              }
            };
            walk(null, 0);
            return table(rows);
          });
        }),
      ),
    'avfs vault list --json',
  );

  example(
    vault
      .command('info [name]')
      .description('show a vault: sizes, quotas, parent, forks, checkpoints')
      .action(
        action(ctx, (name: string | undefined, _opts: unknown, cmd: Command) => {
          const n = ctx.home.resolve(name ?? ctx.globals(cmd).vault);
          const info = vaultInfo(ctx.home, n);
          ctx.print(cmd, info, () =>
            table([
              ['name', info.name + (info.current ? ' (current)' : '')],
              ['path', info.path],
              ['created', info.created_at ?? '-'],
              ['size', `${humanBytes(info.size)} in ${info.files} entries`],
              ['on disk', humanBytes(info.size_on_disk)],
              ['parent', info.parent ?? '-'],
              ['forks', info.forks.join(', ') || '-'],
              ['checkpoints', String(info.checkpoints.length)],
              ['quotas', Object.entries(info.quotas).map(([k, v]) => `${k}=${v ?? 'none'}`).join(' ')],
            ]),
          );
        }),
      ),
    'avfs vault info demo',
  );

  example(
    vault
      .command('use <name>')
      .description('make a vault the current one')
      .action(
        action(ctx, (name: string, _opts: unknown, cmd: Command) => {
          ctx.home.resolve(name);
          ctx.home.setCurrent(name);
          ctx.print(cmd, { current: name }, () => `now using vault ${name}`);
        }),
      ),
    'avfs vault use demo',
  );

  example(
    vault
      .command('fork <source> <name>')
      .description('make an independent task copy of a vault; costs metadata only, whatever the bytes')
      .option('--use', 'make the fork the current vault')
      .action(
        action(ctx, (source: string, name: string, opts: { use?: boolean }, cmd: Command) => {
          ctx.home.resolve(source);
          const started = performance.now();
          const fork = forkVault(ctx.home, source, name);
          const ms = Math.round((performance.now() - started) * 10) / 10;
          const file = fork.file;
          fork.close();
          if (opts.use) ctx.home.setCurrent(name);
          ctx.print(cmd, { source, name, current: !!opts.use, backend: 'sqlite', path: file, copy_on_write: true, duration_ms: ms }, () =>
            `forked ${source} into ${name} in ${ms} ms${opts.use ? ' (now current)' : ''}`,
          );
        }),
      ),
    'avfs vault fork main task-42 --use',
  );

  example(
    vault
      .command('upgrade <name>')
      .description('upgrade a vault file written by an older avfs to this schema (read-only commands never do)')
      .action(
        action(ctx, (name: string, _opts: unknown, cmd: Command) => {
          const r = upgradeVault(ctx.home, name);
          ctx.print(cmd, r, () => (r.upgraded ? `upgraded vault ${name} from schema ${r.from} to ${r.to}` : `vault ${name} is up to date (schema ${r.to})`));
        }),
      ),
    'avfs vault upgrade demo',
  );

  example(
    vault
      .command('delete <name>')
      .description('delete a vault and its files (an unreadable vault file too)')
      .option('-y, --yes', 'do not ask for confirmation on a terminal')
      .option('--flatten', 'first copy into its forks the chunks they still read from this vault')
      .action(
        action(ctx, async (name: string, opts: { yes?: boolean; flatten?: boolean }, cmd: Command) => {
          const interactive = !opts.yes && !ctx.globals(cmd).json && process.stdin.isTTY;
          const confirm = async () => /^y(es)?$/i.test((await ask(`delete vault ${name} and all its files? [y/N] `)).trim());
          const { flattened } = await deleteVault(ctx.home, name, { flatten: !!opts.flatten, ...(interactive ? { confirm } : {}) });
          ctx.print(cmd, { deleted: name, flattened }, () => `deleted vault ${name}${flattened.length ? ` (flattened into ${flattened.join(', ')})` : ''}`);
        }),
      ),
    'avfs vault delete demo --yes',
  );
}

const nullQuotas: Quotas = { max_size_mb: null, max_files: null, max_file_size_mb: null };

async function ask(question: string): Promise<string> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
