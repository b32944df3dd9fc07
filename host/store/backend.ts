/**
 * The store's one boundary to a storage engine. A vault is two halves, as every scalable file
 * store has them:
 *
 * - **metadata** (`MetaStore`): inodes, directory entries, symlinks, extents, checkpoints and
 *   their trees, counters, quotas (in `meta`), the journal. Transactional: `write` is one
 *   serialised transaction across processes (SQLite's `BEGIN IMMEDIATE`), `read` one snapshot.
 * - **chunks** (`ChunkTable`): immutable, content-addressed by SHA-256.
 *
 * Everything above (`InodeStore`, `Checkpoints`, `Journal`, `QuotaBook`, diff, gc, forks) is
 * written once against these two interfaces; `sqlite.ts`, `lmdb.ts` and `postgres.ts` implement them. Nothing
 * outside `host/store/` sees SQL or an engine's handle.
 *
 * The calls are synchronous: the vfs and FUSE dispatch need an answer inside one call. A backend
 * reached through an asynchronous client (PostgreSQL: `postgres.ts`, `pgSync.ts`) implements the same
 * interface by running its client in a worker thread and waiting on it with `Atomics.wait`
 * (docs/architecture.md, "Storage backends").
 */
import { AvfsError } from '../protocol/errors';
import type { CheckpointRow } from './checkpoints';
import type { Dirent, InodeRow } from './inodes';

export type BackendKind = 'sqlite' | 'lmdb' | 'postgres';
export const BACKENDS: readonly BackendKind[] = ['sqlite', 'lmdb', 'postgres'];

/** A backend name from the user (`--backend`), checked. */
export function checkBackend(name: string): BackendKind {
  if ((BACKENDS as readonly string[]).includes(name)) return name as BackendKind;
  throw new AvfsError('InvalidInput', `unknown storage backend ${JSON.stringify(name)}: use ${BACKENDS.join(' or ')}`, { backend: name });
}

/** The backend new vaults get when none is named: `AVFS_BACKEND` (what the conformance tests set), else sqlite. */
export function defaultBackend(): BackendKind {
  const env = process.env.AVFS_BACKEND;
  return env ? checkBackend(env) : 'sqlite';
}

/** The tree a read is about: the live tree, or a checkpoint's (its id). */
export type TreeId = number;
export const LIVE: TreeId = 0;

/** One path of a tree with its inode (what diffs and listings compare). */
export interface Node {
  path: string;
  ino: number;
  mode: number;
  size: number;
  target: string | null;
  mtime_s: number;
  mtime_ns: number;
}

export interface JournalRow {
  seq: number;
  ts_ms: number;
  op: string;
  path: string | null;
  path2: string | null;
  size: number | null;
  surface: string;
  details: string | null;
}

export interface Counters {
  live_bytes: number;
  live_inodes: number;
  next_ino: number;
}

/** Every row of one tree, for copying a vault between backends (`vault convert`). */
export interface TreeDump {
  inodes: InodeRow[];
  dentries: Array<[parent: number, name: string, ino: number]>;
  symlinks: Array<[ino: number, target: string]>;
  extents: Array<[ino: number, idx: number, hash: Buffer]>;
}

/**
 * One name of a batch of creates (`MetaStore.insertNames`): with `row`, a new inode (and its
 * symlink target or extents); without, another name of inode `ino` (a hard link).
 */
export interface NewName {
  parent: number;
  name: string;
  ino: number;
  row?: InodeRow;
  target?: string;
  /** The file's chunk hashes, in order (the chunks are stored already). */
  extents?: Buffer[];
  /** Instead of extents: a file of one small piece, kept in its extent row (`MetaStore.upsertInline`). */
  inline?: { hash: Buffer; data: Uint8Array };
}

/** What `MetaStore.childWithPiece` gives: an entry's inode and its first piece of content, if it has one. */
export interface ChildPiece {
  ino: number;
  mode: number;
  gid: number;
  size: number;
  /** Piece 0's hash, undefined when the inode has no piece 0 (a directory, a symlink, an empty file, a hole). */
  hash: Buffer | undefined;
  /** Piece 0's bytes as this file holds them (undefined: a fork's ancestor has them). */
  data: Buffer | undefined;
  /** The bytes are the extent row's own copy (schema 6), not the chunk table's. */
  inline: boolean;
}

