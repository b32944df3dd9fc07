/**
 * Handle-level operations over the path API, for surfaces that keep files open (FUSE): write or
 * read at an offset of an open inode, truncate it, keep an unlinked-but-open file as an orphan,
 * and a path→inode lookup cache. The rules stay the Vfs's: every mutation goes through
 * `Vfs.mutate` (read-only → ReadOnly, one IMMEDIATE transaction), quotas are checked by the inode
 * layer inside that transaction, and the journal is written here.
 */
import { AvfsError, err } from '../protocol/errors';
import type { MetaStore } from '../store/backend';
import { type Attr, kindOf, type Owner, S_IFREG } from '../store/inodes';
import { checkNewName, NAME_MAX } from './paths';
import { CHUNK_SIZE, ROOT_INO } from '../store/schema';
import type { Vfs } from './vfs';

export interface DirentPlus {
  name: string;
  ino: number;
  mode: number;
}

export class FileIo {
  /** Paths as the kernel hands them (normalised, no symlinks inside) → inode. */
  private readonly cache = new Map<string, number>();
  /** The store's change version when the cache was last known valid: it moves when another connection commits. */
  private cacheVersion = -1;
  private quotaVersion = -1;
  private byteQuota = false;
  private readonly store: MetaStore;

  constructor(readonly vfs: Vfs) {
    this.store = vfs.vault.store;
    this.store.tuneForServer();
  }

  get readonly(): boolean {
    return this.vfs.readonly;
  }

  // ---- group commit ----

  private batchTimer: NodeJS.Timeout | undefined;
  private batchOps = 0;
  /** How many batch() calls are running (nested ones share the outer savepoint's group). */
  private batchDepth = 0;
  /** How long a group of mutations may stay uncommitted, and how many it may hold. */
  batchWindowMs = 4;
  batchMaxOps = 512;

  /**
   * Runs one mutation inside the current group transaction (opening one if needed) as its own
   * savepoint, so a failing mutation leaves nothing behind. The group commits within
   * `batchWindowMs` (or at `batchMaxOps`, `commit()`, fsync, unmount): many small FUSE operations
   * then share one SQLite commit. Readers in other processes see the group when it commits.
   */
  batch<T>(fn: () => T): T {
    const groups = this.store.groups;
    if (this.readonly || this.batchWindowMs <= 0 || !groups) return fn();
    if (!this.store.inTransaction) {
      groups.begin();
      this.batchTimer = setTimeout(() => this.commitOrRollBack(), this.batchWindowMs);
    }
    groups.savepoint();
    this.batchDepth++;
    try {
      const out = fn();
      groups.release();
      return out;
    } catch (e) {
      groups.rollbackTo();
      groups.release();
      this.invalidate();
      throw e;
    } finally {
      this.batchDepth--;
      // Only the outermost batch commits, after its savepoint is released: an inner one committing
      // would end the outer operation's transaction (its RELEASE then fails: "no such savepoint").
      if (++this.batchOps >= this.batchMaxOps && this.batchDepth === 0) this.commit();
    }
  }

  /** From the timer: a failed commit must not take the process down; the group is rolled back. */
  private commitOrRollBack(): void {
    try {
      this.commit();
    } catch (e) {
      this.onCommitError?.(e);
      this.store.groups?.rollback();
      this.invalidate();
    }
  }

  onCommitError: ((e: unknown) => void) | undefined;

