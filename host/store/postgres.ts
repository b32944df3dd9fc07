/**
 * The PostgreSQL backend (npm `pg`, through `SyncPg`: a worker thread and `Atomics.wait`). Many
 * homes (machines) can attach one vault. Layout: one schema `avfs` per database, with every row
 * keyed by the vault's id, so a server holds any number of vaults and forks are copies of rows:
 *
 *   vaults     id, name (unique), parent_id (a fork's source), counters, next ids, version
 *   meta       (vault, key) → value
 *   inodes     (vault, tree, ino) → mode, uid, gid, nlink, size, times
 *   dentries   (vault, tree, parent, name COLLATE "C") → ino
 *   symlinks   (vault, tree, ino) → target
 *   extents    (vault, tree, ino, idx) → hash
 *   checkpoints (vault, id) → name (unique per vault), counts, journal_seq
 *   journal    (vault, seq) → entry
 *   chunks     (vault, hash) → data (bytea, content-addressed: stored once per vault)
 *
 * `tree` 0 is the live tree and a checkpoint's id its copy, so checkpoints and forks copy rows of
 * metadata (server-side `INSERT … SELECT`), never chunks; a fork reads its source's chunks
 * through its parent link, as on the other backends.
 *
 * Transactions: `write` takes the vault's row lock (`SELECT … FOR UPDATE`) as its first statement,
 * so writers of one vault from any number of homes are serialised, as SQLite's `BEGIN IMMEDIATE`
 * serialises processes; nothing a writer read can change under it, so no write is lost. `read` is
 * one REPEATABLE READ snapshot (a checkpoint or a diff sees one consistent cut). Round trips are
 * what grow with distance, so statements that return nothing are queued and sent with the next
 * statement that returns rows, or with COMMIT: a write is (reads it makes) + 1 round trips. The
 * counters and next ids are read with the lock and kept in memory until the commit writes them.
 * Each commit bumps the vault's `version` and sends `NOTIFY avfs_changes` with the vault's id
 * (what other homes' hosts listen to).
 *
 * Plans: a vault's rows mostly arrive in transactions no ANALYZE has seen (a new vault's id is in
 * no statistics, and a big import is one transaction), so the planner guesses `vault = V AND
 * tree = T` matches about one row, and with that guess an index scan on only those two columns
 * (a walk over the whole tree) costs the same as a lookup of the full key. Lookups are therefore
 * written so that a full-key descent is the only plan: the inode behind a dentry by a scalar
 * subquery, each row of a listing's inode by `LATERAL (… OFFSET 0)`, and the second index of
 * `dentries` leads with `ino`, so it is no candidate for a lookup by name.
 */
import { basename } from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { CheckpointRefCounts, ChunkTable, Counters, DirentMode, JournalRow, MetaStore, Node, TreeDump, TreeId } from './backend';
import { LIVE } from './backend';
import type { CheckpointRow } from './checkpoints';
import { fileIdOf, replacedSince, type FileId } from './fileId';
import { FORK_KEY_PREFIX } from './forkLinks';
import type { Dirent, InodeRow } from './inodes';
import { readPgLink, redactUrl, writePgLink, type PgLink } from './pgLink';
import { PgError, type Result, SyncPg } from './pgSync';

/** What layout of the `avfs` schema this avfs writes: bumped when it changes. */
export const PG_SCHEMA_VERSION = 1;
/** The channel of change notifications; the payload is the vault's id. */
export const PG_CHANNEL = 'avfs_changes';

const S = 'avfs';
const INODE_COLS = 'ino, mode, uid, gid, nlink, size, atime_s, atime_ns, mtime_s, mtime_ns, ctime_s, ctime_ns';
const TREE_TABLES = ['inodes', 'dentries', 'symlinks', 'extents'] as const;
const TREE_COLS: Record<(typeof TREE_TABLES)[number], string> = {
  inodes: INODE_COLS,
  dentries: 'parent, name, ino',
  symlinks: 'ino, target',
  extents: 'ino, idx, hash',
};

const SCHEMA = `
CREATE SCHEMA IF NOT EXISTS ${S};
CREATE TABLE IF NOT EXISTS ${S}.vaults (
  id bigserial PRIMARY KEY, name text COLLATE "C" NOT NULL UNIQUE, parent_id bigint, created_ms bigint NOT NULL,
  schema int NOT NULL, has_counters boolean NOT NULL DEFAULT false, live_bytes bigint NOT NULL DEFAULT 0,
  live_inodes bigint NOT NULL DEFAULT 0, next_ino bigint NOT NULL DEFAULT 2, next_cp bigint NOT NULL DEFAULT 1,
  next_seq bigint NOT NULL DEFAULT 1, version bigint NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS ${S}.meta (vault bigint NOT NULL, key text COLLATE "C" NOT NULL, value text NOT NULL, PRIMARY KEY (vault, key));
CREATE TABLE IF NOT EXISTS ${S}.inodes (vault bigint NOT NULL, tree bigint NOT NULL, ino bigint NOT NULL, mode bigint NOT NULL,
  uid bigint NOT NULL, gid bigint NOT NULL, nlink bigint NOT NULL, size bigint NOT NULL, atime_s bigint NOT NULL, atime_ns bigint NOT NULL,
  mtime_s bigint NOT NULL, mtime_ns bigint NOT NULL, ctime_s bigint NOT NULL, ctime_ns bigint NOT NULL, PRIMARY KEY (vault, tree, ino));
CREATE TABLE IF NOT EXISTS ${S}.dentries (vault bigint NOT NULL, tree bigint NOT NULL, parent bigint NOT NULL, name text COLLATE "C" NOT NULL,
  ino bigint NOT NULL, PRIMARY KEY (vault, tree, parent, name));
DROP INDEX IF EXISTS ${S}.dentries_ino;
CREATE INDEX IF NOT EXISTS dentries_by_ino ON ${S}.dentries (ino, vault, tree);
CREATE TABLE IF NOT EXISTS ${S}.symlinks (vault bigint NOT NULL, tree bigint NOT NULL, ino bigint NOT NULL, target text NOT NULL, PRIMARY KEY (vault, tree, ino));
CREATE TABLE IF NOT EXISTS ${S}.extents (vault bigint NOT NULL, tree bigint NOT NULL, ino bigint NOT NULL, idx bigint NOT NULL, hash bytea NOT NULL,
  PRIMARY KEY (vault, tree, ino, idx));
CREATE TABLE IF NOT EXISTS ${S}.checkpoints (vault bigint NOT NULL, id bigint NOT NULL, name text COLLATE "C" NOT NULL, created_ms bigint NOT NULL,
  description text, auto bigint NOT NULL, file_count bigint NOT NULL, total_bytes bigint NOT NULL, journal_seq bigint NOT NULL,
  PRIMARY KEY (vault, id), UNIQUE (vault, name));
CREATE TABLE IF NOT EXISTS ${S}.journal (vault bigint NOT NULL, seq bigint NOT NULL, ts_ms bigint NOT NULL, op text NOT NULL, path text, path2 text,
  size bigint, surface text NOT NULL, details text, PRIMARY KEY (vault, seq));
CREATE TABLE IF NOT EXISTS ${S}.chunks (vault bigint NOT NULL, hash bytea NOT NULL, data bytea NOT NULL, PRIMARY KEY (vault, hash));
`;

