/**
 * The LMDB backend (npm `lmdb`, lmdb-js): a vault is one LMDB environment in single-file mode,
 * `<name>.avfs` with its lock file `<name>.avfs-lock` beside it. Named databases hold the
 * halves of the interface:
 *
 *   meta      key → text                      (quotas, policy, parent, fork records, …)
 *   state     'counters' → [bytes, inodes, next_ino]; 'next_cp', 'next_seq', 'version' → number
 *   inodes    [tree, ino] → [mode, uid, gid, nlink, size, atime_s, atime_ns, mtime_s, mtime_ns, ctime_s, ctime_ns]
 *   dentries  [tree, parent, name] → ino
 *   symlinks  [tree, ino] → target
 *   extents   [tree, ino, idx] → hash
 *   cps       id → checkpoint row;  cpnames  name → id
 *   journal   seq → [ts_ms, op, path, path2, size, surface, details]
 *   chunks    hash → bytes (binary keys and values)
 *
 * `tree` is 0 for the live tree and a checkpoint's id for its copy, so a checkpoint is a copy of
 * key ranges of metadata (never of chunks), and dropping one deletes its ranges. LMDB has one
 * writer at a time across processes (its lock file holds a robust mutex, released when a writer is
 * killed), readers see committed snapshots, and a commit is atomic: a process killed mid-write
 * leaves the last committed state. The map grows on demand (lmdb-js resizes it when full).
 */
import { accessSync, closeSync, constants as fsConstants, existsSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';
import { AvfsError } from '../protocol/errors';
import type { CheckpointRefCounts, ChunkTable, Counters, DirentMode, JournalRow, MetaStore, Node, TreeDump, TreeId } from './backend';
import { byName, LIVE } from './backend';
import type { CheckpointRow } from './checkpoints';
import { fileIdOf, replacedSince, type FileId } from './fileId';
import { FORK_KEY_PREFIX } from './forkLinks';
import { openPrivate } from './privateFs';
import { lockFile, MOVED_KEY, openIdentity, swapFile, waitForSwap } from './lmdbSwap';
import type { Dirent, InodeRow } from './inodes';

/** What LMDB vault files this avfs writes: bumped when the layout above changes. */
export const LMDB_SCHEMA_VERSION = 1;
/** The magic number of an LMDB meta page (bytes 24-27 of the file, little-endian). */
export const LMDB_MAGIC = 0xbeefc0de;

type InodeVal = [number, number, number, number, number, number, number, number, number, number, number];
type JournalVal = [number, string, string | null, string | null, number | null, string, string | null];
type Key = Array<number | string>;

/** The databases that hold trees ([tree, …] keys), in the order of `rawTrees`. */
const TREE_DBS = ['inodes', 'dentries', 'symlinks', 'extents'] as const;
/** Every database of a vault file but chunks (all with ordered-binary keys). */
const KEYED_DBS = ['meta', 'state', ...TREE_DBS, 'cps', 'cpnames', 'journal'] as const;
const COMPACTION_OFF = true;

/** Thrown inside a write transaction of a file another process compacted (caught by write). */
const MOVED = Symbol('moved');

let lmdb: typeof import('lmdb') | undefined;
function driver(): typeof import('lmdb') {
  // Loaded on the first LMDB vault: SQLite-only calls never load it.
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    lmdb ??= require('lmdb') as typeof import('lmdb');
  } catch (e) {
    throw new AvfsError('StorageError', `the LMDB backend is not available in this install (npm lmdb does not load: ${(e as Error).message.split('\n')[0]})`, { backend: 'lmdb' });
  }
  return lmdb;
}

const toRow = (ino: number, v: InodeVal): InodeRow => ({
  ino,
  mode: v[0],
  uid: v[1],
  gid: v[2],
  nlink: v[3],
  size: v[4],
  atime_s: v[5],
  atime_ns: v[6],
  mtime_s: v[7],
  mtime_ns: v[8],
  ctime_s: v[9],
  ctime_ns: v[10],
});

/**
 * Keys as their stored bytes, for the raw handles on the tree databases. Not lmdb-js's 'binary'
 * key encoding: that would give the database a second comparator, and these databases compare
 * keys with lmdb-js's word-wise ordered-binary comparator, which reads a key's last word whole
 * and so needs the bytes after it zeroed (as lmdb-js's own key writer leaves them).
 */
const RAW_KEYS = {
  writeKey(key: Buffer, target: Buffer, start: number): number {
    target.set(key, start);
    const end = start + key.length;
    target.fill(0, end, Math.min(end + 4, target.length));
    return end;
  },
  readKey: (target: Buffer, start: number, end: number): Buffer => Buffer.from(target.subarray(start, end)),
  /** lmdb-js asks a key encoder for this to keep the ordered-binary comparator (nothing to do: the bytes are already ordered-binary keys). */
  enableNullTermination(): void {},
};

const prefixes = new Map<TreeId, Buffer>();
/**
 * The bytes every key of tree `tree` starts with in the tree databases ([tree, …] in lmdb-js's
 * ordered-binary key encoding: the number, then the 0 byte that ends an array element); keys of
 * one tree sort together, so [prefix(t), prefix(t + 1)) is exactly tree t.
 */
function treePrefix(tree: TreeId): Buffer {
  let p = prefixes.get(tree);
  if (p) return p;
  const encode = (driver() as unknown as { keyValueToBuffer: (k: Key) => Buffer }).keyValueToBuffer;
  p = Buffer.concat([encode([tree]), Buffer.from([0])]);
  if (!encode([tree, 1, 'x']).subarray(0, p.length).equals(p)) throw new AvfsError('Internal', `lmdb's key encoding is not what this avfs expects (tree ${tree})`);
  prefixes.set(tree, p);
  return p;
}

/** How many handles of this thread have each vault file's environment open (by absolute path). */
const envsOpen = new Map<string, number>();

