/**
 * The CLI's handlers, loaded only when a command runs (the start of every `avfs` call loads just
 * commander and the command definitions: host/cli/main.ts). In the bundle this is its own file,
 * dist/avfs-core.js, so a start that runs no handler does not even compile it.
 */
import type { Command } from 'commander';
import { AvfsError } from '../protocol/errors';
import { CliContext, type CliIo } from './context';
import { checkpointHandlers } from './handlers/checkpoint';
import { fileHandlers } from './handlers/files';
import { hostHandlers } from './handlers/host';
import { mountHandlers } from './handlers/mount';
import { policyHandlers } from './handlers/policy';
import { proxyHandlers } from './handlers/proxy';
import { storeHandlers } from './handlers/store';
import { vaultHandlers } from './handlers/vault';

export type { CliIo };

const HANDLERS = { ...vaultHandlers, ...fileHandlers, ...storeHandlers, ...checkpointHandlers, ...mountHandlers, ...policyHandlers, ...proxyHandlers, ...hostHandlers };
export type HandlerName = keyof typeof HANDLERS;

export interface Outcome {
  code: number;
  /** The command left native handles (a FUSE mount it served): exit as soon as it is done. */
  exitWhenDone: boolean;
}

/** Runs one command's handler with commander's arguments (…, options, command); typed errors become the documented exit code and error document. */
export async function runAction(name: HandlerName, args: unknown[], io: CliIo): Promise<Outcome> {
  const cmd = args[args.length - 1] as Command;
  const ctx = new CliContext(io, `avfs ${commandPath(cmd)}`);
  try {
    await (HANDLERS[name] as (ctx: CliContext, ...a: unknown[]) => unknown)(ctx, ...args);
  } catch (e) {
    ctx.exitCode = ctx.printError(e, !!ctx.globals(cmd).json);
  } finally {
    await ctx.dispose();
  }
  return { code: ctx.exitCode, exitWhenDone: ctx.exitWhenDone };
}

/** A usage error found by commander (unknown command or option, missing argument). */
export function usageError(message: string, code: string, json: boolean, io: CliIo): number {
  return new CliContext(io).printError(new AvfsError('InvalidInput', message, { code }), json);
}

/** An error found outside a handler, printed as a handler's would be; returns its exit code. */
export function failure(kind: AvfsError['kind'], message: string, json: boolean, io: CliIo): number {
  return new CliContext(io).printError(new AvfsError(kind, message), json);
}

function commandPath(c: Command): string {
  const names: string[] = [];
  for (let x: Command | null = c; x?.parent; x = x.parent) names.unshift(x.name());
  return names.join(' ');
}