/** A value as an SQL literal (standard_conforming_strings is on for every connection). */
function lit(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new AvfsError('Internal', `not a finite number: ${v}`);
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'string') {
    if (v.includes('\0')) throw new AvfsError('InvalidInput', 'a name or value holds a NUL character');
    return `'${v.replace(/'/g, "''")}'`;
  }
  if (v instanceof Uint8Array) return `'\\x${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('hex')}'::bytea`;
  throw new AvfsError('Internal', `no SQL literal for ${typeof v}`);
}

/** A template tag: every interpolated value becomes a literal. */
function sql(strings: TemplateStringsArray, ...values: unknown[]): string {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += lit(values[i]) + strings[i + 1]!;
  return out;
}

const buf = (v: unknown): Buffer => {
  const u = v as Uint8Array;
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
};

const toInode = (r: Record<string, unknown>): InodeRow => ({
  ino: r.ino as number,
  mode: r.mode as number,
  uid: r.uid as number,
  gid: r.gid as number,
  nlink: r.nlink as number,
  size: r.size as number,
  atime_s: r.atime_s as number,
  atime_ns: r.atime_ns as number,
  mtime_s: r.mtime_s as number,
  mtime_ns: r.mtime_ns as number,
  ctime_s: r.ctime_s as number,
  ctime_ns: r.ctime_ns as number,
});

const toCheckpoint = (r: Record<string, unknown>): CheckpointRow => ({
  id: r.id as number,
  name: r.name as string,
  created_ms: r.created_ms as number,
  description: (r.description as string | null) ?? null,
  auto: r.auto as number,
  file_count: r.file_count as number,
  total_bytes: r.total_bytes as number,
  journal_seq: r.journal_seq as number,
});

const toJournal = (r: Record<string, unknown>): JournalRow => ({
  seq: r.seq as number,
  ts_ms: r.ts_ms as number,
  op: r.op as string,
  path: (r.path as string | null) ?? null,
  path2: (r.path2 as string | null) ?? null,
  size: (r.size as number | null) ?? null,
  surface: r.surface as string,
  details: (r.details as string | null) ?? null,
});

/** The vault's row as a write holds it: read with the lock, written back by the commit. */
interface VaultRow {
  has_counters: boolean;
  live_bytes: number;
  live_inodes: number;
  next_ino: number;
  next_cp: number;
  next_seq: number;
  version: number;
}

export interface PgOpenOptions {
  readonly?: boolean;
  /** A new vault: this server, this name there; the link file is written. */
  create?: PgLink;
  /** An existing vault of the server, registered in this home (`vault attach`). */
  attach?: PgLink;
}

/** A PostgreSQL failure as the typed error every surface knows, the URL's password left out. */
function storageError(url: string, e: unknown): AvfsError {
  if (e instanceof AvfsError) return e;
  const code = (e as PgError).code;
  const reason = (e as Error).message;
  return new AvfsError('StorageError', `PostgreSQL at ${redactUrl(url)}: ${reason}`, { backend: 'postgres', url: redactUrl(url), reason, ...(code ? { code } : {}) });
}

export class PgMeta implements MetaStore, ChunkTable {
  readonly kind = 'postgres' as const;
  readonly groups = undefined;
  readonly readonly: boolean;
  readonly link: PgLink;
  private readonly pg: SyncPg;
  private id = 0;
  private open = true;
  private readonly opened: FileId;
  /** none, or the kind of transaction `write`/`read` holds. */
  private txn: 'none' | 'read' | 'write' = 'none';
  /** Whether BEGIN (and, in a write, the lock) went to the server already. */
  private began = false;
  /** Statements that return nothing, waiting for the next round trip. */
  private queue: string[] = [];
  /** In a write that began: the vault's row; `dirty` when the commit must write it back. */
  private row: VaultRow | undefined;
  private dirty = false;
  /** In a read: the version its snapshot sees (it cannot move inside one). */
  private snapVersion: number | undefined;

  constructor(
    readonly file: string,
    opts: PgOpenOptions = {},
  ) {
    this.readonly = !!opts.readonly;
    this.link = opts.create ?? opts.attach ?? readPgLink(file);
    this.pg = new SyncPg(this.link.url);
    try {
      if (opts.create) this.createOnServer();
      this.id = this.lookupVault();
      if (opts.create || opts.attach) writePgLink(file, this.link);
    } catch (e) {
      this.pg.close();
      throw e;
    }
    this.opened = fileIdOf(file);
  }

  private run(text: string): Result[] {
    try {
      return this.pg.query(text);
    } catch (e) {
      throw storageError(this.link.url, e);
    }
  }

  private createOnServer(): void {
    // One creator at a time lays out the schema (CREATE … IF NOT EXISTS races with itself).
    const r = this.run(`BEGIN; SELECT pg_advisory_xact_lock(7361766673); ${SCHEMA}
      INSERT INTO ${S}.vaults (name, created_ms, schema) VALUES (${lit(this.link.vault)}, ${lit(Date.now())}, ${PG_SCHEMA_VERSION})
      ON CONFLICT (name) DO NOTHING RETURNING id; COMMIT`);
    if (r.at(-2)?.count !== 1) {
      throw new AvfsError('VaultExists', `vault ${this.link.vault} exists already on ${redactUrl(this.link.url)}: use 'avfs vault attach ${this.link.vault} --backend postgres --url URL' to use it from this home`, {
        vault: this.link.vault,
        url: redactUrl(this.link.url),
      });
    }
  }

  private lookupVault(): number {
    const r = this.run(`SELECT to_regclass('${S}.vaults') IS NOT NULL AS ok`);
    const found = r[0]!.rows[0]!.ok ? this.run(sql`SELECT id, schema FROM avfs.vaults WHERE name = ${this.link.vault}`)[0]!.rows[0] : undefined;
    if (!found) {
      throw new AvfsError('VaultNotFound', `vault ${this.link.vault} is not on ${redactUrl(this.link.url)} (deleted there, or never created)`, { vault: this.link.vault, url: redactUrl(this.link.url) });
    }
    if ((found.schema as number) > PG_SCHEMA_VERSION) {
      throw new AvfsError('StorageError', `vault ${this.link.vault} on ${redactUrl(this.link.url)} has schema ${String(found.schema)}, newer than this avfs understands (${PG_SCHEMA_VERSION}); upgrade avfs`, {
        vault: this.link.vault,
      });
    }
    return found.id as number;
  }

  /** The vault's id on the server. */
  get vaultId(): number {
    return this.id;
  }
  /** Round trips made so far (the benchmark divides them by operations). */
  get roundTrips(): number {
    return this.pg.trips;
  }

  // ---- transactions ----

  /** The BEGIN (and lock) a transaction sends with its first round trip. */
  private beginText(): string {
    if (this.txn === 'write') return `BEGIN; SELECT has_counters, live_bytes, live_inodes, next_ino, next_cp, next_seq, version FROM ${S}.vaults WHERE id = ${this.id} FOR UPDATE`;
    return 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY';
  }

