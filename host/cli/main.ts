/**
 * The `avfs` command tree. Every command takes `--json` and `--vault`; errors map to documented
 * exit codes. Only commander and the definitions load at start; a command's handler (and the
 * store, the operations, zod…) load when it runs, from host/cli/core.ts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command, CommanderError } from 'commander';
import { requireWithCodeCache } from './bundleLoader';
import { VERSION } from '../version';
import * as checkpoint from './commands/checkpoint';
import * as files from './commands/files';
import * as host from './commands/host';
import * as mcp from './commands/mcp';
import * as mount from './commands/mount';
import * as policy from './commands/policy';
import * as project from './commands/project';
import * as proxy from './commands/proxy';
import * as store from './commands/store';
import * as vault from './commands/vault';
import type { CliIo, Outcome } from './core';
import type { Act } from './define';
import { helpOf } from './help';
import { execInLiveMount } from './liveMountClient';

/**
 * The handlers' module; in the bundle a file of its own (see scripts/build.mjs), read only when a
 * command runs. Loaded with require, not import(): importing CommonJS through Node's ESM loader
 * runs its export scanner over the whole 2 MB file first, which costs more than the file's compile.
 * `avfs policy …` has a core of its own, without the other commands' handlers and operations: it
 * is the call an agent's tooling makes cold before each command, and half the size loads in half the time.
 */
function core(handler?: string): typeof import('./core') {
  // In the bundle (dist/avfs.js) the core is dist/avfs-core.js beside it, loaded with its code cache.
  const bundled = join(__dirname, handler?.startsWith('policy.') ? 'avfs-policy.js' : 'avfs-core.js');
  if (__filename.endsWith('avfs.js') && existsSync(bundled)) return requireWithCodeCache<typeof import('./core')>(bundled);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- see above
  return require('./core') as typeof import('./core');
}

export function buildProgram(act: Act): Command {
  const program = new Command('avfs')
    .description('agentvfs: isolated single-file workspaces (vaults) for AI coding agents')
    .version(VERSION, '-V, --version')
    .option('--json', 'print exactly one JSON document on stdout (errors too)')
    .option('--vault <name>', 'act on this vault instead of the current one')
    .showSuggestionAfterError(true)
    .exitOverride();
  for (const m of [vault, files, store, checkpoint, mount, policy, proxy, host, mcp, project]) m.register(program, act);
  program.commands.forEach(function override(c: Command) {
    c.exitOverride();
    c.commands.forEach(override);
  });
  return program;
}

/** Runs the CLI; resolves to the exit code, and whether to exit at once when done. */
export async function main(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }): Promise<Outcome> {
  let outcome: Outcome = { code: 0, exitWhenDone: false };
  const program = buildProgram((name) => async (...args: unknown[]) => {
    // A run that a live mount's server can take never loads the core (host/cli/liveMountClient.ts).
    const handed = name === 'exec.run' ? await execInLiveMount(args, io, (message, json) => core().failure('OwnerDied', message, json, io)) : undefined;
    outcome = handed ?? (await core(name).runAction(name, args, io));
  });
  const json = argv.includes('--json');
  const bare = argv.filter((a) => a !== '--json');
  if (bare.length === 1 && (bare[0] === '--version' || bare[0] === '-V')) {
    io.stdout.write(json ? JSON.stringify({ version: VERSION }) + '\n' : VERSION + '\n');
    return outcome;
  }
  // With --json, help is data too: whichever command shows its help (`--help`, `help [cmd]`, a
  // command group given no subcommand, or nothing at all) is printed as one CliHelp document.
  let helped: Command | undefined;
  if (json) {
    program.on('beforeAllHelp', (context: { command: Command }) => {
      helped ??= context.command;
    });
    program.commands.concat(program).forEach(function quiet(c: Command) {
      c.configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined });
      c.commands.forEach(quiet);
    });
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return outcome;
  } catch (e) {
    if (!(e instanceof CommanderError)) throw e;
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') {
      if (json && helped) io.stdout.write(JSON.stringify(helpOf(helped), null, 2) + '\n');
      return outcome;
    }
    return { code: core().usageError(e.message.replace(/^error: /, ''), e.code, json, io), exitWhenDone: false };
  }
}
