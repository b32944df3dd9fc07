/** The `avfs` command tree. Every command takes `--json` and `--vault`; errors map to documented exit codes. */
import { Command, CommanderError } from 'commander';
import { AvfsError } from '../protocol/errors';
import { VERSION } from '../version';
import * as checkpoint from './commands/checkpoint';
import * as files from './commands/files';
import * as mount from './commands/mount';
import * as host from './commands/host';
import * as policy from './commands/policy';
import * as proxy from './commands/proxy';
import * as store from './commands/store';
import * as vault from './commands/vault';
import { CliContext } from './context';
import { helpOf } from './help';

export function buildProgram(ctx: CliContext): Command {
  const program = new Command('avfs')
    .description('agentvfs: isolated single-file workspaces (vaults) for AI coding agents')
    .version(VERSION, '-V, --version')
    .option('--json', 'print exactly one JSON document on stdout (errors too)')
    .option('--vault <name>', 'act on this vault instead of the current one')
    .showSuggestionAfterError(true)
    .exitOverride();
  for (const m of [vault, files, store, checkpoint, mount, policy, proxy, host]) m.register(program, ctx);
  program.commands.forEach(function override(c: Command) {
    c.exitOverride();
    c.commands.forEach(override);
  });
  return program;
}

/** Runs the CLI; resolves to the process exit code. */
export async function main(argv: string[], ctx = new CliContext()): Promise<number> {
  const program = buildProgram(ctx);
  const json = argv.includes('--json');
  const bare = argv.filter((a) => a !== '--json');
  if (bare.length === 1 && (bare[0] === '--version' || bare[0] === '-V')) {
    ctx.stdout.write(json ? JSON.stringify({ version: VERSION }) + '\n' : VERSION + '\n');
    return 0;
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
    return ctx.exitCode;
  } catch (e) {
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.code === 'commander.help') {
        if (json && helped) ctx.stdout.write(JSON.stringify(helpOf(helped), null, 2) + '\n');
        return 0;
      }
      const message = e.message.replace(/^error: /, '');
      return ctx.printError(new AvfsError('InvalidInput', message, { code: e.code }), json);
    }
    return ctx.printError(e, json);
  }
}
