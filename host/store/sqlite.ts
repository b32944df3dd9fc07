/**
 * The SQLite backend: the metadata and the chunks of a vault in one SQLite file (schema.ts), on
 * better-sqlite3 (db.ts opens it). Statements are prepared on first use; trees are tables
 * (`inodes`, …) for the live tree and `cp_*` tables keyed by checkpoint id for the others.
 *
 * One checkpoint at a time may instead be *parked*: its rows are the `park_*` tables, shaped as the
 * live ones (meta `tree.parked` names it). A restore parks its undo checkpoint by renaming the live
 * tables rather than copying their rows (docs/architecture.md, "Restore"); every reader of a tree
 * goes through `tables()`, and a write to the parked tree, or the next park, folds it into `cp_*`.
 */
import type Database from 'better-sqlite3';
import type { ChildPiece, ChunkTable, Counters, DirentMode, GroupCommit, JournalRow, MetaStore, NewName, Node, TreeDump, TreeId } from './backend';
import { LIVE } from './backend';
import { CheckpointRefs } from './checkpointRefs';
import type { CheckpointRow } from './checkpoints';
import { type Db, fileReplaced, preparedOnUse, readTxn, schemaVersion, sideConnection, tableNames, writeTxn } from './db';
import { INLINE_MAX, INLINE_PIECES_SCHEMA } from './schema';
import { FORK_KEY_PREFIX } from './forkLinks';
import type { Dirent, InodeRow } from './inodes';

const INODE_COLS = 'ino, mode, uid, gid, nlink, size, atime_s, atime_ns, mtime_s, mtime_ns, ctime_s, ctime_ns';
const CP_TABLES = ['cp_inodes', 'cp_dentries', 'cp_symlinks', 'cp_extents'];
/** Inline pieces the chunk table does not also hold, one row per hash (`hash`, `data`). */
const INLINE_ONLY = 'SELECT hash, data FROM extents e WHERE data IS NOT NULL AND NOT EXISTS (SELECT 1 FROM chunks c WHERE c.hash = e.hash) GROUP BY hash';
/** The live tree's tables and the columns a checkpoint keeps of each (the same names in `cp_*` and `park_*`). */
const TREE_COLS = { inodes: INODE_COLS, dentries: 'parent, name, ino', symlinks: 'ino, target', extents: 'ino, idx, hash' } as const;
const LIVE_TABLES = Object.keys(TREE_COLS) as Array<keyof typeof TREE_COLS>;
/** Meta key naming the parked checkpoint (the one whose rows are the `park_*` tables). */
const PARKED_KEY = 'tree.parked';

type Tables = { inodes: string; dentries: string; symlinks: string; extents: string; where: string; params: number[] };
const LIVE_T: Tables = { inodes: 'inodes', dentries: 'dentries', symlinks: 'symlinks', extents: 'extents', where: '1', params: [] };
const PARK_T: Tables = { inodes: 'park_inodes', dentries: 'park_dentries', symlinks: 'park_symlinks', extents: 'park_extents', where: '1', params: [] };

export class SqliteMeta implements MetaStore, ChunkTable {
  readonly kind = 'sqlite' as const;
  private readonly s;
  private groupCommit: GroupCommit | undefined;
  private checkpointRefs: CheckpointRefs | undefined;
  /**
   * Statements of the per-inode checkpoint edits, kept by their text: an apply of 100 files made
   * 600 of them anew (about 8 ms of its 50 at load 17).
   */
  private readonly bySql = new Map<string, Database.Statement<unknown[]>>();
  /**
   * Whether this file's extent rows can hold small pieces inline (schema 6; an older file read
   * as it is cannot, and has none).
   */
  private readonly inline: boolean;

