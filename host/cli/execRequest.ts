/**
 * The request of `avfs proxy exec`, made from its flags. Loaded at start (no zod, no store): the
 * call that hands its run to a kept mount's server (host/cli/keptMountClient.ts) builds it
 * without loading the CLI's core, and the core's handler builds it with the same code.
 */
import type { ExecRequestInput } from '../protocol/exec';

export interface ExecOptions {
  shell?: string;
  cwd: string;
  readonly?: boolean;
  keepMount?: boolean;
  mountpoint?: string;
  allowOther?: boolean;
  timeout: string;
  grace: string;
  checkpoint: 'auto' | 'always' | 'never';
  env: string[];
  cleanEnv?: boolean;
  stdin?: boolean;
  maxOutput?: string;
  sandbox?: 'workspace' | 'none';
  materialize?: boolean;
  prompt: boolean;
}

/** Makes the error of a bad flag (the core: an InvalidInput AvfsError). */
export type Invalid = (message: string, details: Record<string, unknown>) => Error;

/** A non-negative whole number given as an option or argument. */
export function countOf(name: string, value: string, invalid: Invalid): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw invalid(`${name} must be a non-negative whole number, got ${JSON.stringify(value)}`, { field: name, value });
  }
  return Number(value);
}

function envOf(pairs: string[], invalid: Invalid): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    if (eq <= 0) throw invalid(`--env takes NAME=VALUE, got ${JSON.stringify(p)}`, { field: 'env', value: p });
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

/** The request (without its standard input, read by the caller when the run is sure to go ahead). */
export function execRequestOf(argv: string[], opts: ExecOptions, vault: string | undefined, invalid: Invalid): ExecRequestInput {
  if ((opts.shell === undefined) === (argv.length === 0)) throw invalid('give exactly one of --shell "STRING" or -- ARGV...', { field: 'shell' });
  return {
    ...(vault !== undefined ? { vault } : {}),
    command: opts.shell !== undefined ? { shell: opts.shell } : { argv },
    cwd: opts.cwd,
    readonly: !!opts.readonly,
    keep_mount: !!opts.keepMount,
    ...(opts.mountpoint !== undefined ? { mountpoint: opts.mountpoint } : {}),
    allow_other: !!opts.allowOther,
    timeout_ms: countOf('--timeout', opts.timeout, invalid),
    grace_ms: countOf('--grace', opts.grace, invalid),
    checkpoint: opts.checkpoint,
    env: envOf(opts.env, invalid),
    clean_env: !!opts.cleanEnv,
    ...(opts.maxOutput !== undefined ? { max_output_bytes: countOf('--max-output', opts.maxOutput, invalid) } : {}),
    ...(opts.sandbox !== undefined ? { sandbox: opts.sandbox } : {}),
    ...(opts.materialize ? { materialize: true } : {}),
  };
}

/** Whether the person at this terminal can be asked to approve a run, or why not. */
export async function promptOf(opts: ExecOptions): Promise<{ interactive: boolean; why: string }> {
  // isatty, not process.stdin.isTTY: touching process.stdin sets up a stream a call without --stdin never reads.
  const { isatty } = await import('node:tty');
  const interactive = opts.prompt && !opts.stdin && isatty(0) && isatty(2);
  return { interactive, why: opts.prompt ? 'no terminal to ask on' : '--no-prompt' };
}

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