  /** Commits the open group transaction, if any. */
  commit(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer);
    this.batchTimer = undefined;
    this.batchOps = 0;
    this.store.groups?.commit();
  }

  /** Forgets every cached path (after this process renamed or removed names). */
  invalidate(): void {
    this.cache.clear();
  }

  private checkVersion(): void {
    const v = this.store.changeVersion();
    if (v !== this.cacheVersion) {
      this.cache.clear();
      this.cacheVersion = v;
    }
  }

  /**
   * The inode at `path`, not following a final symlink (lstat). Paths from the kernel never hold
   * symlinks or `..` inside, so each component is one directory lookup; known prefixes are cached.
   */
  lookup(path: string): number {
    const ino = this.tryLookup(path);
    if (ino === undefined) throw err.notFound(path);
    return ino;
  }

  /** Like lookup, without an exception for a missing name (the kernel asks for many). */
  tryLookup(path: string): number | undefined {
    this.checkVersion();
    return this.lookupCached(path);
  }

  private lookupCached(path: string): number | undefined {
    if (path === '/' || path === '') return ROOT_INO;
    const hit = this.cache.get(path);
    if (hit !== undefined) return hit;
    const slash = path.lastIndexOf('/');
    const parent = slash <= 0 ? ROOT_INO : this.lookupCached(path.slice(0, slash));
    if (parent === undefined) return undefined;
    const ino = this.vfs.inodes.lookup(parent, path.slice(slash + 1));
    if (ino === undefined) return undefined;
    if (this.cache.size > 50_000) this.cache.clear();
    this.cache.set(path, ino);
    return ino;
  }

  /** lstat by path, or undefined when nothing is there. */
  tryStat(path: string): Attr | undefined {
    const ino = this.tryLookup(path);
    if (ino === undefined) return undefined;
    const a = this.attr(ino);
    if (a) return a;
    this.invalidate();
    const again = this.tryLookup(path);
    return again === undefined ? undefined : this.attr(again);
  }

  attr(ino: number): Attr | undefined {
    return this.vfs.inodes.getattr(ino);
  }

  /** lstat by path; a cached inode that vanished is looked up again once. */
  stat(path: string): Attr {
    const ino = this.lookup(path);
    const a = this.attr(ino);
    if (a) return a;
    this.invalidate();
    const again = this.attr(this.lookup(path));
    if (!again) throw err.notFound(path);
    return again;
  }

  readdir(ino: number): DirentPlus[] {
    return this.store.childrenModes(ino);
  }

  /** Opens an existing regular file: refuses directories, and writing on a read-only vault. */
  open(path: string, forWrite: boolean): Attr {
    const a = this.stat(path);
    const kind = kindOf(a.mode);
    if (kind === 'directory') throw err.isDir(path);
    if (kind !== 'file') throw err.invalidInput(`not a regular file: ${path}`, { path });
    if (forWrite && this.readonly) throw err.readOnly(path);
    return a;
  }

  /**
   * Creates an empty regular file (journaled as `create`, as Vfs.writeFile does). The kernel has
   * already resolved symlinks and checked that the name is free, so the parent is found through
   * the lookup cache instead of a walk from the root.
   */
  create(path: string, mode: number, owner?: Owner): Attr {
    return this.vfs.mutate(path, () => {
      const slash = path.lastIndexOf('/');
      const name = path.slice(slash + 1);
      if (Buffer.byteLength(name) > NAME_MAX) {
        throw new AvfsError('NameTooLong', `file name is longer than ${NAME_MAX} bytes`, { path });
      }
      checkNewName(name, path);
      const parent = this.lookup(path.slice(0, slash) || '/');
      const pa = this.attr(parent);
      if (!pa || kindOf(pa.mode) !== 'directory') throw err.notDir(path.slice(0, slash) || '/');
      if (this.vfs.inodes.lookup(parent, name) !== undefined) throw err.exists(path);
      const a = this.vfs.inodes.create(parent, name, { mode: S_IFREG | (mode & 0o7777), ...owner, pathForErrors: path });
      this.vfs.vault.journal.append('create', path, { size: 0 });
      return a;
    });
  }

  /** Writes `data` at `offset` of an open inode. Quotas are checked inside the transaction. */
  writeAt(ino: number, offset: number, data: Uint8Array, path: string): Attr {
    return this.vfs.mutate(path, () => this.vfs.inodes.write(ino, offset, data, path));
  }

  /** Copies up to `length` bytes at `offset` of `ino` into `dst`; returns how many (0 at EOF). */
  readInto(ino: number, offset: number, length: number, dst: Buffer): number {
    if (this.store.inTransaction) return this.readIntoNow(ino, offset, length, dst);
    // One snapshot for size and extents.
    return this.store.read(() => this.readIntoNow(ino, offset, length, dst));
  }

  private readIntoNow(ino: number, offset: number, length: number, dst: Buffer): number {
    {
      const a = this.vfs.inodes.getattr(ino);
      if (!a) throw err.notFound(`inode ${ino}`);
      const end = Math.min(a.size, offset + length);
      if (end <= offset) return 0;
      const n = end - offset;
      // Holes and short chunks read as zeros.
      dst.fill(0, 0, n);
      const first = Math.floor(offset / CHUNK_SIZE);
      const last = Math.floor((end - 1) / CHUNK_SIZE);
      for (const { idx, data } of this.vfs.inodes.pieces(ino, first, last)) {
        const chunkStart = idx * CHUNK_SIZE;
        const from = Math.max(offset, chunkStart);
        const to = Math.min(end, chunkStart + data.length);
        if (to > from) data.copy(dst, from - offset, from - chunkStart, to - chunkStart);
      }
      return n;
    }
  }

  /** ftruncate of an open inode, journaled. */
  truncateAt(ino: number, size: number, path: string): Attr {
    if (!Number.isSafeInteger(size) || size < 0) throw err.invalidInput(`invalid size ${size}`, { size });
    return this.vfs.mutate(path, () => {
      const a = this.vfs.inodes.truncate(ino, size, path);
      this.vfs.vault.journal.append('truncate', path, { size });
      return a;
    });
  }

  /** One journal entry for a handle's writes, written when the handle is flushed. */
  noteWritten(path: string, size: number): void {
    this.vfs.mutate(path, () => this.vfs.vault.journal.append('write', path, { size }));
  }

  /**
   * Removes the name `path` but keeps its inode while handles are open (an orphan with nlink 0
   * when it was the last name). Journaled as `unlink`. Returns the inode.
   */
  unlinkKeepOpen(path: string): number {
    const ino = this.vfs.mutate(path, () => {
      const r = this.vfs.resolve(path, false);
      if (kindOf(r.attr.mode) === 'directory') throw err.isDir(r.path);
      const p = this.vfs.parentOf(r.path, { existing: true });
      this.vfs.inodes.unlink(p.parent, p.name, { keepOrphan: true });
      this.vfs.vault.journal.append('unlink', r.path);
      return r.ino;
    });
    this.invalidate();
    return ino;
  }

  /** Frees an orphan once its last handle is closed. */
  releaseOrphan(ino: number): void {
    this.vfs.vault.store.write(() => this.vfs.inodes.releaseOrphan(ino));
  }

  /** Frees orphans that a crashed process left behind; only safe while nothing else has the vault mounted. */
  sweepOrphans(): number {
    if (this.readonly) return 0;
    return this.vfs.vault.store.write(() => {
      let n = 0;
      for (const ino of this.store.orphans()) {
        const a = this.vfs.inodes.getattr(ino);
        if (a && kindOf(a.mode) !== 'directory') {
          this.vfs.inodes.dropInode(a);
          n++;
        }
      }
      return n;
    });
  }

  /** Whether a byte quota is set (then writes go straight to the store, so the writer sees EDQUOT). */
  hasByteQuota(): boolean {
    const v = this.store.changeVersion();
    if (v !== this.quotaVersion) {
      const q = this.vfs.inodes.quotas.get();
      this.byteQuota = q.max_size_mb !== null || q.max_file_size_mb !== null;
      this.quotaVersion = v;
    }
    return this.byteQuota;
  }
}

