/**
 * What every command handler gets: the avfs home, the chosen vault, and one way to print a
 * result (human text, or exactly one JSON document on stdout with `--json`).
 */
import type { Command } from 'commander';
import { AvfsError, toAvfsError } from '../protocol/errors';
import { AvfsHome } from '../store/home';
import type { Vault, VaultOpenOptions } from '../store/vault';
import { Vfs } from '../vfs/vfs';

export interface GlobalOptions {
  json?: boolean;
  vault?: string;
}

export class CliContext {
  readonly home = new AvfsHome();
  /** Set by the first command that prints, so no call prints two documents. */
  private printed = false;
  exitCode = 0;
  /** Set by a command that leaves native handles (a FUSE mount it served) keeping the process alive. */
  exitWhenDone = false;

  constructor(
    readonly stdout: NodeJS.WritableStream = process.stdout,
    readonly stderr: NodeJS.WritableStream = process.stderr,
  ) {}

  globals(cmd: Command): GlobalOptions {
    return cmd.optsWithGlobals() as GlobalOptions;
  }

  /** Opens the vault named by --vault (or the current one) and runs `fn` with its path API. */
  withVfs<T>(cmd: Command, fn: (vfs: Vfs) => T, opts: VaultOpenOptions = {}): T {
    return this.withVault(cmd, (v) => fn(new Vfs(v)), opts);
  }

  /** Opens the chosen vault for `fn`, and closes it when `fn` returns (or its promise settles). */
  withVault<T>(cmd: Command, fn: (vault: Vault) => T, opts: VaultOpenOptions = {}): T {
    const name = this.home.resolve(this.globals(cmd).vault);
    const vault = this.home.open(name, opts);
    let result: T;
    try {
      result = fn(vault);
    } catch (e) {
      vault.close();
      throw e;
    }
    if (result instanceof Promise) return result.finally(() => vault.close()) as T;
    vault.close();
    return result;
  }

  /** Prints a command's result: `json` as one document with --json, else the human text. */
  print(cmd: Command, json: object, human: () => string | Buffer | undefined): void {
    if (this.printed) throw new AvfsError('Internal', 'a command tried to print two results');
    this.printed = true;
    if (this.globals(cmd).json) {
      this.stdout.write(JSON.stringify(json, null, 2) + '\n');
      return;
    }
    const text = human();
    if (text === undefined) return;
    this.stdout.write(text);
    if (typeof text === 'string' && text.length > 0 && !text.endsWith('\n')) this.stdout.write('\n');
  }

  printError(e: unknown, json: boolean): number {
    const ae = toAvfsError(e);
    if (json) {
      if (!this.printed) this.stdout.write(JSON.stringify(ae.toJSON()) + '\n');
      else this.stderr.write(JSON.stringify(ae.toJSON()) + '\n');
    } else {
      this.stderr.write(`avfs: ${ae.kind}: ${ae.message}\n`);
      if (ae.kind === 'Internal' && e instanceof Error && e.stack && process.env.AVFS_DEBUG) this.stderr.write(e.stack + '\n');
    }
    this.printed = true;
    return ae.exitCode;
  }
}

/** Wraps a command action: typed errors become the documented exit code and error document. */
export function action<A extends unknown[]>(
  ctx: CliContext,
  fn: (...args: [...A, Command]) => void | Promise<void>,
): (...args: unknown[]) => Promise<void> {
  return async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    try {
      await fn(...(args as [...A, Command]));
    } catch (e) {
      ctx.exitCode = ctx.printError(e, !!ctx.globals(cmd).json);
    }
  };
}

const examples = new WeakMap<Command, string[]>();

/** The examples given to a command (for help as data). */
export function examplesOf(cmd: Command): string[] {
  return examples.get(cmd) ?? [];
}

export function example(cmd: Command, ...lines: string[]): Command {
  examples.set(cmd, lines);
  return cmd.addHelpText('after', `\nExample${lines.length > 1 ? 's' : ''}:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`);
}

/** Parses a non-negative integer option or argument, or fails with InvalidInput naming it. */
export function parseCount(name: string, value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new AvfsError('InvalidInput', `${name} must be a non-negative whole number, got ${JSON.stringify(value)}`, { field: name, value });
  }
  return Number(value);
}

export function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** Left-aligned plain-text table. */
export function table(rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n') + '\n';
}
