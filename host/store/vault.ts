/** One open vault file: its database, inode layer and journal. */
import { existsSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';
import { BackgroundCheckpointer } from './checkpointer';
import { Checkpoints } from './checkpoints';
import type { ChunkFallback } from './chunks';
import { createDbFile, type Db, openDb } from './db';
import { InodeStore } from './inodes';
import { Journal, type Surface } from './journal';

export interface VaultOpenOptions {
  readonly?: boolean;
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
    readonly readonly: boolean,
    surface: Surface,
  ) {
    this.inodes = new InodeStore(db);
    this.journal = new Journal(db, surface);
    this.checkpoints = new Checkpoints(db, this.journal);
  }

  /** For a fork: where the chunks it does not hold are read from. */
  attachAncestors(ancestors: ChunkFallback & { close(): void }): void {
    this.ancestors?.close();
    this.ancestors = ancestors;
    this.inodes.chunks.setFallback(ancestors);
  }

  static open(name: string, file: string, opts: VaultOpenOptions = {}): Vault {
    if (!existsSync(file)) throw new AvfsError('VaultNotFound', `vault not found: ${name}`, { vault: name });
    const db = openDb(file);
    return new Vault(name, file, db, opts.readonly ?? false, opts.surface ?? 'cli');
  }

  static create(name: string, file: string, surface: Surface = 'cli'): Vault {
    const db = createDbFile(file);
    const v = new Vault(name, file, db, false, surface);
    v.inodes.initialize();
    return v;
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
    if (this.db.open) this.db.close();
  }
}
