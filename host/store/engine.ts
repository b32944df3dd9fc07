/**
 * Which backend a vault file is, and opening it through that backend. A vault file says what it
 * is by its first bytes (SQLite's header, LMDB's meta page), so a vault needs no registry: the
 * same `<home>/vaults/<name>.avfs` path holds either.
 */
import { AvfsError } from '../protocol/errors';
import type { BackendKind, MetaStore } from './backend';
import { createDbFile, openDb, type OpenOptions } from './db';
import { SqliteMeta } from './sqlite';

/** Opens an existing vault file with the backend it was made with. */
export function openMeta(file: string, opts: OpenOptions = {}): MetaStore {
  return new SqliteMeta(openDb(file, opts));
}

/** Creates a new vault file on `backend` (the file exists, empty, claimed by the caller). */
export function createMeta(file: string, backend: BackendKind = 'sqlite'): MetaStore {
  if (backend !== 'sqlite') throw new AvfsError('InvalidInput', `unknown storage backend ${JSON.stringify(backend)}`, { backend });
  return new SqliteMeta(createDbFile(file));
}
