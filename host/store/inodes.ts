/**
 * The inode layer of a vault: inodes, directory entries, symlinks and file content as extents of
 * content-addressed chunks. Everything here speaks inode numbers and names, never paths; the
 * path layer (host/vfs) sits on top. Mutators run inside the caller's IMMEDIATE transaction
 * (they open one themselves when called alone) and keep the live counters and quotas in step.
 */
import { AvfsError } from '../protocol/errors';
import type { Quotas } from '../protocol/vault';
import { ChunkStore, hashChunk } from './chunks';
import { QuotaBook } from './quota';
import { CHUNK_SIZE, ROOT_INO } from './schema';
import { LIVE, type MetaStore, type NewName } from './backend';

export const S_IFMT = 0o170000;
export const S_IFREG = 0o100000;
export const S_IFDIR = 0o040000;
export const S_IFLNK = 0o120000;
export const S_IFIFO = 0o010000;
export const S_IFSOCK = 0o140000;
export const S_ISGID = 0o2000;

/**
 * What an inode is. FIFOs and Unix sockets are kept as inodes (type, mode, owner, times) so a
 * mount can hold them; the kernel carries their traffic, so they never have content here.
 */
export type Kind = 'file' | 'directory' | 'symlink' | 'fifo' | 'socket' | 'other';

export interface Attr {
  ino: number;
  mode: number;
  uid: number;
  gid: number;
  nlink: number;
  size: number;
  atime: bigint;
  mtime: bigint;
  ctime: bigint;
}

export interface InodeRow {
  ino: number;
  mode: number;
  uid: number;
  gid: number;
  nlink: number;
  size: number;
  atime_s: number;
  atime_ns: number;
  mtime_s: number;
  mtime_ns: number;
  ctime_s: number;
  ctime_ns: number;
}

export interface Dirent {
  name: string;
  ino: number;
}

export function kindOf(mode: number): Kind {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return 'file';
    case S_IFDIR:
      return 'directory';
    case S_IFLNK:
      return 'symlink';
    case S_IFIFO:
      return 'fifo';
    case S_IFSOCK:
      return 'socket';
    default:
      return 'other';
  }
}

const NS = 1_000_000_000n;
let lastNow = 0n;
/** Wall-clock nanoseconds, strictly increasing within this process. */
export function nowNs(): bigint {
  let t = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  if (t <= lastNow) t = lastNow + 1n;
  lastNow = t;
  return t;
}
const split = (t: bigint): [number, number] => [Number(t / NS), Number(t % NS)];
const join = (s: number, ns: number): bigint => BigInt(s) * NS + BigInt(ns);

export function rowToAttr(r: InodeRow): Attr {
  return {
    ino: r.ino,
    mode: r.mode,
    uid: r.uid,
    gid: r.gid,
    nlink: r.nlink,
    size: r.size,
    atime: join(r.atime_s, r.atime_ns),
    mtime: join(r.mtime_s, r.mtime_ns),
    ctime: join(r.ctime_s, r.ctime_ns),
  };
}

/** What a path walk carries of a directory it passes through. */
export interface DirRef {
  ino: number;
  mode: number;
  gid: number;
}

/** What a whole-file read's path walk carries of the entry it ends at: its inode, type, size, and piece 0 when the lookup joined it. */
export interface FileRef extends DirRef {
  size: number;
  /** Piece 0 as the lookup found it (null: the inode has none); undefined when the lookup did not join it. */
  piece0?: { hash: Buffer; data: Buffer | undefined; inline: boolean } | null;
}

export interface NewInode {
  mode: number;
  uid?: number;
  gid?: number;
  /** For symlinks. */
  target?: string;
  /** Charged to quotas and reported in QuotaExceeded. */
  pathForErrors: string;
  /** The parent directory's inode, type and group, when the caller has just read them in this transaction. */
  parentAttr?: DirRef;
}

/** Where an entry of a batch goes, or what it links to: a live inode, or an earlier entry of the batch. */
export type BatchRef = { ino: number } | { entry: number };

