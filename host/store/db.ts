/**
 * Opening a vault file: pragmas, schema migrations, and the one way to run a mutation
 * (`BEGIN IMMEDIATE … COMMIT`, with a busy timeout so several processes can share a vault).
 */
import Database from 'better-sqlite3';
import { AvfsError } from '../protocol/errors';
import { MIGRATIONS } from './schema';

export type Db = Database.Database;

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
  readonly?: boolean;
  /** How long a writer waits for another process's transaction, in ms. */
  busyTimeoutMs?: number;
}

export function openDb(file: string, opts: OpenOptions = {}): Db {
  let db: Db;
  try {
    db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: true });
  } catch (e) {
    throw new AvfsError('StorageError', `cannot open vault file ${file}: ${(e as Error).message}`, { file });
  }
  try {
    db.pragma(`busy_timeout = ${opts.busyTimeoutMs ?? 10_000}`);
    if (!opts.readonly) {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
    }
    db.pragma('foreign_keys = OFF');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > MIGRATIONS.length) {
      throw new AvfsError(
        'StorageError',
        `vault file ${file} has schema version ${version}, newer than this avfs understands (${MIGRATIONS.length}); upgrade avfs`,
        { file, schemaVersion: version },
      );
    }
    if (version < MIGRATIONS.length) {
      if (opts.readonly) {
        throw new AvfsError('StorageError', `vault file ${file} needs a schema migration; open it writable once`, { file });
      }
      migrate(db);
    }
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
}

/** Creates a new vault file with the current schema. Fails if the file exists. */
export function createDbFile(file: string): Db {
  let db: Db;
  try {
    db = new Database(file, { fileMustExist: false });
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

/** Runs `fn` in one `BEGIN IMMEDIATE … COMMIT`; nested calls join the outer transaction. */
export function writeTxn<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  return runner(db).immediate(fn) as T;
}

/** Runs `fn` in one read transaction, so it sees a single consistent snapshot. */
export function readTxn<T>(db: Db, fn: () => T): T {
  if (db.inTransaction) return fn();
  return runner(db).deferred(fn) as T;
}