/** Whether this process may write `file` and its lock file (the lock file, or the directory it is made in). */
function writableOnDisk(file: string): boolean {
  const can = (path: string) => {
    try {
      accessSync(path, fsConstants.W_OK);
      return true;
    } catch {
      return false;
    }
  };
  return can(file) && (existsSync(lockFile(file)) ? can(lockFile(file)) : can(dirname(file)));
}

const toJournal = (seq: number, v: JournalVal): JournalRow => ({
  seq,
  ts_ms: v[0],
  op: v[1],
  path: v[2],
  path2: v[3],
  size: v[4],
  surface: v[5],
  details: v[6],
});

export interface LmdbOpenOptions {
  readonly?: boolean;
  /** A new file (made empty by the caller): lay out the schema. */
  create?: boolean;
}

export class LmdbMeta implements MetaStore, ChunkTable {
  readonly kind = 'lmdb' as const;
  readonly groups = undefined;
  readonly readonly: boolean;
  private env!: RootDatabase;
  private dbMeta!: Database<string, string>;
  private dbState!: Database<unknown, string>;
  private dbInodes!: Database<InodeVal, Key>;
  private dbDentries!: Database<number, Key>;
  private dbSymlinks!: Database<string, Key>;
  private dbExtents!: Database<Buffer, Key>;
  private dbCps!: Database<CheckpointRow, number>;
  private dbCpNames!: Database<number, string>;
  private dbJournal!: Database<JournalVal, number>;
  private dbChunks!: Database<Buffer, Buffer>;
  /** The four tree databases again, as raw bytes (copying and dropping trees moves bytes, decoding nothing). */
  private rawTrees!: Array<Database<Buffer, Buffer>>;
  private depth = 0;
  private writing = false;
  private open = true;
  private opened!: FileId;

  constructor(
    readonly file: string,
    opts: LmdbOpenOptions = {},
  ) {
    this.readonly = !!opts.readonly;
    this.attach();
    if (opts.create) {
      this.write(() => {
        this.dbState.putSync('schema', LMDB_SCHEMA_VERSION);
        this.dbState.putSync('next_cp', 1);
        this.dbState.putSync('next_seq', 1);
      });
    }
    const version = this.schemaVersion();
    if (version === 0) {
      this.close();
      throw new AvfsError('StorageError', `vault file ${file} cannot be used: it holds no avfs schema (not an avfs vault)`, { file });
    }
    if (version > LMDB_SCHEMA_VERSION) {
      this.close();
      throw new AvfsError('StorageError', `vault file ${file} cannot be used: its LMDB schema version ${version} is newer than this avfs understands (${LMDB_SCHEMA_VERSION}); upgrade avfs`, {
        file,
        schemaVersion: version,
      });
    }
  }

  /**
   * Opens the environment at `file` and its databases, waiting out and retrying around another
   * process's compaction swap (lmdbSwap.ts).
   */
  private attach(): void {
    for (let attempt = 0; ; attempt++) {
      waitForSwap(this.file);
      const before = openIdentity(this.file);
      const id = fileIdOf(this.file);
      this.openEnv();
      this.schemaVersion(); // the first read: this process now has a reader slot
      if (openIdentity(this.file) === before && this.dbState.get(MOVED_KEY) === undefined) {
        this.opened = id;
        return;
      }
      this.closeEnv();
      if (attempt >= 100) throw new AvfsError('StorageError', `vault file ${this.file} cannot be used: it kept being replaced while it was opened`, { file: this.file });
    }
  }

  private openEnv(): void {
    // lmdb-js keeps one LMDB environment per file per process (shared by every open of the path,
    // on every thread), and the first open's flags hold for all of them: had a read-only handle
    // opened it with MDB_RDONLY, a writable handle opened after it could begin no write
    // transaction (lmdb-js then fails with "No transaction to renew"). So the first handle of a
    // file on this thread opens the environment writable whenever this process may write the file
    // (a read-only handle's `write` refuses all the same). A later read-only handle on the thread
    // shares the environment as it is: it must not begin a write transaction to open its
    // databases, as this thread may be inside a write of the file (that would wait on itself).
    const path = resolve(this.file);
    const envReadOnly = this.readonly && ((envsOpen.get(path) ?? 0) > 0 || !writableOnDisk(this.file));
    try {
      // noMetaSync: a commit syncs its data pages but not the meta page that makes it current
      // (that goes to disk with the next commit's sync). A kill -9 loses nothing; a power loss
      // keeps the file consistent and may undo the last commit. The nearest LMDB has to the
      // SQLite store's WAL with synchronous=NORMAL (docs/performance.md, "Storage backends").
      this.env = driver().open({ path: this.file, noSubdir: true, maxDbs: 16, readOnly: envReadOnly, pageSize: 8192, noMetaSync: !envReadOnly });
    } catch (e) {
      throw new AvfsError('StorageError', `vault file ${this.file} cannot be used: ${(e as Error).message}`, { file: this.file, reason: (e as Error).message });
    }
    envsOpen.set(path, (envsOpen.get(path) ?? 0) + 1);
    this.dbMeta = this.sub('meta', { encoding: 'string' });
    this.dbState = this.sub('state');
    this.dbInodes = this.sub('inodes');
    this.dbDentries = this.sub('dentries');
    this.dbSymlinks = this.sub('symlinks', { encoding: 'string' });
    this.dbExtents = this.sub('extents', { encoding: 'binary' });
    this.dbCps = this.sub('cps');
    this.dbCpNames = this.sub('cpnames');
    this.dbJournal = this.sub('journal');
    this.dbChunks = this.sub('chunks', { keyEncoding: 'binary', encoding: 'binary' });
    this.rawTrees = TREE_DBS.map((name) => this.raw(name));
  }