  /** Sends the queued statements and `text` in one round trip; the result of `text`. */
  private q(text: string): Result {
    const parts: string[] = [];
    const opening = this.txn !== 'none' && !this.began;
    if (opening) parts.push(this.beginText());
    parts.push(...this.queue, text);
    this.queue = [];
    // Began even when this fails: whatever part ran, the session may hold a transaction to roll back.
    if (opening) this.began = true;
    const res = this.run(parts.join(';\n'));
    if (opening && this.txn === 'write') this.takeRow(res[1]!);
    return res.at(-1)!;
  }

  private takeRow(r: Result): void {
    const row = r.rows[0];
    if (!row) {
      const vault = this.link.vault;
      throw new AvfsError('VaultNotFound', `vault ${vault} was deleted on ${redactUrl(this.link.url)} while this command ran: nothing was written`, { vault });
    }
    this.row = row as unknown as VaultRow;
  }

  private rows(text: string): Array<Record<string, unknown>> {
    return this.q(text).rows;
  }

  /** A statement that returns nothing: queued in a write, else its own transaction. */
  private exec(text: string): void {
    if (this.txn === 'write') {
      this.queue.push(text);
      this.dirty = true;
      return;
    }
    this.write(() => this.exec(text));
  }

  /** The vault's row, locked, inside a write (one round trip the first time). */
  private held(): VaultRow {
    if (this.txn !== 'write') throw new AvfsError('Internal', 'the vault row is only held inside a write');
    if (!this.began) this.q('SELECT 1');
    return this.row!;
  }

  get isOpen(): boolean {
    return this.open;
  }
  get inTransaction(): boolean {
    return this.txn !== 'none';
  }

  write<T>(fn: () => T): T {
    if (this.txn === 'write') return fn();
    if (this.readonly) throw new AvfsError('ReadOnly', `read-only: the vault ${basename(this.file).replace(/\.avfs$/, '')} is open read-only`, { file: this.file });
    if (this.txn === 'read') throw new AvfsError('Internal', 'a write cannot start inside a read transaction of the same vault');
    if (this.fileReplaced()) {
      const vault = basename(this.file).replace(/\.avfs$/, '');
      throw new AvfsError('VaultNotFound', `vault ${vault} was deleted while this command ran: nothing was written`, { vault });
    }
    this.txn = 'write';
    this.began = false;
    this.queue = [];
    this.row = undefined;
    this.dirty = false;
    try {
      const out = fn();
      this.commit();
      return out;
    } catch (e) {
      this.abort();
      throw e;
    } finally {
      this.txn = 'none';
      this.began = false;
      this.queue = [];
      this.row = undefined;
    }
  }

  private commit(): void {
    if (!this.began && this.queue.length === 0) return;
    const parts: string[] = [];
    if (!this.began) {
      // Only statements that return nothing: the lock is still the first statement.
      parts.push(`BEGIN; DO $$BEGIN PERFORM 1 FROM ${S}.vaults WHERE id = ${this.id} FOR UPDATE; IF NOT FOUND THEN RAISE EXCEPTION 'vault % is gone', ${lit(this.link.vault)} USING ERRCODE = 'P0002'; END IF; END$$`);
    }
    parts.push(...this.queue);
    this.queue = [];
    if (this.dirty || this.row) {
      const r = this.row;
      const set = r
        ? `has_counters = ${lit(r.has_counters)}, live_bytes = ${lit(r.live_bytes)}, live_inodes = ${lit(r.live_inodes)}, next_ino = ${lit(r.next_ino)}, next_cp = ${lit(r.next_cp)}, next_seq = ${lit(r.next_seq)}, `
        : '';
      if (this.dirty) parts.push(`UPDATE ${S}.vaults SET ${set}version = version + 1 WHERE id = ${this.id}`, `SELECT pg_notify('${PG_CHANNEL}', '${this.id}')`);
    }
    parts.push('COMMIT');
    try {
      this.run(parts.join(';\n'));
    } catch (e) {
      this.began = true; // whatever part ran, the session may hold an aborted transaction
      if ((e as AvfsError).details?.code === 'P0002') throw new AvfsError('VaultNotFound', `vault ${this.link.vault} was deleted on the server while this command ran: nothing was written`, { vault: this.link.vault });
      throw e;
    }
  }

  private abort(): void {
    if (!this.began) return;
    try {
      this.pg.query('ROLLBACK');
    } catch {
      /* the connection is gone: the server rolled it back */
    }
  }

  read<T>(fn: () => T): T {
    if (this.txn !== 'none') return fn();
    this.txn = 'read';
    this.began = false;
    this.snapVersion = undefined;
    try {
      const out = fn();
      if (this.began) this.run('COMMIT');
      return out;
    } catch (e) {
      this.abort();
      throw e;
    } finally {
      this.txn = 'none';
      this.began = false;
      this.snapVersion = undefined;
    }
  }

  changeVersion(): number {
    if (this.txn === 'write') return this.held().version;
    if (this.txn === 'read' && this.snapVersion !== undefined) return this.snapVersion;
    const v = (this.rows(`SELECT version FROM ${S}.vaults WHERE id = ${this.id}`)[0]?.version as number | undefined) ?? 0;
    if (this.txn === 'read') this.snapVersion = v;
    return v;
  }
  schemaVersion(): number {
    return (this.rows(`SELECT schema FROM ${S}.vaults WHERE id = ${this.id}`)[0]?.schema as number | undefined) ?? 0;
  }
  check(): string {
    const problems: string[] = [];
    if (!this.counters()) problems.push('no counters');
    if (!this.inode(LIVE, 1)) problems.push('no root directory');
    const bad = this.rows(
      `SELECT d.parent, d.name, d.ino FROM ${S}.dentries d LEFT JOIN ${S}.inodes i ON i.vault = d.vault AND i.tree = d.tree AND i.ino = d.ino WHERE d.vault = ${this.id} AND d.tree = 0 AND i.ino IS NULL LIMIT 10`,
    );
    for (const b of bad) problems.push(`entry ${String(b.name)} in ${String(b.parent)} names missing inode ${String(b.ino)}`);
    return problems.length === 0 ? 'ok' : problems.join('; ');
  }
  fileReplaced(): boolean {
    return replacedSince(this.file, this.opened);
  }
  tuneForServer(): void {
    /* the server caches */
  }
  compact(): void {
    /* autovacuum gives freed space back to the server */
  }
  close(): void {
    if (!this.open) return;
    this.open = false;
    this.pg.close();
  }

  // ---- meta ----
  getMeta(key: string): string | undefined {
    return this.rows(sql`SELECT value FROM avfs.meta WHERE vault = ${this.id} AND key = ${key}`)[0]?.value as string | undefined;
  }
  setMeta(key: string, value: string | null): void {
    if (value === null) this.exec(sql`DELETE FROM avfs.meta WHERE vault = ${this.id} AND key = ${key}`);
    else this.exec(sql`INSERT INTO avfs.meta (vault, key, value) VALUES (${this.id}, ${key}, ${value}) ON CONFLICT (vault, key) DO UPDATE SET value = EXCLUDED.value`);
  }
  metaWithPrefix(prefix: string): Array<{ key: string; value: string }> {
    const like = prefix.replace(/[\\%_]/g, (c) => '\\' + c) + '%';
    return this.rows(sql`SELECT key, value FROM avfs.meta WHERE vault = ${this.id} AND key LIKE ${like} ORDER BY key`) as Array<{ key: string; value: string }>;
  }
  markDamaged(what: string): void {
    try {
      if (this.readonly || this.txn !== 'none') return; // the error says it anyway
      this.exec(sql`INSERT INTO avfs.meta (vault, key, value) VALUES (${this.id}, 'damaged', ${what}) ON CONFLICT DO NOTHING`);
    } catch {
      /* best effort */
    }
  }

