/**
 * What every command handler gets: the avfs home, one way to call an operation (`call`), and one
 * way to print its result (human text, or exactly one JSON document on stdout with `--json`).
 *
 * `call` goes through the vault host when one is running for this home (so the host's clients see
 * the call, and a long operation runs on its workers), and runs the operation in-process
 * otherwise: the same operation either way, so the same output and the same exit code.
 */
import type { Command } from 'commander';
import type { HostConnection } from '../daemon/client';
import type { OpName, OpsContext } from '../ops/context';
import { AvfsError, toAvfsError } from '../protocol/errors';
import { terminalText } from '../protocol/terminalText';
import type { MethodParams, MethodResult } from '../protocol/methods';
import type { AvfsHome } from '../store/home';
import { defaultHome, type HomeDir } from '../store/homeDir';
import { countOf } from './execRequest';

export interface GlobalOptions {
  json?: boolean;
  vault?: string;
}

export interface CliIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

/** Set to 1 to run every operation in this process even when a host is running. */
export const NO_HOST_ENV = 'AVFS_NO_HOST';

export class CliContext {
  /** The avfs home by its directory: enough to find a running host. */
  readonly homeDir: HomeDir = { dir: defaultHome() };
  /** The home's vaults, loaded only by what runs in this process (a call routed to a host never loads the store). */
  private vaults: AvfsHome | undefined;
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  /** Set by the first command that prints, so no call prints two documents. */
  private printed = false;
  exitCode = 0;
  /** Set by a command that leaves native handles (a FUSE mount it served) keeping the process alive. */
  exitWhenDone = false;
  /** The host connection: undefined until the first call looks, null when there is none. */
  private remote: Promise<HostConnection | null> | undefined;
  private local: OpsContext | undefined;

  constructor(
    io: CliIo = { stdout: process.stdout, stderr: process.stderr },
    /** Shown to the host as this client's name. */
    readonly commandName = 'avfs',
  ) {
    this.stdout = io.stdout;
    this.stderr = io.stderr;
  }

  globals(cmd: Command): GlobalOptions {
    return cmd.optsWithGlobals() as GlobalOptions;
  }

  /** The vault named by --vault (undefined: the current one, as the operation resolves it). */
  vault(cmd: Command): string | undefined {
    return this.globals(cmd).vault;
  }

  /** --vault as operation params: `{ vault }`, or nothing (the operation takes the current vault). */
  inVault(cmd: Command): { vault?: string } {
    const vault = this.vault(cmd);
    return vault !== undefined ? { vault } : {};
  }

  /** Runs an operation: through the running host, else in this process. */
  async call<M extends OpName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>> {
    const host = await this.host();
    if (host) return host.call(method, params);
    return this.callLocal(method, params);
  }

  /** Runs an operation in this process, whatever is running (see docs/architecture.md for which commands do). */
  async callLocal<M extends OpName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>> {
    const { methodSchemas } = await import('../protocol/methods/load');
    const { loadOp } = await import('../ops/load');
    const parsed = (await methodSchemas(method)).params.parse(params);
    const op = (await loadOp(method)) as (ctx: OpsContext, p: unknown) => MethodResult<M> | Promise<MethodResult<M>>;
    return op(await this.opsContext(), parsed);
  }

  /** The home's vaults, for what runs in this process. */
  async home(): Promise<AvfsHome> {
    if (!this.vaults) {
      const { AvfsHome } = await import('../store/home');
      this.vaults = new AvfsHome(this.homeDir.dir);
    }
    return this.vaults;
  }

  /** The operations context of this process: vaults opened per call, a policy engine loaded for one decision. */
  async opsContext(): Promise<OpsContext> {
    if (!this.local) {
      const home = await this.home();
      const { oneShotVaults } = await import('../ops/vaultAccess');
      this.local = {
        home,
        surface: 'cli',
        vaults: oneShotVaults(home),
        engine: async () => (await import('../policy/engine')).createPolicyEngine(),
      };
    }
    return this.local;
  }

  /**
   * The running host, connected; null when there is none. Its record is a small file, so looking
   * costs little; a record left by a crashed host is cleared on the way and the call runs here.
   */
  private host(): Promise<HostConnection | null> {
    this.remote ??= (async () => {
      if (process.env[NO_HOST_ENV] === '1') return null;
      const { readHost } = await import('../daemon/lock');
      if (!readHost(this.homeDir)) return null;
      const { connectHost } = await import('../daemon/client');
      return (await connectHost(this.homeDir, { name: `${this.commandName} (pid ${process.pid})`, kind: 'cli' })) ?? null;
    })();
    return this.remote;
  }

  /** Closes the host connection, if one was made. */
  async dispose(): Promise<void> {
    const h = await this.remote;
    h?.close();
  }

  /** Prints a command's result: `json` as one document with --json, else the human text. */
  print(cmd: Command, json: object, human: () => string | Buffer | undefined): void {
    if (this.printed) throw new AvfsError('Internal', 'a command tried to print two results');
    this.printed = true;
    if (this.globals(cmd).json) {
      this.stdout.write(JSON.stringify(json, null, 2) + '\n');
      return;
    }
    const raw = human();
    if (raw === undefined) return;
    // A page of text (never file content, which comes as bytes) reaches the terminal with no control characters.
    const text = typeof raw === 'string' ? terminalText(raw, { lines: true }) : raw;
    this.stdout.write(text);
    if (typeof text === 'string' && text.length > 0 && !text.endsWith('\n')) this.stdout.write('\n');
  }

  printError(e: unknown, json: boolean): number {
    const ae = toAvfsError(e);
    if (json) {
      if (!this.printed) this.stdout.write(JSON.stringify(ae.toJSON()) + '\n');
      else this.stderr.write(JSON.stringify(ae.toJSON()) + '\n');
    } else {
      this.stderr.write(`avfs: ${ae.kind}: ${terminalText(ae.message, { lines: true })}\n`);
      if (ae.kind === 'Internal' && e instanceof Error && e.stack && process.env.AVFS_DEBUG) this.stderr.write(e.stack + '\n');
    }
    this.printed = true;
    return ae.exitCode;
  }
}

/** Parses a non-negative integer option or argument, or fails with InvalidInput naming it. */
export function parseCount(name: string, value: string): number {
  return countOf(name, value, (message, details) => new AvfsError('InvalidInput', message, details));
}

/** Left-aligned plain-text table. */
/** Rows as aligned columns; each cell shown on one line, with no control characters (terminalText). */
export function table(cells: string[][]): string {
  if (cells.length === 0) return '';
  const rows = cells.map((r) => r.map((cell) => terminalText(cell)));
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!))).join('  ')).join('\n') + '\n';
}

export { humanBytes } from '../ops/format';
