/**
 * The CLI's handlers, loaded only when a command runs (the start of every `avfs` call loads just
 * commander and the command definitions: host/cli/main.ts). In the bundle this is its own file,
 * dist/avfs-core.js, so a start that runs no handler does not even compile it.
 */
import type { Command } from 'commander';
import { AvfsError } from '../protocol/errors';
import { CliContext, type CliIo } from './context';
import type { Area } from '../protocol/areas';
import type { checkpointHandlers } from './handlers/checkpoint';
import type { execHandlers } from './handlers/exec';
import type { fileHandlers } from './handlers/files';
import type { hostHandlers } from './handlers/host';
import type { hookHandlers } from './handlers/hook';
import type { mcpHandlers } from './handlers/mcp';
import type { mountHandlers } from './handlers/mount';
import type { policyHandlers } from './handlers/policy';
import type { projectHandlers } from './handlers/project';
import type { storeHandlers } from './handlers/store';
import type { vaultHandlers } from './handlers/vault';

export type { CliIo };
/**
 * What a run's guard runs when the run's owner died (host/proxy/guard.ts), from this bundle as the
 * handlers are. Loaded when called: a command that opens no vault must not load the store.
 */
export async function settleOrphanedRun(argv: string[]): Promise<void> {
  const { settleOrphanedRun: settle } = await import('../proxy/settle');
  await settle(argv);
}

type Handlers = typeof vaultHandlers & typeof fileHandlers & typeof storeHandlers & typeof checkpointHandlers &
  typeof mountHandlers & typeof policyHandlers & typeof execHandlers & typeof hostHandlers & typeof projectHandlers & typeof mcpHandlers &
  typeof hookHandlers;
export type HandlerName = keyof Handlers;
type Handler = (ctx: CliContext, ...a: unknown[]) => unknown;

/**
 * The handlers of a command's area (host/protocol/areas.ts: the part of its name before the dot),
 * loaded when it runs: a call initialises only its own area's modules (`policy check` does not
 * build the envelope's schemas for `proxy exec`, nor start the FUSE layer). In the bundle, import()
 * is a lazy initialiser within this file (scripts/build.mjs).
 */
async function handlerOf(name: HandlerName): Promise<Handler> {
  const area = name.slice(0, name.indexOf('.')) as Area;
  const handler = area in HANDLER_MODULES ? (await HANDLER_MODULES[area]())[name] : undefined;
  if (typeof handler !== 'function') throw new AvfsError('Internal', `no handler for ${name}`);
  return handler as Handler;
}

/** Each area's handlers, from the file named by the area. */
export const HANDLER_MODULES: Record<Area, () => Promise<Record<string, unknown>>> = {
  vault: async () => (await import('./handlers/vault')).vaultHandlers,
  files: async () => (await import('./handlers/files')).fileHandlers,
  store: async () => (await import('./handlers/store')).storeHandlers,
  checkpoint: async () => (await import('./handlers/checkpoint')).checkpointHandlers,
  mount: async () => (await import('./handlers/mount')).mountHandlers,
  policy: async () => (await import('./handlers/policy')).policyHandlers,
  exec: async () => (await import('./handlers/exec')).execHandlers,
  project: async () => (await import('./handlers/project')).projectHandlers,
  host: async () => (await import('./handlers/host')).hostHandlers,
  mcp: async () => (await import('./handlers/mcp')).mcpHandlers,
  hook: async () => (await import('./handlers/hook')).hookHandlers,
};

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
    await (await handlerOf(name))(ctx, ...args);
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
