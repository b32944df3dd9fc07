/**
 * Which backend a vault file is, and opening it through that backend. A vault file says what it
 * is by its first bytes (SQLite's header, LMDB's meta page), so a vault needs no registry: the
 * same `<home>/vaults/<name>.avfs` path holds either.
 */
import { createHash } from 'node:crypto';
import { closeSync, constants as fsConstants, openSync, readSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { BackendKind, MetaStore } from './backend';
import { createDbFile, openDb, type OpenOptions, underWriteLock } from './db';
import { LMDB_MAGIC, LmdbMeta } from './lmdb';
import { checkPgUrl, PG_LINK_MAGIC, readPgLink, redactUrl } from './pgLink';
import { SqliteMeta } from './sqlite';

let postgres: typeof import('./postgres') | undefined;
/** The PostgreSQL backend, loaded on the first PostgreSQL vault (its worker and `pg` with it). */
function pgBackend(): typeof import('./postgres') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  postgres ??= require('./postgres') as typeof import('./postgres');
  return postgres;
}

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
    if (n >= PG_LINK_MAGIC.length && head.toString('latin1', 0, n).startsWith(PG_LINK_MAGIC)) return 'postgres';
    return undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** Opens an existing vault file with the backend it was made with. */
export function openMeta(file: string, opts: OpenOptions = {}): MetaStore {
  const kind = backendOfFile(file);
  if (kind === 'lmdb') return new LmdbMeta(file, { readonly: opts.readonly });
  if (kind === 'postgres') return new (pgBackend().PgMeta)(file, { readonly: opts.readonly });
  return new SqliteMeta(openDb(file, opts));
}

/** Where a vault lives, to show: its file, or its server's URL with any password replaced. */
export function vaultLocation(file: string): string {
  if (backendOfFile(file) !== 'postgres') return file;
  try {
    return redactUrl(readPgLink(file).url);
  } catch {
    return file;
  }
}

/** Where a vault on a server is: its URL (`--url`, else `$AVFS_PG_URL`); `attach`: it exists there already. */
export interface ServerOptions {
  url?: string;
  attach?: boolean;
}

/**
 * The name a vault has on its server: its name in the home. `AVFS_PG_NAMESPACE=home` (a test
 * seam: the conformance run shares one server among tests whose homes reuse names) prefixes a
 * digest of the home's path.
 */
export function serverVaultName(file: string): string {
  const name = basename(file).replace(/\.avfs$/, '');
  if (process.env.AVFS_PG_NAMESPACE !== 'home') return name;
  return `${createHash('sha256').update(realpathSync(dirname(file))).digest('hex').slice(0, 12)}.${name}`;
}

/** Creates a new vault file on `backend` (the file exists, empty, claimed by the caller). */
export function createMeta(file: string, backend: BackendKind = 'sqlite', server: ServerOptions = {}): MetaStore {
  if (backend === 'lmdb') return new LmdbMeta(file, { create: true });
  if (backend === 'postgres') {
    const url = server.url ?? process.env.AVFS_PG_URL;
    if (!url) throw new AvfsError('InvalidInput', 'a PostgreSQL vault needs --url postgresql://… (or $AVFS_PG_URL)', { backend });
    const link = { url: checkPgUrl(url), vault: serverVaultName(file) };
    return new (pgBackend().PgMeta)(file, server.attach ? { attach: link } : { create: link });
  }
  if (server.url !== undefined) throw new AvfsError('InvalidInput', `--url is for a vault on a server (--backend postgres), not ${backend}`, { backend });
  return new SqliteMeta(createDbFile(file));
}

/**
 * Runs `fn` (the removal of a vault's files) holding the vault's write lock when the file opens
 * as a vault, so a write in progress commits first and the next one finds the vault gone.
 */
export function withWriteLock(file: string, fn: () => void): void {
  const kind = backendOfFile(file);
  if (kind === 'postgres') return pgBackend().removeVault(file, fn);
  if (kind !== 'lmdb') return underWriteLock(file, fn);
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