/** One path of `InodeStore.createMany`. */
export interface BatchEntry {
  /** A directory: a live one, or one made earlier in the batch. */
  parent: BatchRef;
  name: string;
  /** Type and permission bits (ignored for a hard link). */
  mode: number;
  /** For regular files. */
  data?: Uint8Array;
  /** For symlinks. */
  target?: string;
  /** A regular file's modification time (default: now). */
  mtime?: bigint;
  /** Another name of this file (a hard link) instead of a new inode. */
  link?: BatchRef;
  /** Charged to quotas and reported in QuotaExceeded. */
  pathForErrors: string;
}

/** Who a new inode belongs to. */
export interface Owner {
  uid: number;
  gid: number;
}

export interface SetAttr {
  mode?: number;
  uid?: number;
  gid?: number;
  atime?: bigint;
  mtime?: bigint;
}

const asBuffer = (data: Uint8Array): Buffer => (Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));

const defaultUid = typeof process.getuid === 'function' ? process.getuid() : 0;
const defaultGid = typeof process.getgid === 'function' ? process.getgid() : 0;

export class InodeStore {
  readonly chunks: ChunkStore;
  readonly quotas: QuotaBook;

  /** Pieces up to this size go into their extent row (MetaStore.inlineMax; 0: never). */
  private readonly inlineMax: number;

  constructor(readonly meta: MetaStore) {
    this.chunks = new ChunkStore(meta);
    this.quotas = new QuotaBook(meta);
    this.inlineMax = meta.upsertInline ? (meta.inlineMax ?? 0) : 0;
  }

  /** Writes the root directory and counters into a freshly migrated vault. */
  initialize(): void {
    this.meta.write(() => {
      if (this.meta.inode(LIVE, ROOT_INO)) return;
      const [s, ns] = split(nowNs());
      this.meta.insertInode(ROOT_INO, S_IFDIR | 0o755, defaultUid, defaultGid, 2, 0, s, ns);
      this.meta.initCounters(ROOT_INO + 1);
      this.meta.setMeta('chunk_size', String(CHUNK_SIZE));
      this.meta.setMeta('created_at', new Date().toISOString());
    });
  }

  private readonly liveBytes = (): number => this.counters().liveBytes;

  counters(): { liveBytes: number; liveInodes: number } {
    const c = this.meta.counters();
    if (!c) throw new AvfsError('StorageError', 'vault file has no counters row (not initialised)');
    return { liveBytes: c.live_bytes, liveInodes: c.live_inodes };
  }

  // ---- reading ----

  getattr(ino: number): Attr | undefined {
    const r = this.meta.inode(LIVE, ino);
    return r ? rowToAttr(r) : undefined;
  }

  mustGetattr(ino: number): Attr {
    const a = this.getattr(ino);
    if (!a) throw new AvfsError('StorageError', `dangling inode ${ino}`, { ino });
    return a;
  }

  lookup(parent: number, name: string): number | undefined {
    return this.meta.child(LIVE, parent, name);
  }

  /** The inode, type and group of `parent/name` (what a path walk needs of a directory on the way), or undefined. */
  lookupDir(parent: number, name: string): DirRef | undefined {
    if (this.meta.childRef) return this.meta.childRef(parent, name);
    const r = this.meta.childAttr(parent, name);
    return r ? { ino: r.ino, mode: r.mode, gid: r.gid } : undefined;
  }

  /** The attributes of `parent/name` in one statement, or undefined. */
  lookupAttr(parent: number, name: string): Attr | undefined {
    const r = this.meta.childAttr(parent, name);
    return r ? rowToAttr(r) : undefined;
  }

  /**
   * What a whole-file read needs of `parent/name`, or undefined: its inode, type, group and size,
   * with piece 0 joined in the same statement where the backend can (MetaStore.childWithPiece).
   */
  lookupFile(parent: number, name: string): FileRef | undefined {
    if (this.meta.childWithPiece) {
      const r = this.meta.childWithPiece(parent, name);
      if (!r) return undefined;
      return { ino: r.ino, mode: r.mode, gid: r.gid, size: r.size, piece0: r.hash === undefined ? null : { hash: r.hash, data: r.data, inline: r.inline } };
    }
    const r = this.meta.childAttr(parent, name);
    return r ? { ino: r.ino, mode: r.mode, gid: r.gid, size: r.size } : undefined;
  }

  readdir(ino: number): Dirent[] {
    return this.meta.children(LIVE, ino);
  }

