/**
 * What the command definitions need, and nothing heavier: they are loaded at every start
 * (commander needs the whole tree to parse argv), while the handlers behind them are loaded
 * only when a command runs (host/cli/core.ts).
 */
import type { Command } from 'commander';
import type { HandlerName } from './core';

/** The action of a command: runs the named handler (loading it first). */
export type Act = (handler: HandlerName) => (...args: unknown[]) => Promise<void>;

const examples = new WeakMap<Command, string[]>();

/** The examples given to a command (for help as data). */
export function examplesOf(cmd: Command): string[] {
  return examples.get(cmd) ?? [];
}

export function example(cmd: Command, ...lines: string[]): Command {
  examples.set(cmd, lines);
  return cmd.addHelpText('after', `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}
