/** One open vault file: its backend, inode layer, checkpoints and journal. */
import { lstatSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';
import { BackgroundCheckpointer } from './checkpointer';
import { Checkpoints } from './checkpoints';
import type { ChunkFallback } from './chunks';
import type { BackendKind, MetaStore } from './backend';
import { type Db, readOnlyOnDisk } from './db';
import { createMeta, openMeta, type ServerOptions } from './engine';
import { SqliteMeta } from './sqlite';
import { InodeStore } from './inodes';
import { Journal, type Surface } from './journal';

export interface VaultOpenOptions {
  /** The caller only reads: a read-only SQLite connection, so nothing is migrated or written. */
  readonly?: boolean;
  /** With `readonly`: accept an older schema (for reads every schema version supports). */
  olderSchemaOk?: boolean;
  surface?: Surface;
}

export class Vault {
  readonly inodes: InodeStore;
  readonly journal: Journal;
  readonly checkpoints: Checkpoints;
  private ancestors: (ChunkFallback & { close(): void }) | undefined;
  private checkpointer: BackgroundCheckpointer | undefined;

  private constructor(
    readonly name: string,
    readonly file: string,
    /** The backend: the vault's metadata and chunks. */
    readonly store: MetaStore,
    /** Why the vault cannot be written (read-only open, or read-only on disk); undefined if it can. */
    readonly readonlyReason: string | undefined,
    surface: Surface,
  ) {
    this.inodes = new InodeStore(store);
    this.journal = new Journal(store, surface);
    this.checkpoints = new Checkpoints(store, this.journal, this.inodes.quotas);
  }

  get backend(): BackendKind {
    return this.store.kind;
  }

  /** The SQLite connection of a SQLite vault (for tests that look inside the file). */
  get db(): Db {
    if (!(this.store instanceof SqliteMeta)) throw new AvfsError('NotSupported', `vault ${this.name} is not a SQLite vault`, { vault: this.name });
    return this.store.db;
  }

  /** For a fork: where the chunks it does not hold are read from. */
  attachAncestors(ancestors: ChunkFallback & { close(): void }): void {
    this.ancestors?.close();
    this.ancestors = ancestors;
    this.inodes.chunks.setFallback(ancestors);
  }

  /**
   * Opens a vault file. A vault this user cannot write on disk opens read-only, so writes fail
   * with ReadOnly (saying why) and reads work.
   */
  static open(name: string, file: string, opts: VaultOpenOptions = {}): Vault {
    // lstat: a dangling symlink in the vault's place is an unreadable vault (StorageError from openDb), not a missing one.
    if (!lstatSync(file, { throwIfNoEntry: false })) throw new AvfsError('VaultNotFound', `vault not found: ${name}`, { vault: name });
    const reason = opts.readonly ? 'the vault is open read-only' : readOnlyOnDisk(file);
    const meta = openMeta(file, { readonly: reason !== undefined, olderSchemaOk: !!opts.readonly && !!opts.olderSchemaOk });
    return new Vault(name, file, meta, reason, opts.surface ?? 'cli');
  }

  static create(name: string, file: string, surface: Surface = 'cli', backend: BackendKind = 'sqlite', server: ServerOptions = {}): Vault {
    const meta = createMeta(file, backend, server);
    const v = new Vault(name, file, meta, undefined, surface);
    try {
      v.inodes.initialize();
    } catch (e) {
      // A vault on a server was made there already: take it back, so the name is free again.
      try {
        (meta as Partial<{ removeFromServer(fn: () => void): void }>).removeFromServer?.(() => {});
      } finally {
        meta.close();
      }
      throw e;
    }
    return v;
  }

  /** Registers a vault that exists on its server already (another home made it): nothing is initialised. */
  static attach(name: string, file: string, backend: BackendKind, server: ServerOptions): Vault {
    return new Vault(name, file, createMeta(file, backend, { ...server, attach: true }), undefined, 'cli');
  }

  get readonly(): boolean {
    return this.readonlyReason !== undefined;
  }

  meta(key: string): string | undefined {
    return this.store.getMeta(key);
  }

  setMeta(key: string, value: string | null): void {
    this.store.setMeta(key, value);
  }

  /** For long-lived processes (SQLite): move WAL checkpoints (and their syncs) off the writers' commits. */
  startBackgroundCheckpoints(): void {
    if (!this.checkpointer && !this.readonly && this.store instanceof SqliteMeta) this.checkpointer = new BackgroundCheckpointer(this.store.db, this.file);
  }

  close(): void {
    this.checkpointer?.stop();
    this.checkpointer = undefined;
    this.ancestors?.close();
    this.ancestors = undefined;
    // A connection to a deleted vault is left to the process's end (see fileReplaced).
    if (this.store.isOpen && !this.store.fileReplaced()) this.store.close();
  }
}