  // ---- counters (the row held by the write) ----
  initCounters(nextIno: number): void {
    const r = this.held();
    Object.assign(r, { has_counters: true, live_bytes: 0, live_inodes: 0, next_ino: nextIno });
    this.dirty = true;
  }
  counters(): Counters | undefined {
    const r = this.txn === 'write' ? this.held() : (this.rows(`SELECT has_counters, live_bytes, live_inodes, next_ino FROM ${S}.vaults WHERE id = ${this.id}`)[0] as unknown as VaultRow | undefined);
    return r?.has_counters ? { live_bytes: r.live_bytes, live_inodes: r.live_inodes, next_ino: r.next_ino } : undefined;
  }
  setCounters(c: Counters): void {
    Object.assign(this.held(), { has_counters: true, live_bytes: c.live_bytes, live_inodes: c.live_inodes, next_ino: c.next_ino });
    this.dirty = true;
  }
  addBytes(n: number): void {
    this.inWrite(() => (this.held().live_bytes += n));
  }
  addInodes(n: number): void {
    this.inWrite(() => (this.held().live_inodes += n));
  }
  takeIno(bytes = 0): number {
    return this.inWrite(() => {
      const r = this.held();
      r.live_inodes++;
      r.live_bytes += bytes;
      return r.next_ino++;
    });
  }
  recount(): void {
    this.inWrite(() => {
      const t = this.rows(
        `SELECT COALESCE(SUM(CASE WHEN (mode & 61440) = 32768 THEN size ELSE 0 END), 0) AS bytes, COUNT(*) - 1 AS inodes FROM ${S}.inodes WHERE vault = ${this.id} AND tree = 0`,
      )[0]!;
      Object.assign(this.held(), { live_bytes: t.bytes as number, live_inodes: t.inodes as number });
    });
  }
  private inWrite<T>(fn: () => T): T {
    return this.write(() => {
      const out = fn();
      this.dirty = true;
      return out;
    });
  }

  // ---- reading a tree ----
  inode(tree: TreeId, ino: number): InodeRow | undefined {
    const r = this.rows(`SELECT ${INODE_COLS} FROM ${S}.inodes WHERE vault = ${this.id} AND tree = ${lit(tree)} AND ino = ${lit(ino)}`)[0];
    return r ? toInode(r) : undefined;
  }
  child(tree: TreeId, parent: number, name: string): number | undefined {
    return this.rows(sql`SELECT ino FROM avfs.dentries WHERE vault = ${this.id} AND tree = ${tree} AND parent = ${parent} AND name = ${name}`)[0]?.ino as number | undefined;
  }
  childAttr(parent: number, name: string): InodeRow | undefined {
    const r = this.rows(
      sql`SELECT * FROM avfs.inodes WHERE vault = ${this.id} AND tree = 0 AND ino = (SELECT ino FROM avfs.dentries WHERE vault = ${this.id} AND tree = 0 AND parent = ${parent} AND name = ${name})`,
    )[0];
    return r ? toInode(r) : undefined;
  }
  childRef(parent: number, name: string): { ino: number; mode: number; gid: number } | undefined {
    const r = this.rows(
      sql`SELECT ino, mode, gid FROM avfs.inodes WHERE vault = ${this.id} AND tree = 0 AND ino = (SELECT ino FROM avfs.dentries WHERE vault = ${this.id} AND tree = 0 AND parent = ${parent} AND name = ${name})`,
    )[0];
    return r ? { ino: r.ino as number, mode: r.mode as number, gid: r.gid as number } : undefined;
  }
  children(tree: TreeId, parent: number): Dirent[] {
    return this.rows(sql`SELECT name, ino FROM avfs.dentries WHERE vault = ${this.id} AND tree = ${tree} AND parent = ${parent} ORDER BY name`) as unknown as Dirent[];
  }
  childrenAttrs(tree: TreeId, parent: number): Array<InodeRow & { name: string }> {
    return this.rows(
      sql`SELECT d.name, i.* FROM avfs.dentries d, LATERAL (SELECT * FROM avfs.inodes WHERE vault = d.vault AND tree = d.tree AND ino = d.ino OFFSET 0) i WHERE d.vault = ${this.id} AND d.tree = ${tree} AND d.parent = ${parent} ORDER BY d.name`,
    ).map((r) => ({ name: r.name as string, ...toInode(r) }));
  }
  childrenModes(parent: number): DirentMode[] {
    return this.rows(
      sql`SELECT d.name, d.ino, i.mode FROM avfs.dentries d, LATERAL (SELECT mode FROM avfs.inodes WHERE vault = d.vault AND tree = 0 AND ino = d.ino OFFSET 0) i WHERE d.vault = ${this.id} AND d.tree = 0 AND d.parent = ${parent} ORDER BY d.name`,
    ) as unknown as DirentMode[];
  }
  hasChildren(parent: number): boolean {
    return this.rows(sql`SELECT 1 FROM avfs.dentries WHERE vault = ${this.id} AND tree = 0 AND parent = ${parent} LIMIT 1`).length > 0;
  }
  symlink(tree: TreeId, ino: number): string | undefined {
    return this.rows(sql`SELECT target FROM avfs.symlinks WHERE vault = ${this.id} AND tree = ${tree} AND ino = ${ino}`)[0]?.target as string | undefined;
  }
  extents(tree: TreeId, ino: number, first?: number, last?: number): Array<{ idx: number; hash: Buffer }> {
    const range = first === undefined ? '' : ` AND idx >= ${lit(first)}${last === undefined ? '' : ` AND idx <= ${lit(last)}`}`;
    return this.rows(sql`SELECT idx, hash FROM avfs.extents WHERE vault = ${this.id} AND tree = ${tree} AND ino = ${ino}` + range + ' ORDER BY idx').map((r) => ({
      idx: r.idx as number,
      hash: buf(r.hash),
    }));
  }
  /** A read's extents with their chunks' bytes, in one round trip. */
  extentsWithData(ino: number, first: number, last: number): Array<{ idx: number; hash: Buffer; data: Buffer | undefined }> {
    return this.rows(
      sql`SELECT e.idx, e.hash, (SELECT data FROM avfs.chunks WHERE vault = e.vault AND hash = e.hash) AS data FROM avfs.extents e
          WHERE e.vault = ${this.id} AND e.tree = 0 AND e.ino = ${ino} AND e.idx >= ${first} AND e.idx <= ${last} ORDER BY e.idx`,
    ).map((r) => ({ idx: r.idx as number, hash: buf(r.hash), data: r.data === null || r.data === undefined ? undefined : buf(r.data) }));
  }
  extent(ino: number, idx: number): Buffer | undefined {
    const r = this.rows(sql`SELECT hash FROM avfs.extents WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino} AND idx = ${idx}`)[0];
    return r ? buf(r.hash) : undefined;
  }
  orphans(): number[] {
    return this.rows(`SELECT ino FROM ${S}.inodes WHERE vault = ${this.id} AND tree = 0 AND nlink = 0 AND ino != 1`).map((r) => r.ino as number);
  }
  countByType(): { files: number; directories: number; symlinks: number } {
    const r = this.rows(
      `SELECT COUNT(*) FILTER (WHERE (mode & 61440) = 32768) AS files, COUNT(*) FILTER (WHERE (mode & 61440) = 16384 AND ino != 1) AS directories,
       COUNT(*) FILTER (WHERE (mode & 61440) = 40960) AS symlinks FROM ${S}.inodes WHERE vault = ${this.id} AND tree = 0`,
    )[0]!;
    return { files: r.files as number, directories: r.directories as number, symlinks: r.symlinks as number };
  }
  largestFile(): number {
    return this.rows(`SELECT COALESCE(MAX(size), 0) AS m FROM ${S}.inodes WHERE vault = ${this.id} AND tree = 0 AND (mode & 61440) = 32768`)[0]!.m as number;
  }
  listTree(tree: TreeId): Map<string, Node> {
    const v = this.id;
    const t = lit(tree);
    const rows = this.rows(`
      WITH RECURSIVE walk(ino, path) AS (
        SELECT 1::bigint, ''::text COLLATE "C"
        UNION ALL
        SELECT d.ino, walk.path || '/' || d.name FROM walk, LATERAL (SELECT ino, name FROM ${S}.dentries WHERE vault = ${v} AND tree = ${t} AND parent = walk.ino OFFSET 0) d
      )
      SELECT walk.path, i.ino, i.mode, i.size, (SELECT target FROM ${S}.symlinks WHERE vault = ${v} AND tree = ${t} AND ino = i.ino) AS target, i.mtime_s, i.mtime_ns
      FROM walk, LATERAL (SELECT ino, mode, size, mtime_s, mtime_ns FROM ${S}.inodes WHERE vault = ${v} AND tree = ${t} AND ino = walk.ino OFFSET 0) i
      WHERE walk.ino != 1`);
    const out = new Map<string, Node>();
    for (const r of rows) out.set(r.path as string, { ...(r as unknown as Node), target: (r.target as string | null) ?? null });
    return out;
  }
  changedContent(a: TreeId, b: TreeId): Set<number> {
    const ex = (t: TreeId) => `SELECT ino, idx, hash FROM ${S}.extents WHERE vault = ${this.id} AND tree = ${lit(t)}`;
    const rows = this.rows(`SELECT ino FROM (${ex(a)} EXCEPT ${ex(b)}) x UNION SELECT ino FROM (${ex(b)} EXCEPT ${ex(a)}) y`);
    return new Set(rows.map((r) => r.ino as number));
  }
  contentDigests(tree: TreeId): Map<number, string> {
    const rows = this.rows(`SELECT ino, string_agg(upper(encode(hash, 'hex')), ',' ORDER BY idx) AS d FROM ${S}.extents WHERE vault = ${this.id} AND tree = ${lit(tree)} GROUP BY ino`);
    return new Map(rows.map((r) => [r.ino as number, r.d as string]));
  }
  referencedHashes(): Buffer[] {
    return this.rows(`SELECT DISTINCT hash FROM ${S}.extents WHERE vault = ${this.id}`).map((r) => buf(r.hash));
  }

