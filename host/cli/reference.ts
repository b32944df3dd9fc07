/** docs/cli.md, generated from the command tree itself so it cannot drift from `--help`. */
import type { Command, Option } from 'commander';
import { buildProgram } from './main';

function usage(c: Command, prefix: string): string {
  return `${prefix}${c.name()} ${c.usage()}`.replace(/\s+\[options\]/, ' [options]').trim();
}

function section(c: Command, prefix: string, out: string[]): void {
  const subs = c.commands.filter((s) => s.name() !== 'help');
  if (subs.length > 0 && c.parent) {
    for (const s of subs) section(s, `${prefix}${c.name()} `, out);
    return;
  }
  out.push(`### \`${usage(c, prefix)}\``, '', c.description(), '');
  const opts = (c.options as Option[]).filter((o) => o.long !== '--help');
  if (opts.length > 0) {
    out.push('| option | meaning |', '|---|---|');
    for (const o of opts) out.push(`| \`${o.flags}\` | ${o.description}${o.defaultValue !== undefined && typeof o.defaultValue !== 'boolean' ? ` (default \`${String(o.defaultValue)}\`)` : ''} |`);
    out.push('');
  }
}

export function cliReference(): string {
  // Only the definitions are read: no handler runs.
  const program = buildProgram(() => async () => undefined);
  const out = [
    '# `avfs` command reference',
    '',
    '<!-- generated from the command tree by `npm run docs`; do not edit -->',
    '',
    'Global options, accepted by every command: `--json` (exactly one JSON document on stdout, errors',
    'included, see [errors.md](errors.md)), `--vault NAME` (act on this vault instead of the current one),',
    '`-V, --version`, `-h, --help` (every command\'s help ends with an example).',
    'Vault paths are absolute inside the vault; a relative path is taken from the vault root.',
    '`AVFS_HOME` sets the home (default `~/.avfs`).',
    '',
  ];
  for (const c of program.commands) if (c.name() !== 'help') section(c, 'avfs ', out);
  return out.join('\n') + '\n';
}
