/**
 * Content-addressed chunk storage. A chunk is at most CHUNK_SIZE bytes, named by its SHA-256,
 * stored once per vault file. A fork reads chunks it does not hold from its ancestors' files.
 */
import type Database from 'better-sqlite3';
import type { Db } from './db';

let crypto: typeof import('node:crypto') | undefined;

/**
 * node:crypto loads on the first hash: a call that opens a vault only to read it (`policy check`
 * reading the vault's rules, `cat`, `ls`) never hashes, and loading it costs a cold call ~2 ms.
 */
export function hashChunk(data: Uint8Array): Buffer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  crypto ??= require('node:crypto') as typeof import('node:crypto');
  return crypto.createHash('sha256').update(data).digest();
}

/** Where chunks this vault does not hold itself are found (a fork's ancestors), nearest first. */
export interface ChunkFallback {
  getChunk(hash: Buffer): Buffer | undefined;
}

export class ChunkStore {
  private readonly getStmt: Database.Statement<[Buffer], { data: Buffer }>;
  private readonly putStmt: Database.Statement<[Buffer, Uint8Array]>;

  constructor(
    db: Db,
    private fallback: ChunkFallback | undefined = undefined,
  ) {
    this.getStmt = db.prepare('SELECT data FROM chunks WHERE hash = ?');
    this.putStmt = db.prepare('INSERT OR IGNORE INTO chunks (hash, data) VALUES (?, ?)');
  }

  setFallback(fallback: ChunkFallback | undefined): void {
    this.fallback = fallback;
  }

  /** Stores `data` (SQLite copies it) unless a chunk with the same hash is already here; returns the hash. */
  put(data: Uint8Array): Buffer {
    const hash = hashChunk(data);
    this.putStmt.run(hash, Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return hash;
  }

  get(hash: Buffer): Buffer | undefined {
    return this.getStmt.get(hash)?.data ?? this.fallback?.getChunk(hash);
  }
}