  // ---- changing the live tree ----
  insertInode(ino: number, mode: number, uid: number, gid: number, nlink: number, size: number, s: number, ns: number): void {
    this.exec(`INSERT INTO ${S}.inodes (vault, tree, ${INODE_COLS}) VALUES (${this.id}, 0, ${[ino, mode, uid, gid, nlink, size, s, ns, s, ns, s, ns].map(lit).join(', ')})`);
  }
  deleteInode(ino: number): void {
    this.exec(sql`DELETE FROM avfs.inodes WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`);
  }
  setSize(ino: number, size: number, s: number, ns: number): void {
    this.exec(sql`UPDATE avfs.inodes SET size = ${size}, mtime_s = ${s}, mtime_ns = ${ns}, ctime_s = ${s}, ctime_ns = ${ns} WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`);
  }
  setNlink(ino: number, nlink: number, s: number, ns: number): void {
    this.exec(sql`UPDATE avfs.inodes SET nlink = ${nlink}, ctime_s = ${s}, ctime_ns = ${ns} WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`);
  }
  touchMC(ino: number, s: number, ns: number): void {
    this.exec(sql`UPDATE avfs.inodes SET mtime_s = ${s}, mtime_ns = ${ns}, ctime_s = ${s}, ctime_ns = ${ns} WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`);
  }
  touchC(ino: number, s: number, ns: number): void {
    this.exec(sql`UPDATE avfs.inodes SET ctime_s = ${s}, ctime_ns = ${ns} WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`);
  }
  setAttrs(ino: number, mode: number, uid: number, gid: number, as: number, ans: number, ms: number, mns: number, cs: number, cns: number): void {
    this.exec(
      sql`UPDATE avfs.inodes SET mode = ${mode}, uid = ${uid}, gid = ${gid}, atime_s = ${as}, atime_ns = ${ans}, mtime_s = ${ms}, mtime_ns = ${mns}, ctime_s = ${cs}, ctime_ns = ${cns} WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`,
    );
  }
  insertDentry(parent: number, name: string, ino: number): void {
    this.exec(sql`INSERT INTO avfs.dentries (vault, tree, parent, name, ino) VALUES (${this.id}, 0, ${parent}, ${name}, ${ino})`);
  }
  deleteDentry(parent: number, name: string): void {
    this.exec(sql`DELETE FROM avfs.dentries WHERE vault = ${this.id} AND tree = 0 AND parent = ${parent} AND name = ${name}`);
  }
  moveDentry(srcParent: number, srcName: string, dstParent: number, dstName: string): void {
    this.exec(sql`UPDATE avfs.dentries SET parent = ${dstParent}, name = ${dstName} WHERE vault = ${this.id} AND tree = 0 AND parent = ${srcParent} AND name = ${srcName}`);
  }
  insertSymlink(ino: number, target: string): void {
    this.exec(sql`INSERT INTO avfs.symlinks (vault, tree, ino, target) VALUES (${this.id}, 0, ${ino}, ${target})`);
  }
  deleteSymlink(ino: number): void {
    this.exec(sql`DELETE FROM avfs.symlinks WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`);
  }
  upsertExtent(ino: number, idx: number, hash: Buffer): void {
    this.exec(sql`INSERT INTO avfs.extents (vault, tree, ino, idx, hash) VALUES (${this.id}, 0, ${ino}, ${idx}, ${hash}) ON CONFLICT (vault, tree, ino, idx) DO UPDATE SET hash = EXCLUDED.hash`);
  }
  deleteExtents(ino: number): void {
    this.exec(sql`DELETE FROM avfs.extents WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino}`);
  }
  deleteExtentsFrom(ino: number, idx: number): void {
    this.exec(sql`DELETE FROM avfs.extents WHERE vault = ${this.id} AND tree = 0 AND ino = ${ino} AND idx >= ${idx}`);
  }
  copyExtents(src: number, dst: number): void {
    this.exec(sql`INSERT INTO avfs.extents (vault, tree, ino, idx, hash) SELECT vault, 0, ${dst}, idx, hash FROM avfs.extents WHERE vault = ${this.id} AND tree = 0 AND ino = ${src}`);
  }

