/**
 * Content-addressed chunk storage. A chunk is at most CHUNK_SIZE bytes, named by its SHA-256,
 * stored once per vault file. A fork reads chunks it does not hold from its ancestors' files.
 */
import { AvfsError } from '../protocol/errors';
import type { ChunkTable, MetaStore } from './backend';

let crypto: typeof import('node:crypto') | undefined;

/**
 * node:crypto loads on the first hash: a call that opens a vault only to read it (`policy check`
 * reading the vault's rules, `cat`, `ls`) never hashes, and loading it costs a cold call ~2 ms.
 */
export function hashChunk(data: Uint8Array): Buffer {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  crypto ??= require('node:crypto') as typeof import('node:crypto');
  // crypto.hash (Node 20.12+) is the one-shot form: about half the cost for small chunks.
  return crypto.hash ? (crypto.hash('sha256', data, 'buffer') as unknown as Buffer) : crypto.createHash('sha256').update(data).digest();
}

/** Where chunks this vault does not hold itself are found (a fork's ancestors), nearest first. */
export interface ChunkFallback {
  getChunk(hash: Buffer): Buffer | undefined;
}

export class ChunkStore {
  constructor(
    private readonly table: ChunkTable & Pick<MetaStore, 'markDamaged'>,
    private fallback: ChunkFallback | undefined = undefined,
  ) {}

  setFallback(fallback: ChunkFallback | undefined): void {
    this.fallback = fallback;
  }

  /** Stores `data` (the backend copies it) unless a chunk with the same hash is already here; returns the hash. */
  put(data: Uint8Array): Buffer {
    const hash = hashChunk(data);
    this.table.chunkPut(hash, Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    return hash;
  }

  /**
   * The chunk named `hash`, checked against it: bytes changed on disk (damage, or an edit of the
   * vault file) are never served. A mismatch is StorageError naming the chunk, and the vault is
   * marked (meta `damaged`: when, and the first chunk found); other files, and other chunks of the
   * same file, read on.
   */
  get(hash: Buffer): Buffer | undefined {
    return this.checked(hash, this.table.chunkGet(hash));
  }

  /** get() for a chunk whose bytes this file's row gave with its extent (`data`), if it had them. */
  checked(hash: Buffer, data: Buffer | undefined): Buffer | undefined {
    data ??= this.fallback?.getChunk(hash);
    if (data && !hashChunk(data).equals(hash)) {
      const hex = hash.toString('hex');
      this.table.markDamaged(`${new Date().toISOString()} chunk ${hex} does not match its SHA-256`);
      throw new AvfsError('StorageError', `damaged vault: a chunk of this file (${hex.slice(0, 16)}…) does not match its SHA-256; its bytes were changed on disk and are not served (other files read on)`, { chunk: hex });
    }
    return data;
  }
}
