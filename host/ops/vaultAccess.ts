/**
 * Opening vaults for operations: once per call in a one-shot process (the CLI), kept open between
 * calls in a long-lived one (a host worker: opening a vault costs ~0.7 ms, a stat ~15 µs).
 */
import { statSync } from 'node:fs';
import { type AvfsHome, checkVaultName } from '../store/home';
import type { Surface } from '../store/journal';
import type { Vault } from '../store/vault';
import type { OpsContext, VaultAccess } from './context';

/** Opens the vault for `fn` and closes it when `fn` returns (or its promise settles). */
export function oneShotVaults(home: AvfsHome): VaultAccess {
  return {
    use(name, mode, surface, fn) {
      const vault = home.open(name, { readonly: mode === 'read', surface });
      let result;
      try {
        result = fn(vault);
      } catch (e) {
        vault.close();
        throw e;
      }
      if (result instanceof Promise) return result.finally(() => vault.close()) as typeof result;
      vault.close();
      return result;
    },
  };
}

interface Kept {
  vault: Vault;
  dev: number;
  ino: number;
  lastUsed: number;
}

/**
 * Connections kept open, one per vault, mode and surface. Each use checks that the vault file is
 * still the one that was opened (a deleted and re-created vault is another file). A connection to
 * a file that has gone is never closed, only dropped: SQLite's close removes the write-ahead log
 * by its name, which would now be the new vault's.
 */
export class KeptVaults implements VaultAccess {
  private readonly kept = new Map<string, Kept>();
  /** Connections to files that were replaced: held, never closed (see above), until the process ends. */
  private readonly abandoned: Vault[] = [];
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly home: AvfsHome,
    /** A connection unused this long is closed (it holds file descriptors and the WAL open). */
    private readonly idleMs = 30_000,
  ) {
    this.timer = setInterval(() => this.closeIdle(), Math.max(1000, idleMs / 3));
    this.timer.unref();
  }

  use<T>(name: string, mode: 'read' | 'write', surface: Surface, fn: (v: Vault) => T): T {
    const key = `${name}/${mode}/${surface}`;
    const file = this.home.vaultFile(name);
    let k = this.kept.get(key);
    if (k) {
      const st = statSync(file, { throwIfNoEntry: false });
      if (!st || st.ino !== k.ino || st.dev !== k.dev) {
        this.drop(key, k);
        k = undefined;
      }
    }
    if (!k) {
      const vault = this.home.open(name, { readonly: mode === 'read', surface });
      const st = statSync(file);
      k = { vault, dev: st.dev, ino: st.ino, lastUsed: 0 };
      this.kept.set(key, k);
    }
    k.lastUsed = Date.now();
    return fn(k.vault);
  }

  /** Closes every connection (before a vault is deleted, and when the process stops). */
  closeAll(): void {
    for (const [key, k] of this.kept) this.drop(key, k);
  }

  stop(): void {
    clearInterval(this.timer);
    this.closeAll();
  }

  private closeIdle(): void {
    const now = Date.now();
    for (const [key, k] of this.kept) if (now - k.lastUsed > this.idleMs) this.drop(key, k);
  }

  private drop(key: string, k: Kept): void {
    this.kept.delete(key);
    const st = statSync(k.vault.file, { throwIfNoEntry: false });
    if (st && st.ino === k.ino && st.dev === k.dev) k.vault.close();
    else this.abandoned.push(k.vault);
  }
}

/**
 * The vault an operation names, else the current one. A named vault's existence is not checked
 * here: opening it does (VaultNotFound), and a kept connection checks its file at each use.
 */
function vaultName(ctx: OpsContext, vault: string | undefined): string {
  return vault !== undefined ? checkVaultName(vault) : ctx.home.resolve(undefined);
}

/** The vault an operation names (absent: the current one), open to read. */
export function reading<T>(ctx: OpsContext, vault: string | undefined, fn: (v: Vault) => T): T {
  return ctx.vaults.use(vaultName(ctx, vault), 'read', ctx.surface, fn);
}

/** The vault an operation names (absent: the current one), open to write. */
export function writing<T>(ctx: OpsContext, vault: string | undefined, fn: (v: Vault) => T): T {
  return ctx.vaults.use(vaultName(ctx, vault), 'write', ctx.surface, fn);
}