  // ---- chunks ----
  chunkGet(hash: Buffer): Buffer | undefined {
    const r = this.rows(sql`SELECT data FROM avfs.chunks WHERE vault = ${this.id} AND hash = ${hash}`)[0];
    return r ? buf(r.data) : undefined;
  }
  chunkPut(hash: Buffer, data: Uint8Array): void {
    this.exec(sql`INSERT INTO avfs.chunks (vault, hash, data) VALUES (${this.id}, ${hash}, ${data}) ON CONFLICT DO NOTHING`);
  }
  chunkStats(): { count: number; bytes: number } {
    const r = this.rows(`SELECT COUNT(*) AS count, COALESCE(SUM(length(data)), 0) AS bytes FROM ${S}.chunks WHERE vault = ${this.id}`)[0]!;
    return { count: r.count as number, bytes: r.bytes as number };
  }
  /**
   * Deletes this vault's chunks that nothing keeps: not in `keep` (the caller's references, its
   * forks in this home), and not referenced by any fork of it on the server, whichever home made
   * that fork (the `parent_id` links, followed down). One statement, inside the gc's write: a
   * writer of this vault holds or waits for the same row lock, so no chunk goes that it is about
   * to reference.
   */
  chunkSweep(keep: Set<string>, dryRun: boolean): { total: number; dead: number; bytes: number } {
    const keepArr = `ARRAY[${[...keep].map((h) => `'${/^[0-9a-f]+$/i.test(h) ? h : ''}'`).join(',')}]::text[]`;
    const v = this.id;
    const dead = `FROM ${S}.chunks c WHERE c.vault = ${v} AND NOT (encode(c.hash, 'hex') = ANY (${keepArr}))
      AND c.hash NOT IN (SELECT e.hash FROM ${S}.extents e WHERE e.vault IN (
        WITH RECURSIVE d(id) AS (SELECT id FROM ${S}.vaults WHERE parent_id = ${v} UNION SELECT x.id FROM ${S}.vaults x JOIN d ON x.parent_id = d.id) SELECT id FROM d))`;
    const total = this.rows(`SELECT COUNT(*) AS n FROM ${S}.chunks WHERE vault = ${v}`)[0]!.n as number;
    const r = this.rows(`SELECT COUNT(*) AS n, COALESCE(SUM(length(c.data)), 0) AS bytes ${dead}`)[0]!;
    if (!dryRun && (r.n as number) > 0) this.exec(`DELETE ${dead}`);
    return { total, dead: r.n as number, bytes: r.bytes as number };
  }
  chunkEach(fn: (hash: Buffer, data: Buffer) => void): void {
    // In pages, so a vault of gigabytes never sits in memory at once.
    let after: Buffer | undefined;
    for (;;) {
      const page = this.rows(`SELECT hash, data FROM ${S}.chunks WHERE vault = ${this.id}${after ? ` AND hash > ${lit(after)}` : ''} ORDER BY hash LIMIT 256`);
      for (const r of page) fn(buf(r.hash), buf(r.data));
      if (page.length < 256) return;
      after = buf(page.at(-1)!.hash);
    }
  }

  // ---- copying between backends ----
  dumpTree(tree: TreeId): TreeDump {
    const where = `WHERE vault = ${this.id} AND tree = ${lit(tree)}`;
    return this.read(() => ({
      inodes: this.rows(`SELECT ${INODE_COLS} FROM ${S}.inodes ${where}`).map(toInode),
      dentries: this.rows(`SELECT parent, name, ino FROM ${S}.dentries ${where}`).map((r) => [r.parent as number, r.name as string, r.ino as number]),
      symlinks: this.rows(`SELECT ino, target FROM ${S}.symlinks ${where}`).map((r) => [r.ino as number, r.target as string]),
      extents: this.rows(`SELECT ino, idx, hash FROM ${S}.extents ${where}`).map((r) => [r.ino as number, r.idx as number, buf(r.hash)]),
    }));
  }
  loadTree(tree: TreeId, dump: TreeDump): void {
    const v = this.id;
    const t = lit(tree);
    const many = (table: string, cols: string, rows: unknown[][]) => {
      for (let i = 0; i < rows.length; i += 1000) {
        this.exec(`INSERT INTO ${S}.${table} (vault, tree, ${cols}) VALUES ${rows.slice(i, i + 1000).map((r) => `(${v}, ${t}, ${r.map(lit).join(', ')})`).join(', ')}`);
      }
    };
    many('inodes', INODE_COLS, dump.inodes.map((r) => [r.ino, r.mode, r.uid, r.gid, r.nlink, r.size, r.atime_s, r.atime_ns, r.mtime_s, r.mtime_ns, r.ctime_s, r.ctime_ns]));
    many('dentries', 'parent, name, ino', dump.dentries);
    many('symlinks', 'ino, target', dump.symlinks);
    many('extents', 'ino, idx, hash', dump.extents);
  }
  loadJournal(rows: JournalRow[]): void {
    this.write(() => {
      for (const r of rows) {
        this.exec(sql`INSERT INTO avfs.journal (vault, seq, ts_ms, op, path, path2, size, surface, details) VALUES (${this.id}, ${r.seq}, ${r.ts_ms}, ${r.op}, ${r.path}, ${r.path2}, ${r.size}, ${r.surface}, ${r.details})`);
      }
      const row = this.held();
      row.next_seq = Math.max(row.next_seq, ...rows.map((r) => r.seq + 1));
    });
  }

  // ---- journal ----
  appendJournal(ts: number, op: string, path: string | null, path2: string | null, size: number | null, surface: string, details: string | null): number {
    return this.inWrite(() => {
      const seq = this.held().next_seq++;
      this.exec(sql`INSERT INTO avfs.journal (vault, seq, ts_ms, op, path, path2, size, surface, details) VALUES (${this.id}, ${seq}, ${ts}, ${op}, ${path}, ${path2}, ${size}, ${surface}, ${details})`);
      return seq;
    });
  }
  trimJournal(keep: number): void {
    this.exec(sql`DELETE FROM avfs.journal WHERE vault = ${this.id} AND seq <= (SELECT MAX(seq) FROM avfs.journal WHERE vault = ${this.id}) - ${keep}`);
  }
  journalMaxSeq(): number {
    return this.rows(`SELECT COALESCE(MAX(seq), 0) AS s FROM ${S}.journal WHERE vault = ${this.id}`)[0]!.s as number;
  }
  journalFirstAfter(seq: number): number | null {
    return (this.rows(sql`SELECT MIN(seq) AS s FROM avfs.journal WHERE vault = ${this.id} AND seq > ${seq}`)[0]!.s as number | null) ?? null;
  }
  journalAfter(seq: number, limit?: number): JournalRow[] {
    const lim = limit !== undefined && limit >= 0 ? ` LIMIT ${lit(limit)}` : '';
    return this.rows(sql`SELECT seq, ts_ms, op, path, path2, size, surface, details FROM avfs.journal WHERE vault = ${this.id} AND seq > ${seq} ORDER BY seq` + lim).map(toJournal);
  }
  journalRecent(sinceMs: number, limit: number): { rows: JournalRow[]; total: number } {
    return this.read(() => {
      const lim = Number.isSafeInteger(limit) ? ` LIMIT ${lit(limit)}` : '';
      const rows = this.rows(sql`SELECT seq, ts_ms, op, path, path2, size, surface, details FROM avfs.journal WHERE vault = ${this.id} AND ts_ms >= ${sinceMs} ORDER BY seq DESC` + lim).map(toJournal);
      const total = this.rows(sql`SELECT COUNT(*) AS n FROM avfs.journal WHERE vault = ${this.id} AND ts_ms >= ${sinceMs}`)[0]!.n as number;
      return { rows, total };
    });
  }
  journalCount(): number {
    return this.rows(`SELECT COUNT(*) AS n FROM ${S}.journal WHERE vault = ${this.id}`)[0]!.n as number;
  }
  journalMentions(ops: readonly string[], id: string): boolean {
    if (ops.length === 0) return false;
    const rows = this.rows(`SELECT details FROM ${S}.journal WHERE vault = ${this.id} AND op IN (${ops.map(lit).join(', ')}) AND strpos(details, ${lit(id)}) > 0`);
    return rows.some((r) => {
      try {
        return (JSON.parse(r.details as string) as { id?: unknown }).id === id;
      } catch {
        return false;
      }
    });
  }