  /** A directory's entries with their attributes, sorted by name, in one statement. */
  readdirAttrs(ino: number): Array<{ name: string; attr: Attr }> {
    return this.meta.childrenAttrs(LIVE, ino).map((r) => ({ name: r.name, attr: rowToAttr(r) }));
  }

  hasChildren(ino: number): boolean {
    return this.meta.hasChildren(ino);
  }

  readlink(ino: number): string | undefined {
    return this.meta.symlink(LIVE, ino);
  }

  /** Reads up to `length` bytes at `offset`; holes and the tail of short chunks read as zeros. */
  read(ino: number, offset: number, length: number, knownSize?: number, piece0?: FileRef['piece0']): Buffer {
    const size = knownSize ?? this.mustGetattr(ino).size;
    const end = Math.min(size, offset + length);
    if (end <= offset) return Buffer.alloc(0);
    const rows = this.pieces(ino, Math.floor(offset / CHUNK_SIZE), Math.floor((end - 1) / CHUNK_SIZE), piece0);
    // A whole file in one piece: the row's own copy (a fresh buffer) is the answer.
    const only = rows.length === 1 ? rows[0]! : undefined;
    if (only?.own && only.idx === 0 && offset === 0 && only.data.length === end) return only.data;
    const out = Buffer.alloc(end - offset);
    for (const { idx, data } of rows) {
      const chunkStart = idx * CHUNK_SIZE;
      const from = Math.max(offset, chunkStart);
      const to = Math.min(end, chunkStart + data.length);
      if (to > from) data.copy(out, from - offset, from - chunkStart, to - chunkStart);
    }
    return out;
  }

  /**
   * The pieces `first..last` of a live file, checked against their hashes, in index order (holes
   * left out). `own`: the buffer is this call's copy (the backend joined it to its extent row: an
   * inline piece or this file's chunk). A piece that cannot be found is StorageError.
   */
  pieces(ino: number, first: number, last: number, piece0?: FileRef['piece0']): Array<{ idx: number; data: Buffer; own: boolean }> {
    // Piece 0 as the path lookup joined it (lookupFile), when it did: those pieces are not read again.
    const head = piece0 !== undefined && first === 0 ? (piece0 === null ? [] : [{ idx: 0, ...piece0 }]) : undefined;
    const from = head ? 1 : first;
    // One statement where the backend joins extents to their bytes; else an extent list, then each chunk.
    const joined = from > last ? [] : this.meta.extentsWithData?.(ino, from, last);
    const rest = joined ?? this.meta.extents(LIVE, ino, from, last).map((e) => ({ ...e, data: this.meta.chunkGet(e.hash), inline: false }));
    const rows = head ? (rest.length > 0 ? [...head, ...rest] : head) : rest;
    return rows.map(({ idx, hash, data: held, inline }) => {
      const data = this.chunks.checked(hash, held, inline ? `${ino}:${idx}` : undefined);
      if (!data) throw new AvfsError('StorageError', `missing chunk ${hash.toString('hex')} of inode ${ino}`, { ino });
      // Bytes a joined statement gave (head, or extentsWithData) are this call's copy.
      return { idx, data, own: held !== undefined && ((head !== undefined && idx === 0) || joined !== undefined) };
    });
  }

  /** Piece `idx` of a live file (checked), or undefined for a hole. */
  private pieceAt(ino: number, idx: number): Buffer | undefined {
    if (this.meta.extentsWithData) {
      const r = this.meta.extentsWithData(ino, idx, idx)[0];
      return r ? this.chunks.checked(r.hash, r.data, r.inline ? `${ino}:${idx}` : undefined) : undefined;
    }
    const h = this.meta.extent(ino, idx);
    return h ? this.chunks.get(h) : undefined;
  }

  /** Sets piece `idx` of `ino`: in its extent row when small enough (SQLite), else as a chunk. */
  private putPiece(ino: number, idx: number, piece: Uint8Array): void {
    if (piece.length <= this.inlineMax) this.meta.upsertInline!(ino, idx, hashChunk(piece), asBuffer(piece));
    else this.meta.upsertExtent(ino, idx, this.chunks.put(piece));
  }

  readAll(ino: number, knownSize?: number): Buffer {
    const size = knownSize ?? this.mustGetattr(ino).size;
    return this.read(ino, 0, size, size);
  }

