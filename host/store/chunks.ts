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

/**
 * How reads check chunks: `once` (what avfs does) hashes a chunk the first time this process reads
 * it while no other connection has committed, `every` on every read, `off` never. Only
 * bench/chunkCheck.ts, which measures what the check costs, sets another (AVFS_BENCH_CHUNK_CHECK).
 */
export type ChunkCheck = 'once' | 'every' | 'off';
let chunkCheck: ChunkCheck = (['every', 'off'] as const).find((c) => c === process.env.AVFS_BENCH_CHUNK_CHECK) ?? 'once';

/** For bench/chunkCheck.ts, in its own process. */
export function setChunkCheckForBench(check: ChunkCheck): void {
  chunkCheck = check;
}

/** Past this many verified chunks (4 GiB of them) the set starts again: bounded memory. */
const VERIFIED_MAX = 65_536;

export class ChunkStore {
  /**
   * Chunks of this vault file already found to match their hash, while the file's change version
   * (another connection's commit moves it: an edit of the file through SQLite or LMDB) is
   * `verifiedAt`. Hashing is most of a read's cost (docs/performance.md, "Chunk check"); a chunk
   * read again (a file read twice, FUSE reading a chunk in pieces) is not hashed again.
   */
  private verified = new Set<string>();
  private verifiedAt = -1;

  constructor(
    private readonly table: ChunkTable & Pick<MetaStore, 'markDamaged' | 'changeVersion'>,
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

  /**
   * get() for a chunk whose bytes this file's row gave with its extent (`own`), if it had them.
   * `copy`: where `own` came from when that is not the chunk table (an inline extent row, SQLite
   * schema 6: `ino:idx`). Each inline row is its own copy of its piece, so a check of one copy, or
   * of the chunk table's, must not pass another with the same hash.
   */
  checked(hash: Buffer, own: Buffer | undefined, copy?: string): Buffer | undefined {
    const data = own ?? this.fallback?.getChunk(hash);
    if (!data || chunkCheck === 'off') return data;
    // A fork's ancestor's chunk is checked at every read: this file's version does not follow the ancestor's.
    const key = own && chunkCheck === 'once' ? this.verifiedKey(hash, copy) : undefined;
    if (key !== undefined && this.verified.has(key)) return data;
    if (!hashChunk(data).equals(hash)) {
      const hex = hash.toString('hex');
      this.table.markDamaged(`${new Date().toISOString()} chunk ${hex} does not match its SHA-256`);
      throw new AvfsError('StorageError', `damaged vault: a chunk of this file (${hex.slice(0, 16)}…) does not match its SHA-256; its bytes were changed on disk and are not served (other files read on)`, { chunk: hex });
    }
    if (key !== undefined) {
      if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
      this.verified.add(key);
    }
    return data;
  }

  /** The key of the chunk (or of its inline `copy`) in the verified set, the set emptied first if another connection committed since. */
  private verifiedKey(hash: Buffer, copy: string | undefined): string {
    const version = this.table.changeVersion();
    if (version !== this.verifiedAt) {
      this.verified.clear();
      this.verifiedAt = version;
    }
    return copy === undefined ? hash.toString('latin1') : `${hash.toString('latin1')}@${copy}`;
  }
}