export interface DirentMode {
  name: string;
  ino: number;
  mode: number;
}

/**
 * Group commit (SQLite): many small mutations in one long write transaction, each in its own
 * savepoint so a failing one leaves nothing behind. A backend without it runs each mutation in its
 * own transaction.
 */
export interface GroupCommit {
  begin(): void;
  savepoint(): void;
  release(): void;
  rollbackTo(): void;
  commit(): void;
  rollback(): void;
}

/**
 * What checkpoints hold alone (the bytes of chunks no other tree references), for retention and
 * listings. `extra`: chunks referenced elsewhere (a fork's trees).
 */
export interface CheckpointRefCounts {
  /** Whether this vault file can hold the counts at all (an older SQLite schema cannot). */
  available(): boolean;
  /** Whether the counts include every checkpoint and nothing else (reads only). */
  current(): boolean;
  /** Brings the counts up to date (a write). */
  sync(): void;
  /** Takes checkpoint `id` out of the counts, inside the write that deletes or edits its tree, before it does. */
  uncount(id: number): void;
  /** Bytes each checkpoint holds alone, by id (absent: 0). */
  alone(extra?: () => Iterable<Buffer>): Map<number, number>;
  /** Bytes the checkpoints `ids` hold together and nothing else does. */
  together(ids: readonly number[], extra?: () => Iterable<Buffer>): number;
}

export interface ChunkTable {
  /** The bytes stored under `hash`, unchecked (ChunkStore checks them), or undefined. */
  chunkGet(hash: Buffer): Buffer | undefined;
  /** Stores `data` under `hash` unless a chunk is there already (inside a write). */
  chunkPut(hash: Buffer, data: Uint8Array): void;
  chunkStats(): { count: number; bytes: number };
  /** Deletes (unless `dryRun`) every chunk whose hash is not in `keep`; inside a write. */
  chunkSweep(keep: Set<string>, dryRun: boolean): { total: number; dead: number; bytes: number };
  /** Calls `fn` with every chunk this vault holds (not its ancestors'). */
  chunkEach(fn: (hash: Buffer, data: Buffer) => void): void;
}

export interface MetaStore extends ChunkTable {
  readonly kind: BackendKind;
  readonly file: string;
  readonly readonly: boolean;
  readonly isOpen: boolean;
  readonly inTransaction: boolean;
  /** Group commit, where the engine has it. */
  readonly groups: GroupCommit | undefined;

  /** One serialised write transaction (nested calls join the outer one); a throw rolls it back. */
  write<T>(fn: () => T): T;
  /** One consistent snapshot (nested calls join the outer transaction). */
  read<T>(fn: () => T): T;
  /** A number that moves whenever another connection commits (caches compare it). */
  changeVersion(): number;
  schemaVersion(): number;
  /** 'ok', or what the engine's own check found. */
  check(): string;
  /** Whether the file this store opened is no longer at its path (deleted, maybe re-created). */
  fileReplaced(): boolean;
  /** For long-lived processes: bigger caches, background maintenance. */
  tuneForServer(): void;
  /** Returns freed space to the file system after a gc. */
  compact(): void;
  close(): void;

  // ---- meta (key → text) ----
  getMeta(key: string): string | undefined;
  setMeta(key: string, value: string | null): void;
  /** Records `what` as the first damage found (best effort, outside the caller's transaction). */
  markDamaged(what: string): void;
  metaWithPrefix(prefix: string): Array<{ key: string; value: string }>;

  // ---- counters ----
  initCounters(nextIno: number): void;
  counters(): Counters | undefined;
  addBytes(n: number): void;
  addInodes(n: number): void;
  /** Takes the next inode number and counts one more inode (and `bytes` more live bytes: a file made with its content). */
  takeIno(bytes?: number): number;
  /** Recomputes the live totals from the live tree. */
  recount(): void;
  setCounters(c: Counters): void;