  /** A live file's whole content, from what lookupFile() found of it (piece 0 not read again when it came with it). */
  readFile(ref: FileRef): Buffer {
    return this.read(ref.ino, 0, ref.size, ref.size, ref.piece0);
  }

  // ---- creating and linking ----

  /** Creates an inode and links it as `parent/name`. The caller has checked that the name is free. */
  create(parent: number, name: string, spec: NewInode): Attr {
    return this.meta.write(() => this.insert(parent, name, spec, this.quotas.get(), 0));
  }

  /**
   * Creates a regular file with its content, as create() and writeAll() would, with the inode
   * written once at its final size (the small-file write: fewer statements per transaction).
   */
  createFile(parent: number, name: string, spec: NewInode, data: Uint8Array): Attr {
    return this.meta.write(() => {
      const q = this.quotas.get();
      this.quotas.checkBytes(this.liveBytes, data.length, data.length, 0, spec.pathForErrors, q);
      const a = this.insert(parent, name, spec, q, data.length);
      for (let off = 0, idx = 0; off < data.length; off += CHUNK_SIZE, idx++) this.putPiece(a.ino, idx, data.subarray(off, off + CHUNK_SIZE));
      return a;
    });
  }

  private insert(parent: number, name: string, spec: NewInode, q: Quotas, contentSize: number): Attr {
    this.quotas.checkInodes(() => this.counters().liveInodes, 1, spec.pathForErrors, q);
    // A regular file's content is counted with its inode: one counters update.
    const ino = this.meta.takeIno(contentSize);
    const now = nowNs();
    const [s, ns] = split(now);
    const isDir = (spec.mode & S_IFMT) === S_IFDIR;
    const size = spec.target !== undefined ? Buffer.byteLength(spec.target) : contentSize;
    const uid = spec.uid ?? defaultUid;
    // As on a local file system, a set-group-ID directory gives what is made in it its group,
    // and new directories its set-group-ID bit (shared project directories rely on it).
    const pa = spec.parentAttr ?? this.mustGetattr(parent);
    const inherit = (pa.mode & S_ISGID) !== 0;
    const gid = inherit ? pa.gid : (spec.gid ?? defaultGid);
    const mode = inherit && isDir ? spec.mode | S_ISGID : spec.mode;
    const nlink = isDir ? 2 : 1;
    this.meta.insertInode(ino, mode, uid, gid, nlink, size, s, ns);
    if (spec.target !== undefined) this.meta.insertSymlink(ino, spec.target);
    this.meta.insertDentry(parent, name, ino);
    this.touchDir(parent, isDir ? 1 : 0, now);
    return { ino, mode, uid, gid, nlink, size, atime: now, mtime: now, ctime: now };
  }

