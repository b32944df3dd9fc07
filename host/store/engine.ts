/**
 * Which backend a vault file is, and opening it through that backend. A vault file says what it
 * is by its first bytes (SQLite's header, LMDB's meta page), so a vault needs no registry: the
 * same `<home>/vaults/<name>.avfs` path holds either.
 */
import { closeSync, constants as fsConstants, openSync, readSync } from 'node:fs';
import type { BackendKind, MetaStore } from './backend';
import { createDbFile, openDb, type OpenOptions, underWriteLock } from './db';
import { LMDB_MAGIC, LmdbMeta } from './lmdb';
import { SqliteMeta } from './sqlite';

/** The backend a vault file was made with, from its first bytes; undefined when it is neither (or unreadable). */
export function backendOfFile(file: string): BackendKind | undefined {
  let fd: number;
  try {
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const head = Buffer.alloc(28);
    const n = readSync(fd, head, 0, 28, 0);
    if (n >= 16 && head.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') return 'sqlite';
    if (n >= 28 && head.readUInt32LE(24) === LMDB_MAGIC) return 'lmdb';
    return undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Opens an existing vault file with the backend it was made with. */
export function openMeta(file: string, opts: OpenOptions = {}): MetaStore {
  if (backendOfFile(file) === 'lmdb') return new LmdbMeta(file, { readonly: opts.readonly });
  return new SqliteMeta(openDb(file, opts));
}

/** Creates a new vault file on `backend` (the file exists, empty, claimed by the caller). */
export function createMeta(file: string, backend: BackendKind = 'sqlite'): MetaStore {
  if (backend === 'lmdb') return new LmdbMeta(file, { create: true });
  return new SqliteMeta(createDbFile(file));
}

/**
 * Runs `fn` (the removal of a vault's files) holding the vault's write lock when the file opens
 * as a vault, so a write in progress commits first and the next one finds the vault gone.
 */
export function withWriteLock(file: string, fn: () => void): void {
  if (backendOfFile(file) !== 'lmdb') return underWriteLock(file, fn);
  let store: LmdbMeta | undefined;
  try {
    store = new LmdbMeta(file);
  } catch {
    store = undefined; // not a vault this avfs can write: nothing writes it either
  }
  if (!store) return fn();
  try {
    store.write(fn);
  } finally {
    store.close();
  }
}

/** The `meta` rows whose key starts with one of `prefixes` or equals one of `keys`, read-only, any schema. */
export function inspectMeta(file: string, keys: string[], prefixes: string[]): Array<{ key: string; value: string }> {
  const store = openMeta(file, { readonly: true, olderSchemaOk: true });
  try {
    const out = keys.flatMap((key) => {
      const value = store.getMeta(key);
      return value === undefined ? [] : [{ key, value }];
    });
    for (const p of prefixes) out.push(...store.metaWithPrefix(p));
    return out;
  } finally {
    store.close();
  }
}
