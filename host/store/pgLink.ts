/**
 * A PostgreSQL vault in a home: `<home>/vaults/<name>.avfs` is a small private file (mode 0600)
 * that names the server and the vault there, so everything that finds vaults by their files
 * (listing, `current`, forks' parents, delete) works unchanged. Its first line says what it is:
 *
 *   avfs-postgres-vault 1
 *   {"url":"postgresql://user@host/db","vault":"NAME"}
 *
 * The URL is kept as the user gave it (a password in it stays in this private file); everything
 * that shows it (`vault list`/`info`, `--json`, errors, the journal) shows `redactUrl(url)`. A
 * password can instead come from `PGPASSWORD` or `~/.pgpass`, as libpq reads them (npm `pg` does).
 */
import { readFileSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';
import { writePrivateFile } from './privateFs';

export const PG_LINK_MAGIC = 'avfs-postgres-vault 1\n';

export interface PgLink {
  url: string;
  /** The vault's name on the server (unique there). */
  vault: string;
}

/** The URL with any password replaced by `***` (userinfo and a `password=` parameter). */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@?#]*):[^@/?#]*@/i, '$1:***@').replace(/([?&]password=)[^&#]*/gi, '$1***');
}

/** A URL the backend accepts: postgres:// or postgresql://. */
export function checkPgUrl(url: string): string {
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//i.test(url)) {
    throw new AvfsError('InvalidInput', `a PostgreSQL vault needs --url postgresql://[user[:password]@][host][:port]/database (got ${JSON.stringify(redactUrl(String(url)))})`, {
      url: redactUrl(String(url)),
    });
  }
  return url;
}

export function writePgLink(file: string, link: PgLink): void {
  writePrivateFile(file, PG_LINK_MAGIC + JSON.stringify(link) + '\n');
}

export function readPgLink(file: string): PgLink {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AvfsError('StorageError', `vault file ${file} cannot be read: ${(e as Error).message}`, { file });
  }
  try {
    if (!text.startsWith(PG_LINK_MAGIC)) throw new Error('not a PostgreSQL vault link');
    const link = JSON.parse(text.slice(PG_LINK_MAGIC.length)) as Partial<PgLink>;
    if (typeof link.url !== 'string' || typeof link.vault !== 'string') throw new Error('the link names no server or vault');
    return { url: link.url, vault: link.vault };
  } catch (e) {
    throw new AvfsError('StorageError', `vault file ${file} cannot be used: ${(e as Error).message}`, { file });
  }
}
