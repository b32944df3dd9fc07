/** A command's help as data (CliHelp), for `--json`: the same tree `--help` prints, nothing lost to layout. */
import type { Command, Option } from 'commander';
import type { CliHelp } from '../protocol/help';
import { examplesOf } from './define';

function fullName(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}

export function helpOf(c: Command): CliHelp {
  const visible = (o: Option) => !o.hidden;
  return {
    command: fullName(c),
    usage: `${fullName(c)} ${c.usage()}`.trim(),
    description: c.description(),
    aliases: c.aliases(),
    arguments: c.registeredArguments.map((a) => ({ name: a.name(), required: a.required, variadic: a.variadic, description: a.description })),
    options: (c.options as Option[]).filter(visible).map((o) => ({
      flags: o.flags,
      description: o.description,
      ...(o.defaultValue !== undefined ? { default: o.defaultValue as unknown } : {}),
    })),
    commands: c.commands.filter((s) => s.name() !== 'help').map((s) => ({ name: s.name(), aliases: s.aliases(), usage: s.usage(), description: s.description() })),
    examples: examplesOf(c),
  };
}
