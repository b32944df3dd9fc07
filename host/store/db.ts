/**
 * Opening a vault file: pragmas, schema migrations, and the one way to run a mutation
 * (`BEGIN IMMEDIATE … COMMIT`, with a busy timeout so several processes can share a vault).
 */
import type Database from 'better-sqlite3';
import {
  accessSync,
  closeSync,
  constants as fsConstants,
  copyFileSync,
  existsSync,
  fstatSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readlinkSync,
  readSync,
  rmSync,
  statSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { fileIdOf, replacedSince, type FileId } from './fileId';
import { MIGRATIONS } from './schema';

export type Db = Database.Database;

let driver: { Database: typeof Database; binary: string | undefined } | undefined;

/**
 * A connection to `file` through better-sqlite3, which is loaded by the first open: a call that
 * opens no vault (a policy check with no current vault, a call handed to the host) does not load
 * it. Its JavaScript is bundled with avfs (scripts/build.mjs), so V8's code cache covers it. Its
 * binary is found here, in its package's build folder, and given to each open: the driver's own
 * search (the `bindings` helper) starts beside the calling file, which in a bundle is not its
 * package, and costs ~1 ms more.
 */
function newDatabase(file: string, options: Database.Options): Db {
  if (!driver) {
    /* eslint-disable @typescript-eslint/no-require-imports -- loaded on first use (above) */
    const Driver = require('better-sqlite3') as typeof Database;
    const binary = join(dirname(require.resolve('better-sqlite3/package.json')), 'build', 'Release', 'better_sqlite3.node');
    /* eslint-enable @typescript-eslint/no-require-imports */
    driver = { Database: Driver, binary: existsSync(binary) ? binary : undefined };
  }
  return new driver.Database(file, driver.binary ? { ...options, nativeBinding: driver.binary } : options);
}

/** A short-lived writable connection to a vault file, for a small write beside another connection (closed by the caller). */
export function sideConnection(file: string): Db {
  const db = newDatabase(file, { fileMustExist: true, timeout: 1000 });
  return db;
}

/**
 * SQLite copies the WAL back into the database (and syncs both) inside the commit that passes
 * this many pages. The default, 1,000 pages, puts that copy into every ~85th small write and
 * every 4 MiB of bulk data; 4,096 pages of 8 KiB (32 MiB) moves it out of most commits, and the
 * last connection to close a vault checkpoints what is left. Long-lived processes also move the
 * checkpoints to a background thread (checkpointer.ts).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 4_096;

/** Page size of new vault files (existing files keep theirs). */
export const PAGE_SIZE = 8_192;

export interface OpenOptions {
  /** Open with a read-only SQLite connection: nothing is written, migrated or initialised. */
  readonly?: boolean;
  /**
   * With `readonly`: accept a file with an older schema (for reads of tables that every version
   * has: meta, counters, inodes, chunks, extents). Without it, an older file must be upgraded first.
   */
  olderSchemaOk?: boolean;
  /** How long a writer waits for another process's transaction, in ms. */
  busyTimeoutMs?: number;
}

/**
 * What is wrong with a file that should be a vault. `empty` and `not-sqlite` files hold no tree at
 * all (so they reference no chunk of any vault); the others may still hold one.
 */
export interface FileProblem {
  kind: 'empty' | 'not-sqlite' | 'truncated' | 'unopenable';
  reason: string;
}

const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Why `file` cannot be a vault, judged from its size and its 100-byte SQLite header alone (no
 * SQLite involved, nothing written), or undefined if it may be one. A file shorter than the page
 * count its header records is truncated; that is only judged when no WAL holds newer pages.
 */
export function vaultFileProblem(file: string): FileProblem | undefined {
  const other = notRegularFile(file);
  if (other !== undefined) return { kind: 'not-sqlite', reason: `it is ${other}, not a vault file` };
  let fd: number;
  try {
    // Non-blocking: a FIFO put in the file's place after the check above must not hang the reader.
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // A symlink to a file that is missing (on a disk not mounted now?) may hold a tree once it is back.
    if (code === 'ENOENT' && lstatSync(file, { throwIfNoEntry: false })?.isSymbolicLink()) {
      return { kind: 'unopenable', reason: `it is a symlink to ${readlinkSync(file)}, which is missing` };
    }
    return { kind: 'unopenable', reason: `the file cannot be opened: ${code ?? (e as Error).message}` };
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return { kind: 'empty', reason: 'the file is empty (not an avfs vault)' };
    const head = Buffer.alloc(100);
    const n = readSync(fd, head, 0, 100, 0);
    // An LMDB vault (its meta page's magic number): its backend checks it when it opens.
    if (n >= 28 && head.readUInt32LE(24) === 0xbeefc0de) return undefined;
    // A PostgreSQL vault's link file (host/store/pgLink.ts): its backend checks it when it opens.
    if (head.subarray(0, n).toString('latin1').startsWith('avfs-postgres-vault ')) return undefined;
    if (n < 100 || !head.subarray(0, 16).equals(SQLITE_MAGIC)) return { kind: 'not-sqlite', reason: 'not a SQLite database (not an avfs vault)' };
    const rawPageSize = head.readUInt16BE(16);
    const pageSize = rawPageSize === 1 ? 65_536 : rawPageSize;
    const pages = head.readUInt32BE(28);
    const headerSizeValid = head.readUInt32BE(24) === head.readUInt32BE(92);
    if (headerSizeValid && pages > 0 && size < pages * pageSize && !walHasFrames(file)) {
      return { kind: 'truncated', reason: `truncated: the file holds ${size} of the ${pages * pageSize} bytes its header records` };
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/**
 * What `file` is when it is there but not a regular file (a directory, a FIFO, a socket, a
 * device, through symlinks), else undefined. Such an entry holds no tree, and reading a FIFO's
 * "header" would wait for a writer forever.
 */
export function notRegularFile(file: string): string | undefined {
  const st = statSync(file, { throwIfNoEntry: false });
  if (!st || st.isFile()) return undefined;
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  return 'a device';
}

function walHasFrames(file: string): boolean {
  try {
    return statSync(file + '-wal').size > 32;
  } catch {
    return false;
  }
}

/** Why this user cannot write the vault file (the file, or the directory its WAL lives in), or undefined. */
export function readOnlyOnDisk(file: string): string | undefined {
  if (!canAccess(file, fsConstants.W_OK)) return `${file} is read-only on disk`;
  const dir = dirname(file);
  if (!canAccess(dir, fsConstants.W_OK) && !(canAccess(file + '-wal', fsConstants.W_OK) && canAccess(file + '-shm', fsConstants.W_OK))) {
    return `the directory ${dir} is read-only on disk, so the vault's write-ahead log cannot be created`;
  }
  return undefined;
}

function canAccess(path: string, mode: number): boolean {
  try {
    accessSync(path, mode);
    return true;
  } catch {
    return false;
  }
}

function storageError(file: string, reason: string, details: Record<string, unknown> = {}): AvfsError {
  return new AvfsError('StorageError', `vault file ${file} cannot be used: ${reason}`, { file, reason, ...details });
}

/**
 * Opens an existing vault file. A writable open applies missing migrations; a read-only one
 * never writes (no pragma that persists, no migration), so a read can never turn a stray or
 * damaged file into something else. A file that is not a vault is never initialised.
 */
export function openDb(file: string, opts: OpenOptions = {}): Db {
  const problem = vaultFileProblem(file);
  if (problem !== undefined) throw storageError(file, problem.reason);
  const db = connect(file, !!opts.readonly);
  try {
    remember(db);
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
    if (!opts.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    }
    db.pragma('foreign_keys = OFF');
    const version = schemaVersion(db);
    if (version === 0) throw storageError(file, 'it holds no avfs schema (not an avfs vault)');
    if (version > MIGRATIONS.length) {
      throw storageError(file, `its schema version ${version} is newer than this avfs understands (${MIGRATIONS.length}); upgrade avfs`, {
        schemaVersion: version,
      });
    }
    if (version < MIGRATIONS.length) {
      if (opts.readonly && !opts.olderSchemaOk) {
        throw storageError(
          file,
          `it was written by an older avfs (schema ${version} of ${MIGRATIONS.length}); read-only commands do not upgrade it: run 'avfs vault upgrade NAME' (any writing command also does)`,
          { schemaVersion: version, needsUpgrade: true },
        );
      }
      if (!opts.readonly) migrate(db);
    }
    return db;
  } catch (e) {
    db.close();
    throw e instanceof AvfsError ? e : storageError(file, (e as Error).message, { code: (e as { code?: unknown }).code });
  }
}

/**
 * A table of statements, each prepared the first time it is used. Preparing one costs SQLite a
 * compile (~25 µs); a vault opened for one CLI call uses a few of the ~30 the store defines, and a
 * long-lived process prepares each once all the same.
 */
export function preparedOnUse<T extends Record<string, () => unknown>>(defs: T): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const table = {} as { [K in keyof T]: ReturnType<T[K]> };
  for (const key of Object.keys(defs) as (keyof T & string)[]) {
    Object.defineProperty(table, key, {
      configurable: true,
      enumerable: true,
      get() {
        const statement = defs[key]!() as ReturnType<T[typeof key]>;
        Object.defineProperty(table, key, { value: statement, enumerable: true });
        return statement;
      },
    });
  }
  return table;
}

/** The file's `PRAGMA user_version` (its number of applied migrations). */
export function schemaVersion(db: Db): number {
  return db.pragma('user_version', { simple: true }) as number;
}

/**
 * A read-only connection to any SQLite file, with no schema check: for looking inside files that
 * may not be (current) vaults. The caller closes it.
 */
export function inspectDb(file: string): Db {
  const db = connect(file, true);
  db.pragma('busy_timeout = 10000');
  return db;
}

/** The tables a SQLite file holds. */
export function tableNames(db: Db): Set<string> {
  return new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
}

function connect(file: string, readonly: boolean): Db {
  let db: Db | undefined;
  try {
    db = newDatabase(file, { readonly, fileMustExist: true });
    db.pragma('schema_version'); // the first read is where SQLite finds out it cannot use the file
    return db;
  } catch (e) {
    db?.close();
    const code = (e as { code?: unknown }).code;
    // A WAL-mode file needs its -shm beside it, even to read. In a directory this user cannot
    // write, with no -wal left there (the last writer removed it on a clean close, so the file
    // holds everything), read a private copy instead.
    if (readonly && (code === 'SQLITE_READONLY_DIRECTORY' || code === 'SQLITE_CANTOPEN') && !existsSync(file + '-wal')) {
      return connectToCopy(file);
    }
    throw storageError(file, (e as Error).message, { code });
  }
}

function connectToCopy(file: string): Db {
  const dir = mkdtempSync(join(tmpdir(), 'avfs-ro-'));
  const copy = join(dir, basename(file));
  try {
    copyFileSync(file, copy, fsConstants.COPYFILE_FICLONE);
    const db = newDatabase(copy, { readonly: true, fileMustExist: true });
    const close = db.close.bind(db);
    // The copy lives as long as the connection.
    db.close = () => {
      close();
      rmSync(dir, { recursive: true, force: true });
      return db;
    };
    return db;
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw storageError(file, `cannot be read from its read-only directory: ${(e as Error).message}`);
  }
}

/** Creates a new vault file with the current schema. Fails if the file exists. */
export function createDbFile(file: string): Db {
  let db: Db;
  try {
    db = newDatabase(file, { fileMustExist: false });
  } catch (e) {
    throw new AvfsError('StorageError', `cannot create vault file ${file}: ${(e as Error).message}`, { file });
  }
  // Before any table exists: lets `gc` hand freed pages back to the file system; and 8 KiB pages:
  // measured side by side, 4 KiB pages make bulk writes slow (a 64 KiB chunk is 16 WAL frames)
  // and 16 KiB pages make small writes slow (every commit logs whole pages).
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 10000');
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const run = db.transaction(() => {
    // Re-read inside the write lock: another process may have migrated meanwhile.
    const current = db.pragma('user_version', { simple: true }) as number;
    for (let v = current; v < MIGRATIONS.length; v++) {
      db.exec(MIGRATIONS[v]!);
      db.pragma(`user_version = ${v + 1}`);
    }
  });
  run.immediate();
}

type Runner = Database.Transaction<(fn: () => unknown) => unknown>;
// One transaction wrapper per connection: building one per call costs more than a whole stat.
const runners = new WeakMap<Db, Runner>();
function runner(db: Db): Runner {
  let r = runners.get(db);
  if (!r) {
    r = db.transaction((fn: () => unknown) => fn());
    runners.set(db, r);
  }
  return r;
}

/** The file (device, inode) each vault connection opened. */
const openedFiles = new WeakMap<Db, FileId>();

/** Taken from the connection's own file: a private copy (read-only directory) is the file it checks. */
function remember(db: Db): void {
  openedFiles.set(db, fileIdOf(db.name));
}

/**
 * Whether the vault file this connection opened is no longer at its path: the vault was deleted
 * (and maybe re-created, which is another file) after the connection was opened. Closing such a
 * connection would remove the write-ahead log by its name, which may now be the new vault's.
 */
export function fileReplaced(db: Db): boolean {
  const id = openedFiles.get(db);
  return id !== undefined && replacedSince(db.name, id);
}

/**
 * Runs `fn` in one `BEGIN IMMEDIATE … COMMIT`; nested calls join the outer transaction. Under the
 * write lock the file is checked to be the vault still: a vault deleted while a command ran (a
 * write from a slow standard input) gets no write that would vanish with the file and be reported
 * as done.
 */
export function writeTxn<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  if (db.readonly) throw new AvfsError('ReadOnly', `read-only: the vault file ${db.name} is open read-only`, { file: db.name });
  return runner(db).immediate(() => {
    if (fileReplaced(db)) {
      const vault = basename(db.name).replace(/\.avfs$/, '');
      throw new AvfsError('VaultNotFound', `vault ${vault} was deleted while this command ran: nothing was written`, { vault });
    }
    return fn();
  }) as T;
}

/**
 * Runs `fn` (the removal of a vault's files) holding the vault's write lock when the file opens
 * as a vault, so a write in progress commits first and the next one finds the vault gone
 * (writeTxn) instead of committing into a deleted file.
 */
export function underWriteLock(file: string, fn: () => void): void {
  let db: Db | undefined;
  try {
    db = openDb(file);
    db.exec('BEGIN IMMEDIATE');
  } catch {
    db?.close(); // not a vault this avfs can write (unreadable, newer, read-only on disk): nothing writes it either
    db = undefined;
  }
  try {
    fn();
  } finally {
    db?.close();
  }
}

/** Runs `fn` in one read transaction, so it sees a single consistent snapshot. */
export function readTxn<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  return runner(db).deferred(fn) as T;
}