  /**
   * Creates many paths in one go (a working copy's commit-back): the same inodes, entries,
   * counters, quota checks and parents' times as `create`, `link` and `writeAll` one by one, with
   * one quota check and one counter update for the batch, and each row written once. Returns each
   * entry's inode. The caller has checked that the names are free.
   */
  createMany(entries: readonly BatchEntry[]): number[] {
    if (entries.length === 0) return [];
    return this.meta.write(() => {
      let count = 0;
      let bytes = 0;
      let largest: BatchEntry | undefined;
      for (const e of entries) {
        if (e.link) continue;
        count++;
        const size = e.data?.length ?? 0;
        bytes += size;
        if (size > (largest?.data?.length ?? -1)) largest = e;
      }
      this.quotas.checkInodes(() => this.counters().liveInodes, count, entries[0]!.pathForErrors);
      if (largest) this.quotas.checkBytes(this.liveBytes, bytes, largest.data?.length ?? 0, 0, largest.pathForErrors);
      const c = this.meta.counters();
      if (!c) throw new AvfsError('StorageError', 'vault file has no counters row (not initialised)');
      this.meta.setCounters({ live_bytes: c.live_bytes + bytes, live_inodes: c.live_inodes + count, next_ino: c.next_ino + count });

      const now = nowNs();
      const [s, ns] = split(now);
      const inos: number[] = [];
      const rows: NewName[] = [];
      /** Existing parents (their attributes, subdirectories added) and existing files linked again (names added). */
      const parents = new Map<number, { attr: Attr; subdirs: number }>();
      const relinked = new Map<number, number>();
      const parentAttr = (ino: number) => {
        let p = parents.get(ino);
        if (!p) parents.set(ino, (p = { attr: this.mustGetattr(ino), subdirs: 0 }));
        return p;
      };
      let next = c.next_ino;
      for (const e of entries) {
        const parent = 'ino' in e.parent ? e.parent.ino : inos[e.parent.entry]!;
        const name: NewName = { parent, name: e.name, ino: 0 };
        // The parent's mode and group: a live directory's, or the row made for it above.
        const pRow = 'ino' in e.parent ? undefined : rows[e.parent.entry]!.row!;
        const pMode = pRow ? pRow.mode : parentAttr(parent).attr.mode;
        const pGid = pRow ? pRow.gid : parentAttr(parent).attr.gid;
        if (e.link) {
          name.ino = 'ino' in e.link ? e.link.ino : inos[e.link.entry]!;
          if ('ino' in e.link) relinked.set(name.ino, (relinked.get(name.ino) ?? 0) + 1);
          else rows[e.link.entry]!.row!.nlink++;
        } else {
          const isDir = (e.mode & S_IFMT) === S_IFDIR;
          const inherit = (pMode & S_ISGID) !== 0;
          const mode = inherit && isDir ? e.mode | S_ISGID : e.mode;
          const size = e.target !== undefined ? Buffer.byteLength(e.target) : (e.data?.length ?? 0);
          const [ms, mns] = e.mtime !== undefined ? split(e.mtime) : [s, ns];
          name.ino = next++;
          name.row = { ino: name.ino, mode, uid: defaultUid, gid: inherit ? pGid : defaultGid, nlink: isDir ? 2 : 1, size, atime_s: s, atime_ns: ns, mtime_s: ms, mtime_ns: mns, ctime_s: s, ctime_ns: ns };
          if (e.target !== undefined) name.target = e.target;
          if (e.data && e.data.length > 0 && e.data.length <= this.inlineMax) {
            name.inline = { hash: hashChunk(e.data), data: asBuffer(e.data) };
          } else if (e.data && e.data.length > 0) {
            name.extents = [];
            for (let off = 0; off < e.data.length; off += CHUNK_SIZE) {
              const piece = e.data.subarray(off, off + CHUNK_SIZE);
              const hash = hashChunk(piece);
              this.meta.chunkPut(hash, piece);
              name.extents.push(hash);
            }
          }
          if (isDir) {
            if (pRow) pRow.nlink++;
            else parentAttr(parent).subdirs++;
          }
        }
        if (!pRow) parentAttr(parent);
        inos.push(name.ino);
        rows.push(name);
      }
      if (this.meta.insertNames) this.meta.insertNames(rows);
      else {
        for (const n of rows) {
          const r = n.row;
          if (r) {
            this.meta.insertInode(r.ino, r.mode, r.uid, r.gid, r.nlink, r.size, s, ns);
            if (r.mtime_s !== s || r.mtime_ns !== ns) this.meta.setAttrs(r.ino, r.mode, r.uid, r.gid, s, ns, r.mtime_s, r.mtime_ns, s, ns);
            if (n.target !== undefined) this.meta.insertSymlink(n.ino, n.target);
            n.extents?.forEach((h, idx) => this.meta.upsertExtent(n.ino, idx, h));
            if (n.inline) this.meta.upsertInline!(n.ino, 0, n.inline.hash, n.inline.data);
          }
          this.meta.insertDentry(n.parent, n.name, n.ino);
        }
      }
      for (const [ino, added] of relinked) this.meta.setNlink(ino, this.mustGetattr(ino).nlink + added, s, ns);
      for (const [ino, p] of parents) {
        if (p.subdirs !== 0) this.meta.setNlink(ino, p.attr.nlink + p.subdirs, s, ns);
        this.meta.touchMC(ino, s, ns);
      }
      return inos;
    });
  }

  /** Adds another name for a non-directory inode (a hard link). */
  link(ino: number, parent: number, name: string): Attr {
    return this.meta.write(() => {
      const a = this.mustGetattr(ino);
      const now = nowNs();
      const [s, ns] = split(now);
      this.meta.insertDentry(parent, name, ino);
      this.meta.setNlink(ino, a.nlink + 1, s, ns);
      this.touchDir(parent, 0, now);
      return this.mustGetattr(ino);
    });
  }