  // ---- checkpoints ----
  checkpointRows(): CheckpointRow[] {
    return this.rows(`SELECT * FROM ${S}.checkpoints WHERE vault = ${this.id} ORDER BY id`).map(toCheckpoint);
  }
  checkpointByName(name: string): CheckpointRow | undefined {
    const r = this.rows(sql`SELECT * FROM avfs.checkpoints WHERE vault = ${this.id} AND name = ${name}`)[0];
    return r ? toCheckpoint(r) : undefined;
  }
  nextCheckpointId(): number {
    return this.txn === 'write' ? this.held().next_cp : (this.rows(`SELECT next_cp FROM ${S}.vaults WHERE id = ${this.id}`)[0]!.next_cp as number);
  }
  insertCheckpoint(r: CheckpointRow): void {
    this.write(() => {
      if (this.checkpointByName(r.name)) throw new AvfsError('AlreadyExists', `a checkpoint named ${r.name} already exists`, { checkpoint: r.name });
      this.exec(
        sql`INSERT INTO avfs.checkpoints (vault, id, name, created_ms, description, auto, file_count, total_bytes, journal_seq) VALUES (${this.id}, ${r.id}, ${r.name}, ${r.created_ms}, ${r.description}, ${r.auto}, ${r.file_count}, ${r.total_bytes}, ${r.journal_seq})`,
      );
      const row = this.held();
      if (r.id >= row.next_cp) row.next_cp = r.id + 1;
    });
  }
  setCheckpointCounts(id: number, files: number, bytes: number): void {
    this.exec(sql`UPDATE avfs.checkpoints SET file_count = ${files}, total_bytes = ${bytes} WHERE vault = ${this.id} AND id = ${id}`);
  }
  setCheckpointJournalSeq(id: number, seq: number): void {
    this.exec(sql`UPDATE avfs.checkpoints SET journal_seq = ${seq} WHERE vault = ${this.id} AND id = ${id}`);
  }

  /** What checkpoints hold alone, computed on the server from the extents when asked (one query). */
  readonly refs: CheckpointRefCounts = {
    available: () => true,
    current: () => true,
    sync: () => {},
    uncount: () => {},
    alone: (extra) => {
      const out = new Map<number, number>();
      for (const r of this.owners(extra)) {
        const ids = r.ids as number[];
        if (ids.length === 1) out.set(ids[0]!, (out.get(ids[0]!) ?? 0) + (r.bytes as number));
      }
      return out;
    },
    together: (ids, extra) => {
      const set = new Set(ids);
      let bytes = 0;
      for (const r of this.owners(extra)) if ((r.ids as number[]).every((id) => set.has(id))) bytes += r.bytes as number;
      return bytes;
    },
  };

  /** For each chunk only checkpoints reference (not the live tree, not `extra`): which ones, and its size. */
  private owners(extra?: () => Iterable<Buffer>): Array<Record<string, unknown>> {
    const ex = extra ? [...extra()].map((h) => `'${h.toString('hex')}'`) : [];
    const v = this.id;
    return this.rows(`
      SELECT array_agg(DISTINCT e.tree)::int[] AS ids, COALESCE(MAX(length(c.data)), 0) AS bytes
      FROM ${S}.extents e LEFT JOIN ${S}.chunks c ON c.vault = ${v} AND c.hash = e.hash
      WHERE e.vault = ${v} AND e.tree != 0
        AND NOT EXISTS (SELECT 1 FROM ${S}.extents l WHERE l.vault = ${v} AND l.tree = 0 AND l.hash = e.hash)
        ${ex.length ? `AND NOT (encode(e.hash, 'hex') = ANY (ARRAY[${ex.join(',')}]::text[]))` : ''}
      GROUP BY e.hash`);
  }

  deleteCheckpointRow(id: number): void {
    this.exec(sql`DELETE FROM avfs.checkpoints WHERE vault = ${this.id} AND id = ${id}`);
  }
  /** Copies every row of `from` into tree `to` (optionally from another vault, with a filter). */
  private copyRows(table: (typeof TREE_TABLES)[number], from: TreeId, to: TreeId, fromVault = this.id, filter = ''): string {
    const cols = TREE_COLS[table];
    return `INSERT INTO ${S}.${table} (vault, tree, ${cols}) SELECT ${this.id}, ${lit(to)}, ${cols} FROM ${S}.${table} WHERE vault = ${fromVault} AND tree = ${lit(from)}${filter}`;
  }
  snapshotLive(id: TreeId): boolean {
    // Files unlinked but still open on a mount (nlink 0) are not part of the tree.
    const whole = (this.rows(`SELECT COUNT(*) AS n FROM ${S}.inodes WHERE vault = ${this.id} AND tree = 0 AND nlink = 0`)[0]!.n as number) === 0;
    this.exec(this.copyRows('inodes', LIVE, id, this.id, ' AND nlink > 0'));
    this.exec(this.copyRows('dentries', LIVE, id));
    this.exec(this.copyRows('symlinks', LIVE, id));
    this.exec(this.copyRows('extents', LIVE, id, this.id, whole ? '' : ` AND ino IN (SELECT ino FROM ${S}.inodes WHERE vault = ${this.id} AND tree = 0 AND nlink > 0)`));
    return whole;
  }
  copyTree(from: TreeId, to: TreeId): void {
    for (const t of TREE_TABLES) this.exec(this.copyRows(t, from, to));
  }
  restoreTree(id: TreeId): void {
    for (const t of TREE_TABLES) this.exec(`DELETE FROM ${S}.${t} WHERE vault = ${this.id} AND tree = 0`);
    for (const t of TREE_TABLES) this.exec(this.copyRows(t, id, LIVE));
  }
  dropTree(id: TreeId): void {
    for (const t of TREE_TABLES) this.exec(`DELETE FROM ${S}.${t} WHERE vault = ${this.id} AND tree = ${lit(id)}`);
  }
  treeCounts(id: TreeId): { files: number; bytes: number } {
    const r = this.rows(
      `SELECT COUNT(*) - 1 AS files, COALESCE(SUM(CASE WHEN (mode & 61440) = 32768 THEN size ELSE 0 END), 0) AS bytes FROM ${S}.inodes WHERE vault = ${this.id} AND tree = ${lit(id)}`,
    )[0]!;
    return { files: r.files as number, bytes: r.bytes as number };
  }
  cpLinks(tree: TreeId, ino: number): number {
    return this.rows(sql`SELECT COUNT(*) AS n FROM avfs.dentries WHERE vault = ${this.id} AND tree = ${tree} AND ino = ${ino}`)[0]!.n as number;
  }
  cpDeleteDentry(tree: TreeId, parent: number, name: string): void {
    this.exec(sql`DELETE FROM avfs.dentries WHERE vault = ${this.id} AND tree = ${tree} AND parent = ${parent} AND name = ${name}`);
  }
  cpInsertDentry(tree: TreeId, parent: number, name: string, ino: number): void {
    this.exec(sql`INSERT INTO avfs.dentries (vault, tree, parent, name, ino) VALUES (${this.id}, ${tree}, ${parent}, ${name}, ${ino})`);
  }
  cpDropInode(tree: TreeId, ino: number): void {
    for (const t of ['inodes', 'symlinks', 'extents']) this.exec(`DELETE FROM ${S}.${t} WHERE vault = ${this.id} AND tree = ${lit(tree)} AND ino = ${lit(ino)}`);
  }
  cpCopyInode(tree: TreeId, from: TreeId, ino: number): void {
    this.cpDropInode(tree, ino);
    for (const t of ['inodes', 'symlinks', 'extents'] as const) this.exec(this.copyRows(t, from, tree, this.id, ` AND ino = ${lit(ino)}`));
  }
  cpSetDirAttrs(tree: TreeId, ino: number, from: TreeId, fromIno: number): void {
    this.exec(
      sql`UPDATE avfs.inodes t SET mode = f.mode, uid = f.uid, gid = f.gid, mtime_s = f.mtime_s, mtime_ns = f.mtime_ns FROM avfs.inodes f
          WHERE f.vault = ${this.id} AND f.tree = ${from} AND f.ino = ${fromIno} AND t.vault = ${this.id} AND t.tree = ${tree} AND t.ino = ${ino}`,
    );
  }

