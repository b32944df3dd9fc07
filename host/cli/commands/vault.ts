/** `avfs vault create|list|info|use|delete`. */
import type { Command } from 'commander';
import { assertNotMounted } from '../../fuse/registry';
import { AvfsError } from '../../protocol/errors';
import type { Quotas, VaultInfo, VaultSummary } from '../../protocol/vault';
import type { AvfsHome } from '../../store/home';
import type { Vault } from '../../store/vault';
import { childrenOf, flattenInto, forkVault } from '../../store/forks';
import { MIGRATIONS } from '../../store/schema';
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

function summaryOf(home: AvfsHome, v: Vault): VaultSummary {
  const c = v.inodes.counters();
  return {
    name: v.name,
    current: home.current() === v.name,
    size: c.liveBytes,
    size_on_disk: home.sizeOnDisk(v.name),
    files: c.liveInodes,
    backend: 'sqlite',
    parent: v.meta('parent') ?? null,
  };
}

export function vaultSummary(home: AvfsHome, name: string): VaultSummary {
  const v = home.open(name);
  try {
    return summaryOf(home, v);
  } finally {
    v.close();
  }
}

export function vaultInfo(home: AvfsHome, name: string): VaultInfo {
  const v = home.open(name);
  try {
    const chunks = (v.db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number }).n;
    return {
      ...summaryOf(home, v),
      path: v.file,
      created_at: v.meta('created_at') ?? null,
      schema_version: MIGRATIONS.length,
      chunk_size: Number(v.meta('chunk_size') ?? 0),
      chunks,
      quotas: v.inodes.quotas.get(),
      forks: childrenOf(home, name, { strict: false }),
      checkpoints: v.checkpoints.list().map((c) => c.name),
    };
  } finally {
    v.close();
  }
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
          const vaults = ctx.home.names().map((n) => vaultSummary(ctx.home, n));
          ctx.print(cmd, { vaults }, () => {
            if (vaults.length === 0) return "no vaults yet: run 'avfs vault create <name>'";
            const rows: string[][] = [['', 'NAME', 'SIZE', 'FILES', 'ON DISK']];
            const byParent = new Map<string | null, VaultSummary[]>();
            for (const v of vaults) {
              const key = v.parent && vaults.some((p) => p.name === v.parent) ? v.parent : null;
              byParent.set(key, [...(byParent.get(key) ?? []), v]);
            }
            const walk = (parent: string | null, depth: number): void => {
              for (const v of byParent.get(parent) ?? []) {
                rows.push([v.current ? '*' : '', '  '.repeat(depth) + (depth ? '└ ' : '') + v.name, humanBytes(v.size), String(v.files), humanBytes(v.size_on_disk)]);
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
      .command('delete <name>')
      .description('delete a vault and its files')
      .option('-y, --yes', 'do not ask for confirmation on a terminal')
      .option('--flatten', 'first copy into its forks the chunks they still read from this vault')
      .action(
        action(ctx, async (name: string, opts: { yes?: boolean; flatten?: boolean }, cmd: Command) => {
          ctx.home.resolve(name);
          assertNotMounted(ctx.home, name, 'delete it');
          const forks = childrenOf(ctx.home, name);
          if (forks.length > 0 && !opts.flatten) {
            throw new AvfsError('VaultInUse', `vault ${name} has forks that read from it: ${forks.join(', ')} (use --flatten to make them independent first)`, {
              vault: name,
              forks,
            });
          }
          if (!opts.yes && !ctx.globals(cmd).json && process.stdin.isTTY) {
            const answer = await ask(`delete vault ${name} and all its files? [y/N] `);
            if (!/^y(es)?$/i.test(answer.trim())) throw new AvfsError('InvalidInput', 'deletion cancelled', { vault: name });
          }
          const flattened = forks.length > 0 ? flattenInto(ctx.home, name) : [];
          ctx.home.removeFiles(name);
          if (ctx.home.current() === null) ctx.home.setCurrent(null);
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
