/** One open vault file: its database, inode layer and journal. */
import { lstatSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';
import { BackgroundCheckpointer } from './checkpointer';
import { Checkpoints } from './checkpoints';
import type { ChunkFallback } from './chunks';
import { createDbFile, type Db, fileReplaced, openDb, readOnlyOnDisk } from './db';
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
    readonly db: Db,
    /** Why the vault cannot be written (read-only open, or read-only on disk); undefined if it can. */
    readonly readonlyReason: string | undefined,
    surface: Surface,
  ) {
    this.inodes = new InodeStore(db);
    this.journal = new Journal(db, surface);
    this.checkpoints = new Checkpoints(db, this.journal, this.inodes.quotas);
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
    const db = openDb(file, { readonly: reason !== undefined, olderSchemaOk: !!opts.readonly && !!opts.olderSchemaOk });
    return new Vault(name, file, db, reason, opts.surface ?? 'cli');
  }

  static create(name: string, file: string, surface: Surface = 'cli'): Vault {
    const db = createDbFile(file);
    const v = new Vault(name, file, db, undefined, surface);
    v.inodes.initialize();
    return v;
  }

  get readonly(): boolean {
    return this.readonlyReason !== undefined;
  }

  meta(key: string): string | undefined {
    return this.db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?').get(key)?.value;
  }

  setMeta(key: string, value: string | null): void {
    if (value === null) this.db.prepare('DELETE FROM meta WHERE key = ?').run(key);
    else this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(key, value);
  }

  /** For long-lived processes: move WAL checkpoints (and their syncs) off the writers' commits. */
  startBackgroundCheckpoints(): void {
    if (!this.checkpointer && !this.readonly) this.checkpointer = new BackgroundCheckpointer(this.db, this.file);
  }

  close(): void {
    this.checkpointer?.stop();
    this.checkpointer = undefined;
    this.ancestors?.close();
    this.ancestors = undefined;
    // A connection to a deleted vault is left to the process's end (see fileReplaced).
    if (this.db.open && !fileReplaced(this.db)) this.db.close();
  }
}