  constructor(readonly db: Db) {
    this.inline = schemaVersion(db) >= INLINE_PIECES_SCHEMA;
    // A piece's bytes: its extent row's own (inline), else the chunk table's (COALESCE evaluates
    // the lookup only when the row has none).
    const pieceData = this.inline ? 'COALESCE(e.data, (SELECT c.data FROM chunks c WHERE c.hash = e.hash))' : '(SELECT c.data FROM chunks c WHERE c.hash = e.hash)';
    const p = <P extends unknown[], R = unknown>(sql: string) => () => db.prepare<P, R>(sql);
    this.s = preparedOnUse({
      getMeta: p<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      setMeta: p<[string, string]>('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
      delMeta: p<[string]>('DELETE FROM meta WHERE key = ?'),
      metaLike: p<[string], { key: string; value: string }>("SELECT key, value FROM meta WHERE key LIKE ? ESCAPE '\\'"),
      dataVersion: () => db.prepare<[], number>('PRAGMA data_version').pluck(),
      getInode: p<[number], InodeRow>('SELECT * FROM inodes WHERE ino = ?'),
      lookup: p<[number, string], { ino: number }>('SELECT ino FROM dentries WHERE parent = ? AND name = ?'),
      lookupRef: p<[number, string], { ino: number; mode: number; gid: number }>(
        'SELECT i.ino AS ino, i.mode AS mode, i.gid AS gid FROM dentries d JOIN inodes i ON i.ino = d.ino WHERE d.parent = ? AND d.name = ?',
      ),
      lookupAttr: p<[number, string], InodeRow>('SELECT i.* FROM dentries d JOIN inodes i ON i.ino = d.ino WHERE d.parent = ? AND d.name = ?'),
      lookupPiece: p<[number, string], { ino: number; mode: number; gid: number; size: number; hash: Buffer | null; data: Buffer | null; inline: number }>(
        `SELECT i.ino AS ino, i.mode AS mode, i.gid AS gid, i.size AS size, e.hash AS hash, ${pieceData} AS data, ${this.inline ? 'e.data IS NOT NULL' : '0'} AS inline
         FROM dentries d JOIN inodes i ON i.ino = d.ino LEFT JOIN extents e ON e.ino = i.ino AND e.idx = 0 WHERE d.parent = ? AND d.name = ?`,
      ),
      readdirAttrs: p<[number], InodeRow & { name: string }>(
        'SELECT d.name AS name, i.* FROM dentries d JOIN inodes i ON i.ino = d.ino WHERE d.parent = ? ORDER BY d.name',
      ),
      readdirPlus: p<[number], DirentMode>(
        'SELECT d.name AS name, d.ino AS ino, i.mode AS mode FROM dentries d JOIN inodes i ON i.ino = d.ino WHERE d.parent = ? ORDER BY d.name',
      ),
      readdir: p<[number], Dirent>('SELECT name, ino FROM dentries WHERE parent = ? ORDER BY name'),
      hasChildren: p<[number], { x: number }>('SELECT 1 AS x FROM dentries WHERE parent = ? LIMIT 1'),
      insertInode: p<[number, number, number, number, number, number, number, number, number, number, number, number]>(
        `INSERT INTO inodes (${INODE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertDentry: p<[number, string, number]>('INSERT INTO dentries (parent, name, ino) VALUES (?, ?, ?)'),
      deleteDentry: p<[number, string]>('DELETE FROM dentries WHERE parent = ? AND name = ?'),
      moveDentry: p<[number, string, number, string]>('UPDATE dentries SET parent = ?, name = ? WHERE parent = ? AND name = ?'),
      deleteInode: p<[number]>('DELETE FROM inodes WHERE ino = ?'),
      deleteExtents: p<[number]>('DELETE FROM extents WHERE ino = ?'),
      deleteExtentsFrom: p<[number, number]>('DELETE FROM extents WHERE ino = ? AND idx >= ?'),
      deleteSymlink: p<[number]>('DELETE FROM symlinks WHERE ino = ?'),
      insertSymlink: p<[number, string]>('INSERT INTO symlinks (ino, target) VALUES (?, ?)'),
      readlink: p<[number], { target: string }>('SELECT target FROM symlinks WHERE ino = ?'),
      extent: p<[number, number], { hash: Buffer }>('SELECT hash FROM extents WHERE ino = ? AND idx = ?'),
      extentsRange: p<[number, number, number], { idx: number; hash: Buffer }>(
        'SELECT idx, hash FROM extents WHERE ino = ? AND idx >= ? AND idx <= ? ORDER BY idx',
      ),
      extentsWithData: p<[number, number, number], { idx: number; hash: Buffer; data: Buffer | null; inline: number }>(
        `SELECT e.idx AS idx, e.hash AS hash, ${pieceData} AS data, ${this.inline ? 'e.data IS NOT NULL' : '0'} AS inline FROM extents e WHERE e.ino = ? AND e.idx >= ? AND e.idx <= ? ORDER BY e.idx`,
      ),
      extentsAll: p<[number], { idx: number; hash: Buffer }>('SELECT idx, hash FROM extents WHERE ino = ? ORDER BY idx'),
      upsertExtent: p<[number, number, Buffer]>('INSERT OR REPLACE INTO extents (ino, idx, hash) VALUES (?, ?, ?)'),
      upsertInline: p<[number, number, Buffer, Uint8Array]>('INSERT OR REPLACE INTO extents (ino, idx, hash, data) VALUES (?, ?, ?, ?)'),
      copyExtents: p<[number, number]>(
        this.inline
          ? 'INSERT INTO extents (ino, idx, hash, data) SELECT ?, idx, hash, data FROM extents WHERE ino = ?'
          : 'INSERT INTO extents (ino, idx, hash) SELECT ?, idx, hash FROM extents WHERE ino = ?',
      ),
      // Saving a checkpoint: the live tree's inline pieces (all, or one inode's) move into the chunk table.
      spillAll: p<[]>('INSERT OR IGNORE INTO chunks (hash, data) SELECT hash, data FROM extents WHERE data IS NOT NULL'),
      clearAll: p<[]>('UPDATE extents SET data = NULL WHERE data IS NOT NULL'),
      spillIno: p<[number]>('INSERT OR IGNORE INTO chunks (hash, data) SELECT hash, data FROM extents WHERE ino = ? AND data IS NOT NULL'),
      clearIno: p<[number]>('UPDATE extents SET data = NULL WHERE ino = ? AND data IS NOT NULL'),
      setSize: p<[number, number, number, number, number, number]>(
        'UPDATE inodes SET size = ?, mtime_s = ?, mtime_ns = ?, ctime_s = ?, ctime_ns = ? WHERE ino = ?',
      ),
      setNlink: p<[number, number, number, number]>('UPDATE inodes SET nlink = ?, ctime_s = ?, ctime_ns = ? WHERE ino = ?'),
      touchMC: p<[number, number, number, number, number]>('UPDATE inodes SET mtime_s = ?, mtime_ns = ?, ctime_s = ?, ctime_ns = ? WHERE ino = ?'),
      touchC: p<[number, number, number]>('UPDATE inodes SET ctime_s = ?, ctime_ns = ? WHERE ino = ?'),
      setAttrs: p<[number, number, number, number, number, number, number, number, number, number]>(
        'UPDATE inodes SET mode = ?, uid = ?, gid = ?, atime_s = ?, atime_ns = ?, mtime_s = ?, mtime_ns = ?, ctime_s = ?, ctime_ns = ? WHERE ino = ?',
      ),
      counters: p<[], Counters>('SELECT live_bytes, live_inodes, next_ino FROM counters WHERE id = 1'),
      addBytes: p<[number]>('UPDATE counters SET live_bytes = live_bytes + ? WHERE id = 1'),
      addInodes: p<[number]>('UPDATE counters SET live_inodes = live_inodes + ? WHERE id = 1'),
      takeIno: p<[number], { ino: number }>(
        'UPDATE counters SET next_ino = next_ino + 1, live_inodes = live_inodes + 1, live_bytes = live_bytes + ? WHERE id = 1 RETURNING next_ino - 1 AS ino',
      ),
      orphans: p<[], { ino: number }>('SELECT ino FROM inodes WHERE nlink = 0 AND ino != 1'),
      chunkGet: p<[Buffer], { data: Buffer }>('SELECT data FROM chunks WHERE hash = ?'),
      chunkPut: p<[Buffer, Uint8Array]>('INSERT OR IGNORE INTO chunks (hash, data) VALUES (?, ?)'),
      journalInsert: p<[number, string, string | null, string | null, number | null, string, string | null]>(
        'INSERT INTO journal (ts_ms, op, path, path2, size, surface, details) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      journalTrim: p<[number]>('DELETE FROM journal WHERE seq <= (SELECT MAX(seq) FROM journal) - ?'),
      journalMax: p<[], { s: number }>('SELECT COALESCE(MAX(seq), 0) AS s FROM journal'),
      checkpointByName: p<[string], CheckpointRow>('SELECT * FROM checkpoints WHERE name = ?'),
    });
  }

  /** The checkpoint whose rows are the `park_*` tables, if one is. */
  parked(): number | undefined {
    const v = this.s.getMeta.get(PARKED_KEY)?.value;
    const id = v === undefined ? NaN : Number(v);
    return Number.isSafeInteger(id) ? id : undefined;
  }

  /** Where tree `tree`'s rows are, and the condition that picks them. */
  private tables(tree: TreeId): Tables {
    if (tree === LIVE) return LIVE_T;
    if (tree === this.parked()) return PARK_T;
    return { inodes: 'cp_inodes', dentries: 'cp_dentries', symlinks: 'cp_symlinks', extents: 'cp_extents', where: 'cp = ?', params: [tree] };
  }

  /** Every checkpoint's extents (`cp, ino, idx, hash`), the parked one's included: a table or a subquery to read them from. */
  cpExtents(): string {
    const u = this.parked();
    return u === undefined ? 'cp_extents' : `(SELECT cp, ino, idx, hash FROM cp_extents UNION ALL SELECT ${u} AS cp, ino, idx, hash FROM park_extents)`;
  }

  /**
   * Runs the query `sql` builds over checkpoint tree `tree`'s tables (`cp_*` keyed by its id, or the
   * parked `park_*`), with the tree's key first and then `args`.
   */
  private inTree(tree: TreeId, sql: (t: Tables) => string, how: 'get' | 'all', ...args: unknown[]): unknown {
    const t = this.tables(tree);
    const st = this.prepared(sql(t));
    return how === 'get' ? st.get(...t.params, ...args) : st.all(...t.params, ...args);
  }

  /** Moves the parked checkpoint's rows into `cp_*` (inside a write transaction), if one is parked. */
  private unpark(): void {
    const u = this.parked();
    if (u === undefined) return;
    for (const t of LIVE_TABLES) {
      this.db.prepare(`INSERT INTO cp_${t} (cp, ${TREE_COLS[t]}) SELECT ?, ${TREE_COLS[t]} FROM park_${t}`).run(u);
      this.db.exec(`DROP TABLE park_${t}`);
    }
    this.s.delMeta.run(PARKED_KEY);
  }

  /** Before a write to checkpoint tree `tree`: a parked tree is folded into `cp_*` first. */
  private unparkIf(tree: TreeId): void {
    if (tree !== LIVE && tree === this.parked()) this.unpark();
  }

  get file(): string {
    return this.db.name;
  }
  get readonly(): boolean {
    return this.db.readonly;
  }
  get isOpen(): boolean {
    return this.db.open;
  }
  get inTransaction(): boolean {
    return this.db.inTransaction;
  }

  get groups(): GroupCommit {
    if (!this.groupCommit) {
      const db = this.db;
      const sp = db.prepare('SAVEPOINT avfs_op');
      const rel = db.prepare('RELEASE avfs_op');
      const rb = db.prepare('ROLLBACK TO avfs_op');
      this.groupCommit = {
        begin: () => db.exec('BEGIN IMMEDIATE'),
        savepoint: () => sp.run(),
        release: () => rel.run(),
        rollbackTo: () => rb.run(),
        commit: () => {
          if (db.open && db.inTransaction) db.exec('COMMIT');
        },
        rollback: () => {
          if (db.open && db.inTransaction) db.exec('ROLLBACK');
        },
      };
    }
    return this.groupCommit;
  }

  write<T>(fn: () => T): T {
    return writeTxn(this.db, fn);
  }
  read<T>(fn: () => T): T {
    return readTxn(this.db, fn);
  }
  changeVersion(): number {
    return this.s.dataVersion.get() ?? 0;
  }
  schemaVersion(): number {
    return schemaVersion(this.db);
  }
  check(): string {
    return this.db.pragma('integrity_check', { simple: true }) as string;
  }
  fileReplaced(): boolean {
    return fileReplaced(this.db);
  }
  tuneForServer(): void {
    // A long-lived server connection: read pages through mmap and keep a bigger page cache
    // (per connection; the vault file is unchanged).
    this.db.pragma('mmap_size = 268435456');
    this.db.pragma('cache_size = -65536');
  }
  compact(): void {
    this.db.pragma('incremental_vacuum');
    this.db.pragma('wal_checkpoint(TRUNCATE)');
  }
  close(): void {
    this.db.close();
  }

  // ---- meta ----
  getMeta(key: string): string | undefined {
    return this.s.getMeta.get(key)?.value;
  }
  setMeta(key: string, value: string | null): void {
    if (value === null) this.s.delMeta.run(key);
    else this.s.setMeta.run(key, value);
  }
  metaWithPrefix(prefix: string): Array<{ key: string; value: string }> {
    return this.s.metaLike.all(prefix.replace(/[\\%_]/g, (c) => '\\' + c) + '%');
  }
  markDamaged(what: string): void {
    const mark = (d: Db) => d.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES ('damaged', ?)").run(what);
    try {
      // Not inside the caller's transaction: the error about to be thrown would roll the mark back.
      if (!this.db.readonly && !this.db.inTransaction) return void mark(this.db);
      const w = sideConnection(this.db.name);
      try {
        mark(w);
      } finally {
        w.close();
      }
    } catch {
      /* read-only on disk, or busy */
    }
  }

  // ---- counters ----
  initCounters(nextIno: number): void {
    this.db.prepare('INSERT INTO counters (id, live_bytes, live_inodes, next_ino) VALUES (1, 0, 0, ?)').run(nextIno);
  }
  counters(): Counters | undefined {
    return this.s.counters.get();
  }
  addBytes(n: number): void {
    this.s.addBytes.run(n);
  }
  addInodes(n: number): void {
    this.s.addInodes.run(n);
  }
  takeIno(bytes = 0): number {
    return this.s.takeIno.get(bytes)!.ino;
  }
  recount(): void {
    this.db
      .prepare(
        `UPDATE counters SET
           live_bytes = (SELECT COALESCE(SUM(size), 0) FROM inodes WHERE (mode & 61440) = 32768),
           live_inodes = (SELECT COUNT(*) - 1 FROM inodes)
         WHERE id = 1`,
      )
      .run();
  }

  // ---- reading a tree ----
  inode(tree: TreeId, ino: number): InodeRow | undefined {
    if (tree === LIVE) return this.s.getInode.get(ino);
    return this.inTree(tree, (t) => `SELECT * FROM ${t.inodes} WHERE ${t.where} AND ino = ?`, 'get', ino) as InodeRow | undefined;
  }
  child(tree: TreeId, parent: number, name: string): number | undefined {
    if (tree === LIVE) return this.s.lookup.get(parent, name)?.ino;
    return (this.inTree(tree, (t) => `SELECT ino FROM ${t.dentries} WHERE ${t.where} AND parent = ? AND name = ?`, 'get', parent, name) as { ino: number } | undefined)?.ino;
  }
  childRef(parent: number, name: string): { ino: number; mode: number; gid: number } | undefined {
    return this.s.lookupRef.get(parent, name);
  }
  childAttr(parent: number, name: string): InodeRow | undefined {
    return this.s.lookupAttr.get(parent, name);
  }
  childWithPiece(parent: number, name: string): ChildPiece | undefined {
    const r = this.s.lookupPiece.get(parent, name);
    if (!r) return undefined;
    return { ino: r.ino, mode: r.mode, gid: r.gid, size: r.size, hash: r.hash ?? undefined, data: r.data ?? undefined, inline: r.inline === 1 };
  }
  children(tree: TreeId, parent: number): Dirent[] {
    if (tree === LIVE) return this.s.readdir.all(parent);
    return this.inTree(tree, (t) => `SELECT name, ino FROM ${t.dentries} WHERE ${t.where} AND parent = ? ORDER BY name`, 'all', parent) as Dirent[];
  }
  childrenAttrs(tree: TreeId, parent: number): Array<InodeRow & { name: string }> {
    if (tree === LIVE) return this.s.readdirAttrs.all(parent);
    // A checkpoint's rows are keyed by cp too: the join matches it (the parked tables have one tree).
    return this.inTree(
      tree,
      (t) => `SELECT d.name AS name, i.* FROM ${t.dentries} d JOIN ${t.inodes} i ON i.ino = d.ino${t.params.length > 0 ? ' AND i.cp = d.cp' : ''} WHERE ${t.params.length > 0 ? 'd.cp = ?' : '1'} AND d.parent = ? ORDER BY d.name`,
      'all',
      parent,
    ) as Array<InodeRow & { name: string }>;
  }
  childrenModes(parent: number): DirentMode[] {
    return this.s.readdirPlus.all(parent);
  }
  hasChildren(parent: number): boolean {
    return this.s.hasChildren.get(parent) !== undefined;
  }
  symlink(tree: TreeId, ino: number): string | undefined {
    if (tree === LIVE) return this.s.readlink.get(ino)?.target;
    return (this.inTree(tree, (t) => `SELECT target FROM ${t.symlinks} WHERE ${t.where} AND ino = ?`, 'get', ino) as { target: string } | undefined)?.target;
  }
  extents(tree: TreeId, ino: number, first?: number, last?: number): Array<{ idx: number; hash: Buffer }> {
    if (tree === LIVE) return first === undefined ? this.s.extentsAll.all(ino) : this.s.extentsRange.all(ino, first, last ?? Number.MAX_SAFE_INTEGER);
    const all = this.inTree(tree, (t) => `SELECT idx, hash FROM ${t.extents} WHERE ${t.where} AND ino = ? ORDER BY idx`, 'all', ino) as Array<{ idx: number; hash: Buffer }>;
    return first === undefined ? all : all.filter((e) => e.idx >= first && e.idx <= (last ?? Number.MAX_SAFE_INTEGER));
  }
  extentsWithData(ino: number, first: number, last: number): Array<{ idx: number; hash: Buffer; data: Buffer | undefined; inline: boolean }> {
    const rows = this.s.extentsWithData.all(ino, first, last) as Array<{ idx: number; hash: Buffer; data: Buffer | null | undefined; inline: number | boolean }>;
    for (const r of rows) {
      if (r.data === null) r.data = undefined;
      r.inline = r.inline === 1;
    }
    return rows as Array<{ idx: number; hash: Buffer; data: Buffer | undefined; inline: boolean }>;
  }
  extent(ino: number, idx: number): Buffer | undefined {
    return this.s.extent.get(ino, idx)?.hash;
  }
  orphans(): number[] {
    return this.s.orphans.all().map((r) => r.ino);
  }
  countByType(): { files: number; directories: number; symlinks: number } {
    return this.db
      .prepare(
        `SELECT COALESCE(SUM((mode & 61440) = 32768), 0) AS files, COALESCE(SUM((mode & 61440) = 16384 AND ino != 1), 0) AS directories,
         COALESCE(SUM((mode & 61440) = 40960), 0) AS symlinks FROM inodes`,
      )
      .get() as { files: number; directories: number; symlinks: number };
  }
  largestFile(): number {
    return (this.db.prepare('SELECT COALESCE(MAX(size), 0) AS m FROM inodes WHERE (mode & 61440) = 32768').get() as { m: number }).m;
  }

  /** CROSS JOIN fixes the join order: each directory's entries are looked up by (cp, parent), never scanned. */
  listTree(tree: TreeId): Map<string, Node> {
    const t = this.tables(tree);
    const keyed = t.params.length > 0;
    const cp = (alias: string) => (keyed ? `${alias}.cp = ?` : '1');
    const sql = `
      WITH RECURSIVE tree(ino, path) AS (
        SELECT 1, ''
        UNION ALL
        SELECT d.ino, tree.path || '/' || d.name FROM tree CROSS JOIN ${t.dentries} d ON d.parent = tree.ino AND ${cp('d')}
      )
      SELECT tree.path AS path, i.ino AS ino, i.mode AS mode, i.size AS size, s.target AS target, i.mtime_s AS mtime_s, i.mtime_ns AS mtime_ns
      FROM tree CROSS JOIN ${t.inodes} i ON i.ino = tree.ino AND ${cp('i')}
      LEFT JOIN ${t.symlinks} s ON s.ino = i.ino AND ${cp('s')}
      WHERE tree.ino != 1`;
    const params = keyed ? [tree, tree, tree] : [];
    const out = new Map<string, Node>();
    for (const row of this.db.prepare(sql).all(...params) as Node[]) out.set(row.path, row);
    return out;
  }
  changedContent(a: TreeId, b: TreeId): Set<number> {
    const ta = this.tables(a);
    const tb = this.tables(b);
    const sql = `
      SELECT ino FROM (SELECT ino, idx, hash FROM ${ta.extents} WHERE ${ta.where} EXCEPT SELECT ino, idx, hash FROM ${tb.extents} WHERE ${tb.where})
      UNION
      SELECT ino FROM (SELECT ino, idx, hash FROM ${tb.extents} WHERE ${tb.where} EXCEPT SELECT ino, idx, hash FROM ${ta.extents} WHERE ${ta.where})`;
    const rows = this.db.prepare(sql).all(...ta.params, ...tb.params, ...tb.params, ...ta.params) as Array<{ ino: number }>;
    return new Set(rows.map((r) => r.ino));
  }
  contentDigests(tree: TreeId): Map<number, string> {
    const t = this.tables(tree);
    const sql = `SELECT ino, group_concat(h, ',') AS d FROM (SELECT ino, hex(hash) AS h FROM ${t.extents} WHERE ${t.where} ORDER BY ino, idx) GROUP BY ino`;
    return new Map((this.db.prepare(sql).all(...t.params) as Array<{ ino: number; d: string }>).map((r) => [r.ino, r.d]));
  }
  referencedHashes(): Buffer[] {
    // Checkpoints (cp_extents) came with schema 2.
    const parked = this.parked() === undefined ? '' : ' UNION SELECT hash FROM park_extents';
    const sql = tableNames(this.db).has('cp_extents') ? `SELECT hash FROM extents UNION SELECT hash FROM cp_extents${parked}` : 'SELECT hash FROM extents';
    return (this.db.prepare(sql).all() as Array<{ hash: Buffer }>).map((r) => r.hash);
  }

  // ---- changing the live tree ----
  insertInode(ino: number, mode: number, uid: number, gid: number, nlink: number, size: number, s: number, ns: number): void {
    this.s.insertInode.run(ino, mode, uid, gid, nlink, size, s, ns, s, ns, s, ns);
  }
  deleteInode(ino: number): void {
    this.s.deleteInode.run(ino);
  }
  setSize(ino: number, size: number, s: number, ns: number): void {
    this.s.setSize.run(size, s, ns, s, ns, ino);
  }
  setNlink(ino: number, nlink: number, s: number, ns: number): void {
    this.s.setNlink.run(nlink, s, ns, ino);
  }
  touchMC(ino: number, s: number, ns: number): void {
    this.s.touchMC.run(s, ns, s, ns, ino);
  }
  touchC(ino: number, s: number, ns: number): void {
    this.s.touchC.run(s, ns, ino);
  }
  setAttrs(ino: number, mode: number, uid: number, gid: number, as: number, ans: number, ms: number, mns: number, cs: number, cns: number): void {
    this.s.setAttrs.run(mode, uid, gid, as, ans, ms, mns, cs, cns, ino);
  }
  insertDentry(parent: number, name: string, ino: number): void {
    this.s.insertDentry.run(parent, name, ino);
  }
  deleteDentry(parent: number, name: string): void {
    this.s.deleteDentry.run(parent, name);
  }
  moveDentry(srcParent: number, srcName: string, dstParent: number, dstName: string): void {
    this.s.moveDentry.run(dstParent, dstName, srcParent, srcName);
  }
  insertSymlink(ino: number, target: string): void {
    this.s.insertSymlink.run(ino, target);
  }
  deleteSymlink(ino: number): void {
    this.s.deleteSymlink.run(ino);
  }
  upsertExtent(ino: number, idx: number, hash: Buffer): void {
    this.s.upsertExtent.run(ino, idx, hash);
  }
  deleteExtents(ino: number): void {
    this.s.deleteExtents.run(ino);
  }
  deleteExtentsFrom(ino: number, idx: number): void {
    this.s.deleteExtentsFrom.run(ino, idx);
  }
  copyExtents(src: number, dst: number): void {
    this.s.copyExtents.run(dst, src);
  }
  get inlineMax(): number {
    return this.inline ? INLINE_MAX : 0;
  }
  upsertInline(ino: number, idx: number, hash: Buffer, data: Uint8Array): void {
    this.s.upsertInline.run(ino, idx, hash, data);
  }
  /** Moves the live tree's inline pieces (or inode `ino`'s) into the chunk table, so a checkpoint tree can name them. */
  private spill(ino?: number): void {
    if (!this.inline) return;
    if (ino === undefined) {
      this.s.spillAll.run();
      this.s.clearAll.run();
    } else {
      this.s.spillIno.run(ino);
      this.s.clearIno.run(ino);
    }
  }
  insertNames(names: readonly NewName[]): void {
    const { insertInode, insertDentry, insertSymlink, upsertExtent, upsertInline } = this.s;
    for (const n of names) {
      const r = n.row;
      if (r) {
        insertInode.run(r.ino, r.mode, r.uid, r.gid, r.nlink, r.size, r.atime_s, r.atime_ns, r.mtime_s, r.mtime_ns, r.ctime_s, r.ctime_ns);
        if (n.target !== undefined) insertSymlink.run(n.ino, n.target);
        if (n.extents) for (let i = 0; i < n.extents.length; i++) upsertExtent.run(n.ino, i, n.extents[i]!);
        if (n.inline) upsertInline.run(n.ino, 0, n.inline.hash, n.inline.data);
      }
      insertDentry.run(n.parent, n.name, n.ino);
    }
  }

  // ---- chunks ----
  chunkGet(hash: Buffer): Buffer | undefined {
    return this.s.chunkGet.get(hash)?.data;
  }
  chunkPut(hash: Buffer, data: Uint8Array): void {
    this.s.chunkPut.run(hash, data);
  }
  chunkStats(): { count: number; bytes: number } {
    // Distinct pieces of content: the chunk table's, and inline ones it does not also hold (each once).
    const sql = this.inline
      ? `SELECT COUNT(*) AS count, COALESCE(SUM(LENGTH(data)), 0) AS bytes FROM (SELECT data FROM chunks UNION ALL SELECT data FROM (${INLINE_ONLY}))`
      : 'SELECT COUNT(*) AS count, COALESCE(SUM(LENGTH(data)), 0) AS bytes FROM chunks';
    return this.db.prepare(sql).get() as { count: number; bytes: number };
  }
  chunkSweep(keep: Set<string>, dryRun: boolean): { total: number; dead: number; bytes: number } {
    const db = this.db;
    db.exec('CREATE TEMP TABLE IF NOT EXISTS gc_keep (hash BLOB PRIMARY KEY) WITHOUT ROWID');
    db.exec('DELETE FROM gc_keep');
    const ins = db.prepare('INSERT OR IGNORE INTO gc_keep (hash) VALUES (?)');
    for (const h of keep) ins.run(Buffer.from(h, 'hex'));
    const total = (db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number }).n;
    const dead = db
      .prepare('SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(data)), 0) AS bytes FROM chunks WHERE hash NOT IN (SELECT hash FROM gc_keep)')
      .get() as { n: number; bytes: number };
    if (!dryRun) db.exec('DELETE FROM chunks WHERE hash NOT IN (SELECT hash FROM gc_keep)');
    db.exec('DELETE FROM gc_keep');
    return { total, dead: dead.n, bytes: dead.bytes };
  }

  chunkEach(fn: (hash: Buffer, data: Buffer) => void): void {
    for (const r of this.db.prepare('SELECT hash, data FROM chunks').iterate() as Iterable<{ hash: Buffer; data: Buffer }>) fn(r.hash, r.data);
    if (!this.inline) return;
    for (const r of this.db.prepare(`SELECT hash, data FROM (${INLINE_ONLY})`).iterate() as Iterable<{ hash: Buffer; data: Buffer }>) fn(r.hash, r.data);
  }

  // ---- copying between backends ----
  dumpTree(tree: TreeId): TreeDump {
    const t = this.tables(tree);
    const all = <R>(sql: string) => this.db.prepare(sql).all(...t.params) as R[];
    return {
      inodes: all<InodeRow>(`SELECT ${INODE_COLS} FROM ${t.inodes} WHERE ${t.where}`),
      dentries: all<{ parent: number; name: string; ino: number }>(`SELECT parent, name, ino FROM ${t.dentries} WHERE ${t.where}`).map((r) => [r.parent, r.name, r.ino]),
      symlinks: all<{ ino: number; target: string }>(`SELECT ino, target FROM ${t.symlinks} WHERE ${t.where}`).map((r) => [r.ino, r.target]),
      extents: all<{ ino: number; idx: number; hash: Buffer }>(`SELECT ino, idx, hash FROM ${t.extents} WHERE ${t.where}`).map((r) => [r.ino, r.idx, r.hash]),
    };
  }
  loadTree(tree: TreeId, dump: TreeDump): void {
    const live = tree === LIVE;
    const cp = live ? '' : 'cp, ';
    const mark = live ? '' : '?, ';
    const pre = live ? [] : [tree];
    this.unparkIf(tree);
    const t = live ? LIVE_T : this.tables(tree);
    const ins = this.db.prepare(`INSERT INTO ${t.inodes} (${cp}${INODE_COLS}) VALUES (${mark}?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    for (const r of dump.inodes) ins.run(...pre, r.ino, r.mode, r.uid, r.gid, r.nlink, r.size, r.atime_s, r.atime_ns, r.mtime_s, r.mtime_ns, r.ctime_s, r.ctime_ns);
    const d = this.db.prepare(`INSERT INTO ${t.dentries} (${cp}parent, name, ino) VALUES (${mark}?, ?, ?)`);
    for (const r of dump.dentries) d.run(...pre, ...r);
    const s = this.db.prepare(`INSERT INTO ${t.symlinks} (${cp}ino, target) VALUES (${mark}?, ?)`);
    for (const r of dump.symlinks) s.run(...pre, ...r);
    const e = this.db.prepare(`INSERT INTO ${t.extents} (${cp}ino, idx, hash) VALUES (${mark}?, ?, ?)`);
    for (const r of dump.extents) e.run(...pre, ...r);
  }
  loadJournal(rows: JournalRow[]): void {
    const ins = this.db.prepare('INSERT INTO journal (seq, ts_ms, op, path, path2, size, surface, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?)');
    for (const r of rows) ins.run(r.seq, r.ts_ms, r.op, r.path, r.path2, r.size, r.surface, r.details);
  }
  // ---- journal ----
  appendJournal(ts: number, op: string, path: string | null, path2: string | null, size: number | null, surface: string, details: string | null): number {
    return Number(this.s.journalInsert.run(ts, op, path, path2, size, surface, details).lastInsertRowid);
  }
  trimJournal(keep: number): void {
    this.s.journalTrim.run(keep);
  }
  journalMaxSeq(): number {
    return this.s.journalMax.get()?.s ?? 0;
  }
  journalFirstAfter(seq: number): number | null {
    return this.db.prepare<[number], { s: number | null }>('SELECT MIN(seq) AS s FROM journal WHERE seq > ?').get(seq)?.s ?? null;
  }
  journalAfter(seq: number, limit = -1): JournalRow[] {
    return this.db.prepare<[number, number], JournalRow>('SELECT seq, ts_ms, op, path, path2, size, surface, details FROM journal WHERE seq > ? ORDER BY seq LIMIT ?').all(seq, limit);
  }
  journalRecent(sinceMs: number, limit: number): { rows: JournalRow[]; total: number } {
    const rows = this.db
      .prepare<[number, number], JournalRow>('SELECT seq, ts_ms, op, path, path2, size, surface, details FROM journal WHERE ts_ms >= ? ORDER BY seq DESC LIMIT ?')
      .all(sinceMs, limit);
    const total = this.db.prepare<[number], { n: number }>('SELECT COUNT(*) AS n FROM journal WHERE ts_ms >= ?').get(sinceMs)!.n;
    return { rows, total };
  }
  journalCount(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM journal').get() as { n: number }).n;
  }
  journalMentions(ops: readonly string[], id: string): boolean {
    const marks = ops.map(() => '?').join(', ');
    return this.db.prepare(`SELECT 1 FROM journal WHERE op IN (${marks}) AND json_extract(details, '$.id') = ? LIMIT 1`).get(...ops, id) !== undefined;
  }

  // ---- checkpoints ----
  checkpointRows(): CheckpointRow[] {
    // Checkpoints came with schema 2; an older file has none.
    if (!tableNames(this.db).has('checkpoints')) return [];
    return this.db.prepare<[], CheckpointRow>('SELECT * FROM checkpoints ORDER BY id').all();
  }
  checkpointByName(name: string): CheckpointRow | undefined {
    return this.s.checkpointByName.get(name);
  }
  nextCheckpointId(): number {
    // AUTOINCREMENT never reuses an id, so the next one is known inside this write transaction.
    return (this.db.prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'checkpoints'), 0) + 1 AS id").get() as { id: number }).id;
  }
  insertCheckpoint(r: CheckpointRow): void {
    this.db
      .prepare('INSERT INTO checkpoints (id, name, created_ms, description, auto, file_count, total_bytes, journal_seq) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(r.id, r.name, r.created_ms, r.description, r.auto, r.file_count, r.total_bytes, r.journal_seq);
  }
  setCheckpointCounts(id: number, files: number, bytes: number): void {
    this.db.prepare('UPDATE checkpoints SET file_count = ?, total_bytes = ? WHERE id = ?').run(files, bytes, id);
  }
  setCheckpointJournalSeq(id: number, seq: number): void {
    this.db.prepare('UPDATE checkpoints SET journal_seq = ? WHERE id = ?').run(seq, id);
  }
  get refs(): CheckpointRefs {
    this.checkpointRefs ??= new CheckpointRefs(this.db, () => this.cpExtents());
    return this.checkpointRefs;
  }
  deleteCheckpointRow(id: number): void {
    this.db.prepare('DELETE FROM checkpoints WHERE id = ?').run(id);
  }
  snapshotLive(id: TreeId, moveOut = false): boolean {
    // A checkpoint tree names chunks only: the live tree's inline pieces move into the chunk table first.
    this.spill();
    if (moveOut) return this.parkLive(id);
    // Files unlinked but still open on a mount (nlink 0) are not part of the tree: leave them out,
    // or a restore would bring back inodes that nothing will ever free.
    const copied = this.db.prepare(`INSERT INTO cp_inodes (cp, ${INODE_COLS}) SELECT ?, ${INODE_COLS} FROM inodes WHERE nlink > 0`).run(id).changes;
    this.db.prepare('INSERT INTO cp_dentries (cp, parent, name, ino) SELECT ?, parent, name, ino FROM dentries').run(id);
    this.db.prepare('INSERT INTO cp_symlinks (cp, ino, target) SELECT ?, ino, target FROM symlinks').run(id);
    // Every inode copied (the usual case): the extents are copied without a lookup each.
    const whole = copied === (this.db.prepare('SELECT COUNT(*) AS n FROM inodes').get() as { n: number }).n;
    if (whole) this.db.prepare('INSERT INTO cp_extents (cp, ino, idx, hash) SELECT ?, ino, idx, hash FROM extents').run(id);
    else this.db.prepare('INSERT INTO cp_extents (cp, ino, idx, hash) SELECT ?, e.ino, e.idx, e.hash FROM extents e JOIN inodes i ON i.ino = e.ino WHERE i.nlink > 0').run(id);
    return whole;
  }

  /**
   * The live tables become checkpoint `id`'s (renamed to `park_*`, no row copied) and the live
   * tree is left empty, in new tables made from the same definitions, for `restoreTree` to fill.
   * A checkpoint parked before is folded into `cp_*` first: one is parked at a time.
   */
  private parkLive(id: TreeId): boolean {
    this.unpark();
    const names = LIVE_TABLES.map((t) => `'${t}'`).join(', ');
    const defs = this.db
      .prepare<[], { type: string; name: string; sql: string }>(`SELECT type, name, sql FROM sqlite_master WHERE tbl_name IN (${names}) AND sql IS NOT NULL ORDER BY type = 'index'`)
      .all();
    for (const t of LIVE_TABLES) this.db.exec(`ALTER TABLE ${t} RENAME TO park_${t}`);
    // An index keeps its name through the rename: the parked table's goes, the new table gets it.
    for (const d of defs) if (d.type === 'index') this.db.exec(`DROP INDEX "${d.name.replace(/"/g, '""')}"`);
    for (const d of defs) this.db.exec(d.sql);
    this.s.setMeta.run(PARKED_KEY, String(id));
    // Files unlinked but still open on a mount (nlink 0) are not part of the tree (see snapshotLive).
    const open = this.prepared('SELECT ino FROM park_inodes WHERE nlink = 0').all() as Array<{ ino: number }>;
    for (const { ino } of open) for (const t of ['park_inodes', 'park_symlinks', 'park_extents']) this.prepared(`DELETE FROM ${t} WHERE ino = ?`).run(ino);
    return open.length === 0;
  }
  setCounters(c: Counters): void {
    this.db.prepare('INSERT OR REPLACE INTO counters (id, live_bytes, live_inodes, next_ino) VALUES (1, ?, ?, ?)').run(c.live_bytes, c.live_inodes, c.next_ino);
  }
  copyTree(from: TreeId, to: TreeId): void {
    this.unparkIf(to);
    const f = this.tables(from);
    for (const t of LIVE_TABLES) this.db.prepare(`INSERT INTO cp_${t} (cp, ${TREE_COLS[t]}) SELECT ?, ${TREE_COLS[t]} FROM ${f[t]} WHERE ${f.where}`).run(to, ...f.params);
  }
  restoreTree(id: TreeId): void {
    const f = this.tables(id);
    for (const t of LIVE_TABLES) this.db.exec(`DELETE FROM ${t}`);
    for (const t of LIVE_TABLES) this.db.prepare(`INSERT INTO ${t} (${TREE_COLS[t]}) SELECT ${TREE_COLS[t]} FROM ${f[t]} WHERE ${f.where}`).run(...f.params);
  }
  dropTree(id: TreeId): void {
    if (id !== LIVE && id === this.parked()) {
      for (const t of LIVE_TABLES) this.db.exec(`DROP TABLE park_${t}`);
      this.s.delMeta.run(PARKED_KEY);
      return;
    }
    for (const t of CP_TABLES) this.db.prepare(`DELETE FROM ${t} WHERE cp = ?`).run(id);
  }
  treeCounts(id: TreeId): { files: number; bytes: number } {
    const t = this.tables(id);
    return this.db
      .prepare(`SELECT COUNT(*) - 1 AS files, COALESCE(SUM(CASE WHEN (mode & 61440) = 32768 THEN size END), 0) AS bytes FROM ${t.inodes} WHERE ${t.where}`)
      .get(...t.params) as { files: number; bytes: number };
  }
  private prepared(sql: string): Database.Statement<unknown[]> {
    let st = this.bySql.get(sql);
    if (!st) {
      st = this.db.prepare<unknown[]>(sql);
      this.bySql.set(sql, st);
    }
    return st;
  }
  cpLinks(tree: TreeId, ino: number): number {
    const t = this.tables(tree);
    return (this.prepared(`SELECT COUNT(*) AS n FROM ${t.dentries} WHERE ${t.where} AND ino = ?`).get(...t.params, ino) as { n: number }).n;
  }
  // The edits below write a checkpoint's rows in cp_*: a parked one is folded there first.
  cpDeleteDentry(tree: TreeId, parent: number, name: string): void {
    this.unparkIf(tree);
    this.prepared('DELETE FROM cp_dentries WHERE cp = ? AND parent = ? AND name = ?').run(tree, parent, name);
  }
  cpInsertDentry(tree: TreeId, parent: number, name: string, ino: number): void {
    this.unparkIf(tree);
    this.prepared('INSERT INTO cp_dentries (cp, parent, name, ino) VALUES (?, ?, ?, ?)').run(tree, parent, name, ino);
  }
  cpDropInode(tree: TreeId, ino: number): void {
    this.unparkIf(tree);
    for (const t of ['cp_inodes', 'cp_symlinks', 'cp_extents']) this.prepared(`DELETE FROM ${t} WHERE cp = ? AND ino = ?`).run(tree, ino);
  }
  cpCopyInode(tree: TreeId, from: TreeId, ino: number): void {
    this.cpDropInode(tree, ino);
    if (from === LIVE) this.spill(ino);
    const t = this.tables(from);
    for (const k of ['inodes', 'symlinks', 'extents'] as const) {
      this.prepared(`INSERT INTO cp_${k} (cp, ${TREE_COLS[k]}) SELECT ?, ${TREE_COLS[k]} FROM ${t[k]} WHERE ino = ? AND ${t.where}`).run(tree, ino, ...t.params);
    }
  }
  cpSetDirAttrs(tree: TreeId, ino: number, from: TreeId, fromIno: number): void {
    this.unparkIf(tree);
    const t = this.tables(from);
    this.prepared(
      `UPDATE cp_inodes SET (mode, uid, gid, mtime_s, mtime_ns) = (SELECT mode, uid, gid, mtime_s, mtime_ns FROM ${t.inodes} WHERE ino = ? AND ${t.where}) WHERE cp = ? AND ino = ?`,
    ).run(fromIno, ...t.params, tree, ino);
  }

  // ---- forks ----
  forkFrom(sourceFile: string, forkName: string, record: () => void): void {
    const db = this.db;
    db.prepare('ATTACH DATABASE ? AS src').run(sourceFile);
    try {
      writeTxn(db, () => {
        // Writing to the source takes its write lock, so its gc cannot run between this copy and
        // the commit that records the parent link. The source also records the fork, so its gc
        // knows its forks even when one cannot be read.
        db.prepare('INSERT OR REPLACE INTO src.meta (key, value) VALUES (?, ?)').run(FORK_KEY_PREFIX + forkName, new Date().toISOString());
        // The fork reads its source's chunks and holds none of its own: the source's inline pieces
        // move into its chunk table first (as saving a checkpoint does), so the fork's extents name chunks only.
        const srcInline = (db.prepare("SELECT 1 FROM pragma_table_info('extents', 'src') WHERE name = 'data'").get() as unknown) !== undefined;
        if (srcInline) {
          db.exec('INSERT OR IGNORE INTO src.chunks (hash, data) SELECT hash, data FROM src.extents WHERE data IS NOT NULL');
          db.exec('UPDATE src.extents SET data = NULL WHERE data IS NOT NULL');
        }
        for (const t of ['inodes', 'dentries', 'symlinks', 'extents', 'counters']) {
          db.exec(`DELETE FROM main.${t}`);
          if (t === 'extents') db.exec('INSERT INTO main.extents (ino, idx, hash) SELECT ino, idx, hash FROM src.extents');
          else db.exec(`INSERT INTO main.${t} SELECT * FROM src.${t}`);
        }
        db.exec("INSERT OR REPLACE INTO main.meta SELECT key, value FROM src.meta WHERE key LIKE 'quota.%' OR key LIKE 'policy.%' OR (key LIKE 'base.%' AND key != 'base.journal_seq')");
        // A vault made from a project names a base checkpoint (`base.checkpoint`, host/project/base.ts): the
        // fork gets a copy of that one (no other checkpoint), so it has the same base and can be applied.
        const names = db.prepare("SELECT DISTINCT value FROM src.meta WHERE key IN ('base.checkpoint', 'base.git_checkpoint')").all() as Array<{ value: string }>;
        for (const { value: name } of names) {
          const id = (db.prepare('SELECT id FROM src.checkpoints WHERE name = ?').get(name) as { id: number } | undefined)?.id;
          if (id === undefined) continue;
          db.prepare('INSERT INTO main.checkpoints SELECT * FROM src.checkpoints WHERE id = ?').run(id);
          for (const t of CP_TABLES) db.prepare(`INSERT INTO main.${t} SELECT * FROM src.${t} WHERE cp = ?`).run(id);
        }
        record();
      });
    } finally {
      db.exec('DETACH DATABASE src');
    }
  }
}