  /** Deletes every row of this vault, inside its write (removeVault). */
  removeFromServer(fn: () => void): void {
    this.write(() => {
      const v = this.id;
      const me = this.rows(`SELECT parent_id FROM ${S}.vaults WHERE id = ${v}`)[0]!;
      const forks = this.rows(sql`SELECT f.name FROM avfs.vaults f JOIN avfs.meta m ON m.vault = f.id AND m.key = 'parent' WHERE f.parent_id = ${v} AND m.value = ${this.link.vault}`);
      if (forks.length > 0) {
        const names = forks.map((r) => r.name as string);
        throw new AvfsError('VaultInUse', `vault ${this.link.vault} has forks on its server that read its chunks: ${names.join(', ')} (delete them, or flatten from a home that has them)`, { vault: this.link.vault, forks: names });
      }
      this.exec(`UPDATE ${S}.vaults SET parent_id = ${lit(me.parent_id)} WHERE parent_id = ${v}`);
      for (const t of [...TREE_TABLES, 'meta', 'checkpoints', 'journal', 'chunks']) this.exec(`DELETE FROM ${S}.${t} WHERE vault = ${v}`);
      this.exec(`DELETE FROM ${S}.vaults WHERE id = ${v}`);
      this.dirty = false;
      this.row = undefined;
      fn();
    });
  }

  // ---- forks ----
  /**
   * A fork on the same server: rows copied server-side inside this write, which also locks the
   * source's row, so the source's gc (which takes that lock) cannot run between the copy and the
   * commit; `parent_id` links the two for every home's gc.
   */
  forkFrom(sourceFile: string, forkName: string, record: () => void): void {
    const src = readPgLink(sourceFile);
    if (src.url !== this.link.url) {
      throw new AvfsError('NotSupported', `a fork of a PostgreSQL vault is made on its server (${redactUrl(src.url)})`, { vault: forkName });
    }
    this.write(() => {
      const s = this.rows(sql`SELECT id, has_counters, live_bytes, live_inodes, next_ino FROM avfs.vaults WHERE name = ${src.vault} FOR UPDATE`)[0];
      if (!s) throw new AvfsError('VaultNotFound', `vault ${src.vault} is not on ${redactUrl(src.url)}`, { vault: src.vault });
      const sid = s.id as number;
      this.exec(sql`INSERT INTO avfs.meta (vault, key, value) VALUES (${sid}, ${FORK_KEY_PREFIX + forkName}, ${new Date().toISOString()}) ON CONFLICT (vault, key) DO UPDATE SET value = EXCLUDED.value`);
      this.exec(`UPDATE ${S}.vaults SET parent_id = ${sid} WHERE id = ${this.id}`);
      for (const t of TREE_TABLES) {
        this.exec(`DELETE FROM ${S}.${t} WHERE vault = ${this.id} AND tree = 0`);
        this.exec(this.copyRows(t, LIVE, LIVE, sid));
      }
      Object.assign(this.held(), { has_counters: s.has_counters, live_bytes: s.live_bytes, live_inodes: s.live_inodes, next_ino: s.next_ino });
      this.exec(
        `INSERT INTO ${S}.meta (vault, key, value) SELECT ${this.id}, key, value FROM ${S}.meta WHERE vault = ${sid} AND (key LIKE 'quota.%' OR key LIKE 'policy.%' OR (key LIKE 'base.%' AND key != 'base.journal_seq'))
         ON CONFLICT (vault, key) DO UPDATE SET value = EXCLUDED.value`,
      );
      // A vault made from a project names a base checkpoint: the fork gets a copy of it.
      const cps = this.rows(`SELECT c.* FROM ${S}.checkpoints c WHERE c.vault = ${sid} AND c.name IN (SELECT value FROM ${S}.meta WHERE vault = ${sid} AND key IN ('base.checkpoint', 'base.git_checkpoint'))`);
      for (const c of cps) {
        const cp = toCheckpoint(c);
        if (this.checkpointByName(cp.name)) continue;
        this.insertCheckpoint(cp);
        for (const t of TREE_TABLES) this.exec(this.copyRows(t, cp.id, cp.id, sid));
      }
      this.exec(`UPDATE ${S}.vaults SET version = version + 1 WHERE id = ${sid}`);
      this.exec(`SELECT pg_notify('${PG_CHANNEL}', '${sid}')`);
      record();
    });
  }
}

/**
 * Deletes a vault from its server (every row, in one transaction holding its lock), then runs
 * `fn` (the removal of this home's link file). Other homes attached to it then find it gone
 * (`VaultNotFound`). Refused while a fork of it on the server still reads its chunks (one made
 * from another home, not flattened).
 */
export function removeVault(file: string, fn: () => void): void {
  let store: PgMeta;
  try {
    store = new PgMeta(file);
  } catch (e) {
    // Gone from the server already (deleted from another home): only the link is left to remove.
    if (e instanceof AvfsError && e.kind === 'VaultNotFound') return fn();
    throw e;
  }
  try {
    store.removeFromServer(fn);
  } finally {
    store.close();
  }
}
