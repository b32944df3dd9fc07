/**
 * What avfs keeps in its home is its user's alone: folders are made 0700 and files 0600 whatever
 * the umask (a umask only takes bits away, so the mode is also set after creating). The home's
 * folders, vault files, mount records, logs, locks, host.json and sockets all come through here.
 */
import { chmodSync, closeSync, fchmodSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** `mkdir -p` whose every folder it makes is 0700 (folders that exist are left as they are). */
export function makePrivateDir(dir: string): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (first === undefined) return;
  for (let d = dir; ; d = dirname(d)) {
    chmodSync(d, PRIVATE_DIR_MODE);
    if (d === first || d === dirname(d)) break;
  }
}

/** A single folder made 0700 (throws EEXIST as mkdirSync does: a lock taken with it stays exclusive). */
export function makePrivateDirOnce(dir: string): void {
  mkdirSync(dir, { mode: PRIVATE_DIR_MODE });
  chmodSync(dir, PRIVATE_DIR_MODE);
}

/** Opens (creating 0600 when `flags` creates) and returns the descriptor; the file is made 0600. */
export function openPrivate(file: string, flags: string): number {
  const fd = openSync(file, flags, PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return fd;
}

/** writeFileSync for a file of the home: 0600. `flags` as writeFileSync's ('w', 'wx', 'a'). */
export function writePrivateFile(file: string, data: string | Buffer, flags = 'w'): void {
  const fd = openPrivate(file, flags);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data) : data;
    for (let off = 0; off < buf.length; ) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}