  // ---- reading a tree ----
  inode(tree: TreeId, ino: number): InodeRow | undefined;
  child(tree: TreeId, parent: number, name: string): number | undefined;
  /** The live inode at `parent/name`. */
  childAttr(parent: number, name: string): InodeRow | undefined;
  /** Optional: only the inode, mode and gid at `parent/name` (a path walk's step through a directory); else childAttr() serves. */
  childRef?(parent: number, name: string): { ino: number; mode: number; gid: number } | undefined;
  /**
   * Optional: the inode, mode, gid and size at `parent/name` with its piece 0 joined (as
   * extentsWithData gives it; `hash` undefined for none), in one statement: a whole-file read's
   * last step. A backend without it is read through childAttr() and extentsWithData().
   */
  childWithPiece?(parent: number, name: string): ChildPiece | undefined;
  /** Entries sorted by name (byte order of UTF-8, as SQLite's BINARY collation). */
  children(tree: TreeId, parent: number): Dirent[];
  childrenAttrs(tree: TreeId, parent: number): Array<InodeRow & { name: string }>;
  childrenModes(parent: number): DirentMode[];
  hasChildren(parent: number): boolean;
  symlink(tree: TreeId, ino: number): string | undefined;
  /** Extents in index order, optionally only `first..last`. */
  extents(tree: TreeId, ino: number, first?: number, last?: number): Array<{ idx: number; hash: Buffer }>;
  extent(ino: number, idx: number): Buffer | undefined;
  /**
   * Optional: the live extents `first..last` with each chunk's bytes as this file holds them
   * (`data` undefined when it does not: a fork's ancestor has it), in one statement. A backend
   * without it is read through extents() and chunkGet(). `inline`: the bytes are the extent row's own
   * copy (schema 6), not the chunk table's.
   */
  extentsWithData?(ino: number, first: number, last: number): Array<{ idx: number; hash: Buffer; data: Buffer | undefined; inline?: boolean }>;
  /** Live inodes with no names left (unlinked while open). */
  orphans(): number[];
  countByType(): { files: number; directories: number; symlinks: number };
  largestFile(): number;
  /** Every path of a tree (the root left out), found by walking entries from the root. */
  listTree(tree: TreeId): Map<string, Node>;
  /** Inode numbers whose extent lists differ between two trees. */
  changedContent(a: TreeId, b: TreeId): Set<number>;
  /** Each file's content as its chunk list (hex hashes joined by ','), by inode. */
  contentDigests(tree: TreeId): Map<number, string>;
  /** Every chunk hash the live tree and the checkpoints reference. */
  referencedHashes(): Buffer[];

  // ---- changing the live tree (inside a write) ----
  insertInode(ino: number, mode: number, uid: number, gid: number, nlink: number, size: number, s: number, ns: number): void;
  deleteInode(ino: number): void;
  setSize(ino: number, size: number, s: number, ns: number): void;
  setNlink(ino: number, nlink: number, s: number, ns: number): void;
  touchMC(ino: number, s: number, ns: number): void;
  touchC(ino: number, s: number, ns: number): void;
  setAttrs(ino: number, mode: number, uid: number, gid: number, as: number, ans: number, ms: number, mns: number, cs: number, cns: number): void;
  insertDentry(parent: number, name: string, ino: number): void;
  deleteDentry(parent: number, name: string): void;
  moveDentry(srcParent: number, srcName: string, dstParent: number, dstName: string): void;
  insertSymlink(ino: number, target: string): void;
  deleteSymlink(ino: number): void;
  upsertExtent(ino: number, idx: number, hash: Buffer): void;
  deleteExtents(ino: number): void;
  deleteExtentsFrom(ino: number, idx: number): void;
  copyExtents(src: number, dst: number): void;
  /**
   * Optional (SQLite, schema 6): pieces up to this many bytes may be kept in their extent row
   * (`upsertInline`) instead of the chunk table; 0 or absent: never. Reads of the live tree
   * (`extentsWithData`) return them as they return chunks; saving a checkpoint tree
   * (`snapshotLive`, `cpCopyInode` from the live tree) moves them into the chunk table first.
   */
  readonly inlineMax?: number;
  /** Sets extent `idx` of `ino` to the piece `data` named `hash`, held in the extent row itself. */
  upsertInline?(ino: number, idx: number, hash: Buffer, data: Uint8Array): void;
  /**
   * Many creates at once (a working copy's commit-back): each name's inode row, entry, target and
   * extents, in the caller's write. Counters, nlink of existing inodes and the parents' times are
   * the caller's. Optional: InodeStore does the same through the calls above where it is missing.
   */
  insertNames?(names: readonly NewName[]): void;