  /**
   * Removes the name `parent/name`. When that was the inode's last link its content is dropped
   * (unless `keepOrphan`: FUSE keeps an unlinked-but-open file until its last handle closes).
   */
  unlink(parent: number, name: string, opts: { keepOrphan?: boolean } = {}): { ino: number; freed: boolean } {
    return this.meta.write(() => {
      const ino = this.lookup(parent, name);
      if (ino === undefined) throw new AvfsError('NotFound', `no entry ${name} in inode ${parent}`);
      const a = this.mustGetattr(ino);
      const isDir = kindOf(a.mode) === 'directory';
      this.meta.deleteDentry(parent, name);
      const now = nowNs();
      this.touchDir(parent, isDir ? -1 : 0, now);
      const remaining = isDir ? 0 : a.nlink - 1;
      if (remaining > 0 || opts.keepOrphan) {
        const [s, ns] = split(now);
        this.meta.setNlink(ino, Math.max(remaining, 0), s, ns);
        if (remaining > 0) return { ino, freed: false };
      }
      if (opts.keepOrphan && !isDir) return { ino, freed: false };
      this.dropInode(a);
      return { ino, freed: true };
    });
  }

  /** Drops an inode whose last name is gone (an orphan kept open, or a just-unlinked file). */
  dropInode(a: Attr): void {
    this.meta.write(() => {
      if (kindOf(a.mode) === 'file') this.meta.addBytes(-a.size);
      this.meta.deleteExtents(a.ino);
      this.meta.deleteSymlink(a.ino);
      this.meta.deleteInode(a.ino);
      this.meta.addInodes(-1);
    });
  }

  /** Frees the inode if it has no names left (an unlinked file whose last handle closed). */
  releaseOrphan(ino: number): void {
    this.meta.write(() => {
      const a = this.getattr(ino);
      if (a && a.nlink === 0 && kindOf(a.mode) !== 'directory') this.dropInode(a);
    });
  }

  /**
   * Moves `srcParent/srcName` to `dstParent/dstName`, replacing what is there (POSIX rename).
   * The caller has checked type compatibility and that a replaced directory is empty.
   */
  rename(srcParent: number, srcName: string, dstParent: number, dstName: string): void {
    this.meta.write(() => {
      const ino = this.lookup(srcParent, srcName);
      if (ino === undefined) throw new AvfsError('NotFound', `no entry ${srcName}`);
      const existing = this.lookup(dstParent, dstName);
      if (existing === ino) return;
      if (existing !== undefined) this.unlink(dstParent, dstName);
      this.meta.moveDentry(srcParent, srcName, dstParent, dstName);
      const now = nowNs();
      const isDir = kindOf(this.mustGetattr(ino).mode) === 'directory';
      const [s, ns] = split(now);
      this.meta.touchC(ino, s, ns);
      this.touchDir(srcParent, isDir && srcParent !== dstParent ? -1 : 0, now);
      if (dstParent !== srcParent) this.touchDir(dstParent, isDir ? 1 : 0, now);
    });
  }

  // ---- content ----

  /** Writes `data` at `offset`, growing the file (with a hole if past the end). */
  write(ino: number, offset: number, data: Uint8Array, pathForErrors: string): Attr {
    return this.meta.write(() => {
      const a = this.mustGetattr(ino);
      const end = offset + data.length;
      const newSize = Math.max(a.size, end);
      this.quotas.checkBytes(this.liveBytes, newSize - a.size, newSize, a.size, pathForErrors);
      let pos = 0;
      while (pos < data.length) {
        const fileOff = offset + pos;
        const idx = Math.floor(fileOff / CHUNK_SIZE);
        const inChunk = fileOff - idx * CHUNK_SIZE;
        const n = Math.min(CHUNK_SIZE - inChunk, data.length - pos);
        let chunk: Uint8Array;
        if (inChunk === 0 && (n === CHUNK_SIZE || fileOff + n >= a.size)) {
          // Whole chunk, or the new tail of the file: nothing old to keep.
          chunk = data.subarray(pos, pos + n);
        } else {
          const oldLen = Math.max(0, Math.min(CHUNK_SIZE, a.size - idx * CHUNK_SIZE));
          const merged = Buffer.alloc(Math.max(oldLen, inChunk + n));
          if (oldLen > 0) {
            const old = this.pieceAt(ino, idx);
            if (old) old.copy(merged, 0, 0, Math.min(old.length, oldLen));
          }
          merged.set(data.subarray(pos, pos + n), inChunk);
          chunk = merged;
        }
        this.putPiece(ino, idx, chunk);
        pos += n;
      }
      const [s, ns] = split(nowNs());
      this.meta.setSize(ino, newSize, s, ns);
      if (newSize !== a.size) this.meta.addBytes(newSize - a.size);
      return { ...a, size: newSize };
    });
  }