  private sub<V, K extends import('lmdb').Key>(name: string, extra: object = {}): Database<V, K> {
    return this.env.openDB({ name, ...extra, create: !this.readonly } as never) as unknown as Database<V, K>;
  }
  /** Database `name` (one with lmdb-js's ordered-binary keys) as stored bytes. */
  private raw(name: string): Database<Buffer, Buffer> {
    return this.sub<Buffer, Buffer>(name, { keyEncoder: RAW_KEYS, encoding: 'binary' });
  }

  private closeEnv(): void {
    const path = resolve(this.file);
    const n = (envsOpen.get(path) ?? 1) - 1;
    if (n > 0) envsOpen.set(path, n);
    else envsOpen.delete(path);
    this.env.close();
  }

  /** After another process compacted the vault: this file is no longer the vault's; open the one at the path. */
  private followMove(): void {
    this.closeEnv();
    this.attach();
  }

  get isOpen(): boolean {
    return this.open;
  }
  get inTransaction(): boolean {
    return this.depth > 0;
  }

  write<T>(fn: () => T): T {
    if (this.writing) return fn();
    if (this.readonly) throw new AvfsError('ReadOnly', `read-only: the vault file ${this.file} is open read-only`, { file: this.file });
    if (this.depth > 0) throw new AvfsError('Internal', 'a write cannot start inside a read transaction of the same vault');
    for (let attempt = 0; ; attempt++) {
      try {
        return this.writeOnce(fn);
      } catch (e) {
        if (e !== MOVED) throw e;
        // Compacted by another process (maybe again since the last try): nothing was written; the
        // write is done on the file now at the path.
        if (attempt >= 100) throw new AvfsError('StorageError', `vault file ${this.file} kept being replaced by compactions: nothing was written`, { file: this.file });
        this.followMove();
      }
    }
  }

  private writeOnce<T>(fn: () => T): T {
    let out: T;
    this.depth++;
    this.writing = true;
    try {
      this.env.transactionSync(() => {
        if (this.fileReplaced()) {
          if (this.dbState.get(MOVED_KEY) !== undefined) throw MOVED;
          const vault = basename(this.file).replace(/\.avfs$/, '');
          throw new AvfsError('VaultNotFound', `vault ${vault} was deleted while this command ran: nothing was written`, { vault });
        }
        out = fn();
        this.dbState.putSync('version', ((this.dbState.get('version') as number | undefined) ?? 0) + 1);
      });
    } finally {
      this.depth--;
      this.writing = false;
    }
    return out!;
  }