  // ---- journal ----
  appendJournal(ts: number, op: string, path: string | null, path2: string | null, size: number | null, surface: string, details: string | null): number;
  /** Keeps the newest `keep` entries. */
  trimJournal(keep: number): void;
  journalMaxSeq(): number;
  /** The first sequence number after `seq`, or null when there is none. */
  journalFirstAfter(seq: number): number | null;
  journalAfter(seq: number, limit?: number): JournalRow[];
  /** Entries at or after `sinceMs`, newest first, and how many there are. */
  journalRecent(sinceMs: number, limit: number): { rows: JournalRow[]; total: number };
  journalCount(): number;
  journalMentions(ops: readonly string[], id: string): boolean;

  // ---- checkpoints ----
  /** Every checkpoint, internal ones included, by id. */
  checkpointRows(): CheckpointRow[];
  checkpointByName(name: string): CheckpointRow | undefined;
  /** The id the next checkpoint gets (ids are never reused); inside a write. */
  nextCheckpointId(): number;
  insertCheckpoint(row: CheckpointRow): void;
  setCheckpointCounts(id: number, files: number, bytes: number): void;
  setCheckpointJournalSeq(id: number, seq: number): void;
  readonly refs: CheckpointRefCounts;
  deleteCheckpointRow(id: number): void;
  /**
   * Copies the live tree (inodes with names) into tree `id`; true when that was every inode (none
   * unlinked but open). With `moveOut`, a backend may move the live tree's rows into tree `id`
   * instead of copying them and leave the live tree empty: only for a `restoreTree` that follows
   * in the same transaction (SQLite renames its tables; the others copy).
   */
  snapshotLive(id: TreeId, moveOut?: boolean): boolean;
  copyTree(from: TreeId, to: TreeId): void;
  /** Replaces the live tree with tree `id` (counters are the caller's: recount). */
  restoreTree(id: TreeId): void;
  dropTree(id: TreeId): void;
  /** Inodes but the root, and bytes of regular files, in tree `id`. */
  treeCounts(id: TreeId): { files: number; bytes: number };
  /** How many entries of checkpoint tree `tree` name `ino`. */
  cpLinks(tree: TreeId, ino: number): number;
  cpDeleteDentry(tree: TreeId, parent: number, name: string): void;
  cpInsertDentry(tree: TreeId, parent: number, name: string, ino: number): void;
  /** Drops inode `ino` (attributes, symlink, extents) from checkpoint tree `tree`. */
  cpDropInode(tree: TreeId, ino: number): void;
  /** Puts into checkpoint tree `tree` inode `ino` as tree `from` has it. */
  cpCopyInode(tree: TreeId, from: TreeId, ino: number): void;
  /** Gives directory `ino` of checkpoint tree `tree` the mode, owner and mtime of `fromIno` in `from`. */
  cpSetDirAttrs(tree: TreeId, ino: number, from: TreeId, fromIno: number): void;

  // ---- copying between backends ----
  dumpTree(tree: TreeId): TreeDump;
  /** Writes `dump` into tree `tree`, which is empty (inside a write). */
  loadTree(tree: TreeId, dump: TreeDump): void;
  /** Appends journal entries keeping their sequence numbers (inside a write, into an empty journal). */
  loadJournal(rows: JournalRow[]): void;

  // ---- forks ----
  /**
   * Fills this (new) vault with a copy of `source`'s live tree, counters, quotas, policy and base
   * keys and base checkpoints, inside one write that also holds the source's write lock (so its
   * gc cannot run between the copy and the commit of the parent link); `record` runs inside it
   * (the caller's meta and journal writes).
   */
  forkFrom(sourceFile: string, forkName: string, record: () => void): void;
}

/** Sorts entries as SQLite's BINARY collation does: by the bytes of the names' UTF-8. */
export function byName(a: { name: string }, b: { name: string }): number {
  return Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));
}