  /** Sets the file's size: drops chunks past the end, trims a partial last chunk, or leaves a hole. */
  truncate(ino: number, size: number, pathForErrors: string): Attr {
    return this.meta.write(() => {
      const a = this.mustGetattr(ino);
      this.quotas.checkBytes(this.liveBytes, size - a.size, size, a.size, pathForErrors);
      if (size < a.size) {
        const keep = Math.ceil(size / CHUNK_SIZE);
        this.meta.deleteExtentsFrom(ino, keep);
        const tail = size % CHUNK_SIZE;
        if (tail !== 0) {
          // Trim the last chunk so that growing the file again reads zeros, not old bytes.
          const idx = keep - 1;
          const old = this.pieceAt(ino, idx);
          if (old && old.length > tail) this.putPiece(ino, idx, old.subarray(0, tail));
        }
      }
      const [s, ns] = split(nowNs());
      this.meta.setSize(ino, size, s, ns);
      if (size !== a.size) this.meta.addBytes(size - a.size);
      return { ...a, size };
    });
  }

  /** Replaces the whole content of a file (`known`: its attributes, when the caller has them). */
  writeAll(ino: number, data: Uint8Array, pathForErrors: string, known?: Attr): Attr {
    return this.meta.write(() => {
      const a = known ?? this.mustGetattr(ino);
      this.quotas.checkBytes(this.liveBytes, data.length - a.size, data.length, a.size, pathForErrors);
      if (a.size > 0) this.meta.deleteExtents(ino);
      for (let off = 0, idx = 0; off < data.length; off += CHUNK_SIZE, idx++) this.putPiece(ino, idx, data.subarray(off, off + CHUNK_SIZE));
      const now = nowNs();
      const [s, ns] = split(now);
      this.meta.setSize(ino, data.length, s, ns);
      if (data.length !== a.size) this.meta.addBytes(data.length - a.size);
      return { ...a, size: data.length, mtime: now, ctime: now };
    });
  }

  /** Makes `dst`'s content the same as `src`'s by sharing chunks (no bytes are copied). */
  copyContent(src: number, dst: number, pathForErrors: string): void {
    if (src === dst) return;
    this.meta.write(() => {
      const a = this.mustGetattr(src);
      const d = this.mustGetattr(dst);
      this.quotas.checkBytes(this.liveBytes, a.size - d.size, a.size, d.size, pathForErrors);
      this.meta.deleteExtents(dst);
      this.meta.copyExtents(src, dst);
      const [s, ns] = split(nowNs());
      this.meta.setSize(dst, a.size, s, ns);
      this.meta.addBytes(a.size - d.size);
    });
  }

  setattr(ino: number, attrs: SetAttr): Attr {
    return this.meta.write(() => {
      const a = this.mustGetattr(ino);
      const mode = attrs.mode === undefined ? a.mode : (a.mode & S_IFMT) | (attrs.mode & 0o7777);
      const atime = attrs.atime ?? a.atime;
      const mtime = attrs.mtime ?? a.mtime;
      const [as, ans] = split(atime);
      const [ms, mns] = split(mtime);
      const [cs, cns] = split(nowNs());
      this.meta.setAttrs(ino, mode, attrs.uid ?? a.uid, attrs.gid ?? a.gid, as, ans, ms, mns, cs, cns);
      return this.mustGetattr(ino);
    });
  }

  private touchDir(dir: number, subdirDelta: number, now: bigint): void {
    const [s, ns] = split(now);
    if (subdirDelta !== 0) {
      const a = this.mustGetattr(dir);
      this.meta.setNlink(dir, a.nlink + subdirDelta, s, ns);
    }
    this.meta.touchMC(dir, s, ns);
  }
}