  read<T>(fn: () => T): T {
    if (this.depth > 0) return fn();
    // A fresh snapshot for the whole call (lmdb-js keeps one read transaction per event turn).
    this.freshSnapshot();
    this.depth++;
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  /** The newest committed state, from the vault's current file (following a compaction). */
  private freshSnapshot(): void {
    this.env.resetReadTxn();
    if (this.dbState.get(MOVED_KEY) !== undefined) this.followMove();
  }

  changeVersion(): number {
    if (this.depth === 0) this.freshSnapshot();
    return (this.dbState.get('version') as number | undefined) ?? 0;
  }
  schemaVersion(): number {
    return (this.dbState.get('schema') as number | undefined) ?? 0;
  }
  check(): string {
    // LMDB has no page-level check; the store's own invariants are checked instead.
    const problems: string[] = [];
    const c = this.counters();
    if (!c) problems.push('no counters');
    if (!this.inode(LIVE, 1)) problems.push('no root directory');
    for (const { key, value } of this.dbDentries.getRange({ start: [LIVE], end: [LIVE + 1] })) {
      if (!this.dbInodes.get([LIVE, value])) problems.push(`entry ${String(key[2])} in ${String(key[1])} names missing inode ${value}`);
      if (problems.length > 10) break;
    }
    return problems.length === 0 ? 'ok' : problems.join('; ');
  }
  fileReplaced(): boolean {
    return replacedSince(this.file, this.opened);
  }
  tuneForServer(): void {
    /* reads are memory-mapped already */
  }
  /**
   * LMDB reuses freed pages but never shortens its file: when a gc left at least a quarter of the
   * file (and 512 KiB) free, the vault is copied compactly and the copy put in its place
   * (lmdbSwap.ts: how processes that have it open follow). The copy is made inside one write
   * transaction of the old file, so no write lands between the copy and the swap; it costs a read
   * and a write of what the vault holds.
   */
  compact(): void {
    // Off: a clean-clone CI run of test/store/compaction.test.ts (3c77edb) lost a write of the
    // compacting process while other processes wrote the vault. Until that race is found, gc
    // leaves an LMDB file at its size (docs/architecture.md, "Giving space back: off").
    if (COMPACTION_OFF) return;
    if (this.readonly || this.depth > 0 || !this.worthCompacting()) return;
    const swap = swapFile(this.file);
    let fd: number;
    try {
      fd = openPrivate(swap, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return; // another process is compacting it
      throw e;
    }
    const tmp = `${this.file}.compact-${process.pid}`;
    try {
      writeSync(fd, String(process.pid));
      closeSync(fd);
      this.write(() => {
        closeSync(openPrivate(tmp, 'wx'));
        const copy = new LmdbMeta(tmp, { create: true });
        try {
          this.copyEverythingInto(copy);
        } finally {
          copy.close();
        }
        const tfd = openSync(tmp, 'r+');
        try {
          fsyncSync(tfd);
        } finally {
          closeSync(tfd);
        }
        rmSync(lockFile(tmp), { force: true });
        rmSync(lockFile(this.file), { force: true });
        renameSync(tmp, this.file);
        this.dbState.putSync(MOVED_KEY, process.pid);
      });
      rmSync(lockFile(this.file), { force: true });
    } finally {
      rmSync(tmp, { force: true });
      rmSync(lockFile(tmp), { force: true });
      rmSync(swap, { force: true });
    }
    this.followMove();
  }

  /** Whether at least a quarter of the file, and 512 KiB, is free pages. */
  private worthCompacting(): boolean {
    const pageSize = 8192;
    const size = statSync(this.file).size;
    let used = 3; // meta pages
    const pages = (s: { treeBranchPageCount: number; treeLeafPageCount: number; overflowPages: number }) => s.treeBranchPageCount + s.treeLeafPageCount + s.overflowPages;
    type Stats = Parameters<typeof pages>[0] & { root: Parameters<typeof pages>[0]; free: Parameters<typeof pages>[0] };
    const env = this.env.getStats() as Stats;
    used += pages(env.root) + pages(env.free);
    for (const db of [this.dbChunks, ...KEYED_DBS.map((name) => this.sub<unknown, Key>(name))]) used += pages(db.getStats() as Stats);
    const free = size - used * pageSize;
    return free >= 512 * 1024 && free * 4 >= size;
  }

  /** Copies every database of this file into `copy` (a new, empty vault file), as stored bytes, in transactions of about 16 MiB. */
  private copyEverythingInto(copy: LmdbMeta): void {
    const pairs: Array<[Database<Buffer, Buffer>, Database<Buffer, Buffer>]> = [[copy.dbChunks, this.dbChunks], ...KEYED_DBS.map((name) => [copy.raw(name), this.raw(name)] as [Database<Buffer, Buffer>, Database<Buffer, Buffer>])];
    for (const [to, from] of pairs) {
      let batch: Array<[Buffer, Buffer]> = [];
      let bytes = 0;
      const flush = () => {
        const rows = batch;
        copy.env.transactionSync(() => {
          for (const [k, v] of rows) to.putSync(k, v);
        });
        batch = [];
        bytes = 0;
      };
      for (const { key, value } of from.getRange({})) {
        batch.push([Buffer.from(key), Buffer.from(value)]);
        bytes += key.length + value.length;
        if (bytes >= 16 * 1024 * 1024) flush();
      }
      if (batch.length > 0) flush();
    }
  }
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.closeEnv();
  }

  // ---- meta ----
  getMeta(key: string): string | undefined {
    return this.dbMeta.get(key);
  }
  setMeta(key: string, value: string | null): void {
    this.write(() => {
      if (value === null) this.dbMeta.removeSync(key);
      else this.dbMeta.putSync(key, value);
    });
  }
  metaWithPrefix(prefix: string): Array<{ key: string; value: string }> {
    const out: Array<{ key: string; value: string }> = [];
    for (const { key, value } of this.dbMeta.getRange({ start: prefix })) {
      if (!key.startsWith(prefix)) break;
      out.push({ key, value });
    }
    return out;
  }
  markDamaged(what: string): void {
    try {
      if (this.readonly || this.writing) return; // the error says it anyway
      this.write(() => {
        if (this.dbMeta.get('damaged') === undefined) this.dbMeta.putSync('damaged', what);
      });
    } catch {
      /* best effort */
    }
  }

  // ---- counters ----
  initCounters(nextIno: number): void {
    this.dbState.putSync('counters', [0, 0, nextIno]);
  }
  counters(): Counters | undefined {
    const c = this.dbState.get('counters') as [number, number, number] | undefined;
    return c ? { live_bytes: c[0], live_inodes: c[1], next_ino: c[2] } : undefined;
  }
  setCounters(c: Counters): void {
    this.dbState.putSync('counters', [c.live_bytes, c.live_inodes, c.next_ino]);
  }
  addBytes(n: number): void {
    const c = this.counters()!;
    this.setCounters({ ...c, live_bytes: c.live_bytes + n });
  }
  addInodes(n: number): void {
    const c = this.counters()!;
    this.setCounters({ ...c, live_inodes: c.live_inodes + n });
  }
  takeIno(bytes = 0): number {
    const c = this.counters()!;
    this.setCounters({ live_bytes: c.live_bytes + bytes, live_inodes: c.live_inodes + 1, next_ino: c.next_ino + 1 });
    return c.next_ino;
  }
  recount(): void {
    let bytes = 0;
    let inodes = -1;
    for (const { value } of this.dbInodes.getRange({ start: [LIVE], end: [LIVE + 1] })) {
      inodes++;
      if ((value[0] & 0o170000) === 0o100000) bytes += value[4];
    }
    const c = this.counters()!;
    this.setCounters({ live_bytes: bytes, live_inodes: inodes, next_ino: c.next_ino });
  }

  // ---- reading a tree ----
  inode(tree: TreeId, ino: number): InodeRow | undefined {
    const v = this.dbInodes.get([tree, ino]);
    return v ? toRow(ino, v) : undefined;
  }
  child(tree: TreeId, parent: number, name: string): number | undefined {
    return this.dbDentries.get([tree, parent, name]);
  }
  childAttr(parent: number, name: string): InodeRow | undefined {
    const ino = this.child(LIVE, parent, name);
    return ino === undefined ? undefined : this.inode(LIVE, ino);
  }
  children(tree: TreeId, parent: number): Dirent[] {
    const out: Dirent[] = [];
    for (const { key, value } of this.dbDentries.getRange({ start: [tree, parent], end: [tree, parent + 1] })) out.push({ name: key[2] as string, ino: value });
    // The range comes in key order, which for ordered-binary strings is their UTF-8 byte order
    // already: checked in one pass (n - 1 comparisons), sorted only if that ever fails.
    for (let i = 1; i < out.length; i++) if (byName(out[i - 1]!, out[i]!) > 0) return out.sort(byName);
    return out;
  }
  childrenAttrs(tree: TreeId, parent: number): Array<InodeRow & { name: string }> {
    const out: Array<InodeRow & { name: string }> = [];
    for (const d of this.children(tree, parent)) {
      const r = this.inode(tree, d.ino);
      if (r) out.push({ name: d.name, ...r });
    }
    return out;
  }
  childrenModes(parent: number): DirentMode[] {
    return this.childrenAttrs(LIVE, parent).map((r) => ({ name: r.name, ino: r.ino, mode: r.mode }));
  }
  hasChildren(parent: number): boolean {
    for (const _ of this.dbDentries.getKeys({ start: [LIVE, parent], end: [LIVE, parent + 1], limit: 1 })) return true;
    return false;
  }
  symlink(tree: TreeId, ino: number): string | undefined {
    return this.dbSymlinks.get([tree, ino]);
  }
  extents(tree: TreeId, ino: number, first?: number, last?: number): Array<{ idx: number; hash: Buffer }> {
    const out: Array<{ idx: number; hash: Buffer }> = [];
    const start = [tree, ino, first ?? 0];
    const end = last === undefined ? [tree, ino + 1] : [tree, ino, last + 1];
    for (const { key, value } of this.dbExtents.getRange({ start, end })) out.push({ idx: key[2] as number, hash: Buffer.from(value) });
    return out;
  }
  extent(ino: number, idx: number): Buffer | undefined {
    const h = this.dbExtents.get([LIVE, ino, idx]);
    return h ? Buffer.from(h) : undefined;
  }
  orphans(): number[] {
    const out: number[] = [];
    for (const { key, value } of this.dbInodes.getRange({ start: [LIVE], end: [LIVE + 1] })) {
      if (value[3] === 0 && key[1] !== 1) out.push(key[1] as number);
    }
    return out;
  }
  countByType(): { files: number; directories: number; symlinks: number } {
    const n = { files: 0, directories: 0, symlinks: 0 };
    for (const { key, value } of this.dbInodes.getRange({ start: [LIVE], end: [LIVE + 1] })) {
      const t = value[0] & 0o170000;
      if (t === 0o100000) n.files++;
      else if (t === 0o040000 && key[1] !== 1) n.directories++;
      else if (t === 0o120000) n.symlinks++;
    }
    return n;
  }
  largestFile(): number {
    let m = 0;
    for (const { value } of this.dbInodes.getRange({ start: [LIVE], end: [LIVE + 1] })) {
      if ((value[0] & 0o170000) === 0o100000 && value[4] > m) m = value[4];
    }
    return m;
  }
  listTree(tree: TreeId): Map<string, Node> {
    const out = new Map<string, Node>();
    const todo: Array<{ ino: number; path: string }> = [{ ino: 1, path: '' }];
    while (todo.length > 0) {
      const dir = todo.pop()!;
      for (const { key, value: ino } of this.dbDentries.getRange({ start: [tree, dir.ino], end: [tree, dir.ino + 1] })) {
        const path = `${dir.path}/${key[2] as string}`;
        const v = this.dbInodes.get([tree, ino]);
        if (!v) continue;
        const target = (v[0] & 0o170000) === 0o120000 ? (this.symlink(tree, ino) ?? null) : null;
        out.set(path, { path, ino, mode: v[0], size: v[4], target, mtime_s: v[7], mtime_ns: v[8] });
        if ((v[0] & 0o170000) === 0o040000) todo.push({ ino, path });
      }
    }
    return out;
  }
  private extentLists(tree: TreeId): Map<number, string> {
    const m = new Map<number, string[]>();
    for (const { key, value } of this.dbExtents.getRange({ start: [tree], end: [tree + 1] })) {
      const ino = key[1] as number;
      let l = m.get(ino);
      if (!l) m.set(ino, (l = []));
      l.push(`${key[2] as number}:${Buffer.from(value).toString('hex').toUpperCase()}`);
    }
    return new Map([...m].map(([k, v]) => [k, v.join(',')]));
  }
  changedContent(a: TreeId, b: TreeId): Set<number> {
    const ea = this.extentLists(a);
    const eb = this.extentLists(b);
    const out = new Set<number>();
    for (const [ino, l] of ea) if (eb.get(ino) !== l) out.add(ino);
    for (const [ino, l] of eb) if (ea.get(ino) !== l) out.add(ino);
    return out;
  }
  contentDigests(tree: TreeId): Map<number, string> {
    return new Map([...this.extentLists(tree)].map(([ino, l]) => [ino, l.split(',').map((e) => e.slice(e.indexOf(':') + 1)).join(',')]));
  }
  referencedHashes(): Buffer[] {
    const seen = new Map<string, Buffer>();
    for (const { value } of this.dbExtents.getRange({})) {
      const h = Buffer.from(value);
      seen.set(h.toString('hex'), h);
    }
    return [...seen.values()];
  }

  // ---- changing the live tree ----
  private patchInode(ino: number, f: (v: InodeVal) => void): void {
    const v = this.dbInodes.get([LIVE, ino]);
    if (!v) return;
    const copy = [...v] as InodeVal;
    f(copy);
    this.dbInodes.putSync([LIVE, ino], copy);
  }
  insertInode(ino: number, mode: number, uid: number, gid: number, nlink: number, size: number, s: number, ns: number): void {
    if (this.dbInodes.get([LIVE, ino])) throw new AvfsError('StorageError', `inode ${ino} exists already`, { ino });
    this.dbInodes.putSync([LIVE, ino], [mode, uid, gid, nlink, size, s, ns, s, ns, s, ns]);
  }
  deleteInode(ino: number): void {
    this.dbInodes.removeSync([LIVE, ino]);
  }
  setSize(ino: number, size: number, s: number, ns: number): void {
    this.patchInode(ino, (v) => {
      v[4] = size;
      v[7] = s;
      v[8] = ns;
      v[9] = s;
      v[10] = ns;
    });
  }
  setNlink(ino: number, nlink: number, s: number, ns: number): void {
    this.patchInode(ino, (v) => {
      v[3] = nlink;
      v[9] = s;
      v[10] = ns;
    });
  }
  touchMC(ino: number, s: number, ns: number): void {
    this.patchInode(ino, (v) => {
      v[7] = s;
      v[8] = ns;
      v[9] = s;
      v[10] = ns;
    });
  }
  touchC(ino: number, s: number, ns: number): void {
    this.patchInode(ino, (v) => {
      v[9] = s;
      v[10] = ns;
    });
  }
  setAttrs(ino: number, mode: number, uid: number, gid: number, as: number, ans: number, ms: number, mns: number, cs: number, cns: number): void {
    this.patchInode(ino, (v) => {
      v[0] = mode;
      v[1] = uid;
      v[2] = gid;
      v[5] = as;
      v[6] = ans;
      v[7] = ms;
      v[8] = mns;
      v[9] = cs;
      v[10] = cns;
    });
  }
  insertDentry(parent: number, name: string, ino: number): void {
    if (this.dbDentries.get([LIVE, parent, name]) !== undefined) throw new AvfsError('StorageError', `entry ${name} exists already in inode ${parent}`, { ino: parent });
    this.dbDentries.putSync([LIVE, parent, name], ino);
  }
  deleteDentry(parent: number, name: string): void {
    this.dbDentries.removeSync([LIVE, parent, name]);
  }
  moveDentry(srcParent: number, srcName: string, dstParent: number, dstName: string): void {
    const ino = this.dbDentries.get([LIVE, srcParent, srcName]);
    if (ino === undefined) return;
    this.dbDentries.removeSync([LIVE, srcParent, srcName]);
    this.dbDentries.putSync([LIVE, dstParent, dstName], ino);
  }
  insertSymlink(ino: number, target: string): void {
    this.dbSymlinks.putSync([LIVE, ino], target);
  }
  deleteSymlink(ino: number): void {
    this.dbSymlinks.removeSync([LIVE, ino]);
  }
  upsertExtent(ino: number, idx: number, hash: Buffer): void {
    this.dbExtents.putSync([LIVE, ino, idx], hash);
  }
  deleteExtents(ino: number): void {
    this.removeRange(this.dbExtents, [LIVE, ino], [LIVE, ino + 1]);
  }
  deleteExtentsFrom(ino: number, idx: number): void {
    this.removeRange(this.dbExtents, [LIVE, ino, idx], [LIVE, ino + 1]);
  }
  copyExtents(src: number, dst: number): void {
    for (const e of this.extents(LIVE, src)) this.dbExtents.putSync([LIVE, dst, e.idx], e.hash);
  }

  private removeRange<V>(db: Database<V, Key>, start: Key, end: Key): void {
    const keys = [...db.getKeys({ start, end })];
    for (const k of keys) db.removeSync(k);
  }

  /** Deletes every entry of tree `tree` from the raw database `db`. */
  private dropRaw(db: Database<Buffer, Buffer>, tree: TreeId): void {
    const keys = [...db.getKeys({ start: treePrefix(tree), end: treePrefix(tree + 1) })];
    for (const k of keys) db.removeSync(k);
  }

  /** Copies every entry of tree `from` in the raw database `src` to tree `to` of `db`, as bytes: the key's tree prefix is swapped. */
  private copyRaw(db: Database<Buffer, Buffer>, from: TreeId, to: TreeId, src: Database<Buffer, Buffer> = db): void {
    const fromPrefix = treePrefix(from);
    const toPrefix = treePrefix(to);
    const rows = [...src.getRange({ start: fromPrefix, end: treePrefix(from + 1) }).map(({ key, value }) => [Buffer.concat([toPrefix, key.subarray(fromPrefix.length)]), Buffer.from(value)] as const)];
    for (const [k, v] of rows) db.putSync(k, v);
  }

  /** Copies every entry of `db` in tree `from` to tree `to`, optionally only those `keep` accepts. */
  private copyRange<V>(db: Database<V, Key>, from: TreeId, to: TreeId, keep?: (key: Key, value: V) => boolean, src: Database<V, Key> = db): void {
    const rows = [...src.getRange({ start: [from], end: [from + 1] })];
    for (const { key, value } of rows) {
      if (keep && !keep(key, value)) continue;
      db.putSync([to, ...key.slice(1)], value);
    }
  }

  // ---- chunks ----
  chunkGet(hash: Buffer): Buffer | undefined {
    // One copy out of the map (getBinary's own), owned by the caller.
    return this.dbChunks.getBinary(hash);
  }
  chunkPut(hash: Buffer, data: Uint8Array): void {
    if (this.dbChunks.doesExist(hash)) return;
    this.dbChunks.putSync(hash, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
  chunkStats(): { count: number; bytes: number } {
    let count = 0;
    let bytes = 0;
    for (const { value } of this.dbChunks.getRange({})) {
      count++;
      bytes += value.length;
    }
    return { count, bytes };
  }
  chunkSweep(keep: Set<string>, dryRun: boolean): { total: number; dead: number; bytes: number } {
    let total = 0;
    let bytes = 0;
    const dead: Buffer[] = [];
    for (const { key, value } of this.dbChunks.getRange({})) {
      total++;
      if (!keep.has(Buffer.from(key).toString('hex'))) {
        dead.push(Buffer.from(key));
        bytes += value.length;
      }
    }
    if (!dryRun) for (const k of dead) this.dbChunks.removeSync(k);
    return { total, dead: dead.length, bytes };
  }

  chunkEach(fn: (hash: Buffer, data: Buffer) => void): void {
    for (const { key, value } of this.dbChunks.getRange({})) fn(Buffer.from(key), Buffer.from(value));
  }

  // ---- copying between backends ----
  dumpTree(tree: TreeId): TreeDump {
    const range = { start: [tree], end: [tree + 1] };
    return {
      inodes: [...this.dbInodes.getRange(range)].map(({ key, value }) => toRow(key[1] as number, value)),
      dentries: [...this.dbDentries.getRange(range)].map(({ key, value }) => [key[1] as number, key[2] as string, value]),
      symlinks: [...this.dbSymlinks.getRange(range)].map(({ key, value }) => [key[1] as number, value]),
      extents: [...this.dbExtents.getRange(range)].map(({ key, value }) => [key[1] as number, key[2] as number, Buffer.from(value)]),
    };
  }
  loadTree(tree: TreeId, dump: TreeDump): void {
    for (const r of dump.inodes) this.dbInodes.putSync([tree, r.ino], [r.mode, r.uid, r.gid, r.nlink, r.size, r.atime_s, r.atime_ns, r.mtime_s, r.mtime_ns, r.ctime_s, r.ctime_ns]);
    for (const [parent, name, ino] of dump.dentries) this.dbDentries.putSync([tree, parent, name], ino);
    for (const [ino, target] of dump.symlinks) this.dbSymlinks.putSync([tree, ino], target);
    for (const [ino, idx, hash] of dump.extents) this.dbExtents.putSync([tree, ino, idx], hash);
  }
  loadJournal(rows: JournalRow[]): void {
    let next = (this.dbState.get('next_seq') as number | undefined) ?? 1;
    for (const r of rows) {
      this.dbJournal.putSync(r.seq, [r.ts_ms, r.op, r.path, r.path2, r.size, r.surface, r.details]);
      next = Math.max(next, r.seq + 1);
    }
    this.dbState.putSync('next_seq', next);
  }

  // ---- journal ----
  appendJournal(ts: number, op: string, path: string | null, path2: string | null, size: number | null, surface: string, details: string | null): number {
    const seq = (this.dbState.get('next_seq') as number | undefined) ?? 1;
    this.dbState.putSync('next_seq', seq + 1);
    this.dbJournal.putSync(seq, [ts, op, path, path2, size, surface, details]);
    return seq;
  }
  trimJournal(keep: number): void {
    const max = this.journalMaxSeq();
    const keys = [...this.dbJournal.getKeys({ end: max - keep + 1 })];
    for (const k of keys) this.dbJournal.removeSync(k);
  }
  journalMaxSeq(): number {
    for (const k of this.dbJournal.getKeys({ reverse: true, limit: 1 })) return k;
    return 0;
  }
  journalFirstAfter(seq: number): number | null {
    for (const k of this.dbJournal.getKeys({ start: seq + 1, limit: 1 })) return k;
    return null;
  }
  journalAfter(seq: number, limit?: number): JournalRow[] {
    const out: JournalRow[] = [];
    for (const { key, value } of this.dbJournal.getRange({ start: seq + 1, ...(limit !== undefined && limit >= 0 ? { limit } : {}) })) out.push(toJournal(key, value));
    return out;
  }
  journalRecent(sinceMs: number, limit: number): { rows: JournalRow[]; total: number } {
    const rows: JournalRow[] = [];
    let total = 0;
    for (const { key, value } of this.dbJournal.getRange({ reverse: true })) {
      if (value[0] < sinceMs) continue;
      total++;
      if (rows.length < limit) rows.push(toJournal(key, value));
    }
    return { rows, total };
  }
  journalCount(): number {
    return this.dbJournal.getCount();
  }
  journalMentions(ops: readonly string[], id: string): boolean {
    for (const { value } of this.dbJournal.getRange({})) {
      if (!ops.includes(value[1]) || value[6] === null) continue;
      try {
        if ((JSON.parse(value[6]) as { id?: unknown }).id === id) return true;
      } catch {
        /* not JSON */
      }
    }
    return false;
  }

  // ---- checkpoints ----
  checkpointRows(): CheckpointRow[] {
    return [...this.dbCps.getRange({})].map(({ value }) => value);
  }
  checkpointByName(name: string): CheckpointRow | undefined {
    const id = this.dbCpNames.get(name);
    return id === undefined ? undefined : this.dbCps.get(id);
  }
  nextCheckpointId(): number {
    return (this.dbState.get('next_cp') as number | undefined) ?? 1;
  }
  insertCheckpoint(row: CheckpointRow): void {
    if (this.dbCpNames.get(row.name) !== undefined) throw new AvfsError('AlreadyExists', `a checkpoint named ${row.name} already exists`, { checkpoint: row.name });
    this.dbCps.putSync(row.id, { ...row });
    this.dbCpNames.putSync(row.name, row.id);
    if (row.id >= this.nextCheckpointId()) this.dbState.putSync('next_cp', row.id + 1);
  }
  setCheckpointCounts(id: number, files: number, bytes: number): void {
    const r = this.dbCps.get(id);
    if (r) this.dbCps.putSync(id, { ...r, file_count: files, total_bytes: bytes });
  }
  setCheckpointJournalSeq(id: number, seq: number): void {
    const r = this.dbCps.get(id);
    if (r) this.dbCps.putSync(id, { ...r, journal_seq: seq });
  }

  /**
   * What checkpoints hold alone, computed from their extents when asked (no counts are kept: a
   * scan of the checkpoints' extents, O(checkpoint metadata), per question).
   */
  readonly refs: CheckpointRefCounts = {
    available: () => true,
    current: () => true,
    sync: () => {},
    uncount: () => {},
    alone: (extra) => {
      const owners = this.chunkOwners(extra);
      const out = new Map<number, number>();
      for (const [hex, ids] of owners) {
        if (ids === null || ids.size !== 1) continue;
        const id = [...ids][0]!;
        out.set(id, (out.get(id) ?? 0) + (this.dbChunks.get(Buffer.from(hex, 'hex'))?.length ?? 0));
      }
      return out;
    },
    together: (ids, extra) => {
      const set = new Set(ids);
      let bytes = 0;
      for (const [hex, owners] of this.chunkOwners(extra)) {
        if (owners === null || ![...owners].every((id) => set.has(id))) continue;
        bytes += this.dbChunks.get(Buffer.from(hex, 'hex'))?.length ?? 0;
      }
      return bytes;
    },
  };

  /** For each chunk a checkpoint references, which checkpoints do; null when the live tree or `extra` references it too. */
  private chunkOwners(extra?: () => Iterable<Buffer>): Map<string, Set<number> | null> {
    const out = new Map<string, Set<number> | null>();
    for (const { key, value } of this.dbExtents.getRange({ start: [LIVE + 1] })) {
      const hex = Buffer.from(value).toString('hex');
      const s = out.get(hex);
      if (s === null) continue;
      if (s) s.add(key[0] as number);
      else out.set(hex, new Set([key[0] as number]));
    }
    for (const { value } of this.dbExtents.getRange({ start: [LIVE], end: [LIVE + 1] })) out.set(Buffer.from(value).toString('hex'), null);
    if (extra) for (const h of extra()) out.set(h.toString('hex'), null);
    return out;
  }

  deleteCheckpointRow(id: number): void {
    const r = this.dbCps.get(id);
    if (!r) return;
    this.dbCpNames.removeSync(r.name);
    this.dbCps.removeSync(id);
  }
  snapshotLive(id: TreeId): boolean {
    // Files unlinked but still open on a mount (nlink 0) are not part of the tree.
    const orphans = new Set(this.orphans());
    if (orphans.size === 0) {
      for (const db of this.rawTrees) this.copyRaw(db, LIVE, id);
      return true;
    }
    this.copyRange(this.dbInodes, LIVE, id, (k) => !orphans.has(k[1] as number));
    this.copyRaw(this.rawTrees[1]!, LIVE, id);
    this.copyRaw(this.rawTrees[2]!, LIVE, id);
    this.copyRange(this.dbExtents, LIVE, id, (k) => !orphans.has(k[1] as number));
    return false;
  }
  copyTree(from: TreeId, to: TreeId): void {
    for (const db of this.rawTrees) this.copyRaw(db, from, to);
  }
  restoreTree(id: TreeId): void {
    for (const db of this.rawTrees) {
      this.dropRaw(db, LIVE);
      this.copyRaw(db, id, LIVE);
    }
  }
  dropTree(id: TreeId): void {
    for (const db of this.rawTrees) this.dropRaw(db, id);
  }
  treeCounts(id: TreeId): { files: number; bytes: number } {
    let files = -1;
    let bytes = 0;
    for (const { value } of this.dbInodes.getRange({ start: [id], end: [id + 1] })) {
      files++;
      if ((value[0] & 0o170000) === 0o100000) bytes += value[4];
    }
    return { files, bytes };
  }
  cpLinks(tree: TreeId, ino: number): number {
    let n = 0;
    for (const { value } of this.dbDentries.getRange({ start: [tree], end: [tree + 1] })) if (value === ino) n++;
    return n;
  }
  cpDeleteDentry(tree: TreeId, parent: number, name: string): void {
    this.dbDentries.removeSync([tree, parent, name]);
  }
  cpInsertDentry(tree: TreeId, parent: number, name: string, ino: number): void {
    this.dbDentries.putSync([tree, parent, name], ino);
  }
  cpDropInode(tree: TreeId, ino: number): void {
    this.dbInodes.removeSync([tree, ino]);
    this.dbSymlinks.removeSync([tree, ino]);
    this.removeRange(this.dbExtents, [tree, ino], [tree, ino + 1]);
  }
  cpCopyInode(tree: TreeId, from: TreeId, ino: number): void {
    this.cpDropInode(tree, ino);
    const v = this.dbInodes.get([from, ino]);
    if (v) this.dbInodes.putSync([tree, ino], v);
    const t = this.dbSymlinks.get([from, ino]);
    if (t !== undefined) this.dbSymlinks.putSync([tree, ino], t);
    for (const e of this.extents(from, ino)) this.dbExtents.putSync([tree, ino, e.idx], e.hash);
  }
  cpSetDirAttrs(tree: TreeId, ino: number, from: TreeId, fromIno: number): void {
    const src = this.dbInodes.get([from, fromIno]);
    const v = this.dbInodes.get([tree, ino]);
    if (!src || !v) return;
    const copy = [...v] as InodeVal;
    copy[0] = src[0];
    copy[1] = src[1];
    copy[2] = src[2];
    copy[7] = src[7];
    copy[8] = src[8];
    this.dbInodes.putSync([tree, ino], copy);
  }

  // ---- forks ----
  forkFrom(sourceFile: string, forkName: string, record: () => void): void {
    const src = new LmdbMeta(sourceFile);
    try {
      // The source's write lock is held across the copy, so its gc cannot run before the parent
      // link commits; the source records the fork first (its gc then keeps the fork's chunks).
      src.write(() => {
        src.setMeta(FORK_KEY_PREFIX + forkName, new Date().toISOString());
        this.write(() => {
          for (const [db, sdb] of this.pairs(src)) {
            this.dropRaw(db, LIVE);
            this.copyRaw(db, LIVE, LIVE, sdb);
          }
          this.dbState.putSync('counters', src.dbState.get('counters'));
          for (const prefix of ['quota.', 'policy.', 'base.']) {
            for (const { key, value } of src.metaWithPrefix(prefix)) if (key !== 'base.journal_seq') this.dbMeta.putSync(key, value);
          }
          // A vault made from a project names a base checkpoint: the fork gets a copy of it.
          for (const key of ['base.checkpoint', 'base.git_checkpoint']) {
            const name = src.getMeta(key);
            const cp = name === undefined ? undefined : src.checkpointByName(name);
            if (!cp || this.checkpointByName(cp.name)) continue;
            this.insertCheckpoint(cp);
            for (const [db, sdb] of this.pairs(src)) this.copyRaw(db, cp.id, cp.id, sdb);
          }
          record();
        });
      });
    } finally {
      src.close();
    }
  }

  private pairs(src: LmdbMeta): Array<[Database<Buffer, Buffer>, Database<Buffer, Buffer>]> {
    return this.rawTrees.map((db, i) => [db, src.rawTrees[i]!]);
  }

}
