/** Paths of the Unix sockets avfs listens on (the host's, mount servers' exec endpoints). */
import { chmodSync, lstatSync, mkdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AvfsError } from '../protocol/errors';

/** Unix socket paths are limited to 107 bytes. */
const SOCKET_PATH_MAX = 107;

const myUid = (): number => process.getuid?.() ?? -1;

/**
 * `preferred` when it fits a Unix socket's path; else a short path in a private runtime directory
 * (`$TMPDIR/avfs-<uid>`), named after `key`. That directory is shared ground: one that is not a
 * directory of this user's, that anyone else may write, is refused (PermissionDenied): whoever
 * made it could move the socket aside and listen in its place.
 */
export function unixSocketPath(preferred: string, key: string): string {
  if (Buffer.byteLength(preferred) <= SOCKET_PATH_MAX) return preferred;
  const uid = myUid();
  const dir = join(tmpdir(), `avfs-${uid}`);
  if (mkdirSync(dir, { recursive: true, mode: 0o700 }) !== undefined) chmodSync(dir, 0o700);
  const st = lstatSync(dir);
  const wrong = !st.isDirectory() ? 'it is not a directory' : st.uid !== uid ? `it belongs to uid ${st.uid}` : (st.mode & 0o022) !== 0 ? `others may write it (mode ${(st.mode & 0o777).toString(8)})` : undefined;
  if (wrong) {
    throw new AvfsError('PermissionDenied', `the socket directory ${dir} (used because the path ${preferred} is too long for a Unix socket) is not private: ${wrong}; remove it, or use a shorter avfs home`, {
      path: dir,
    });
  }
  // node:crypto is required here, for the rare long path: every CLI call that looks for a running
  // host comes through this module, and loading crypto costs a cold call ~2 ms.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHash } = require('node:crypto') as typeof import('node:crypto');
  return join(dir, createHash('sha256').update(key).digest('hex').slice(0, 16) + '.sock');
}

/** Whether `path` is a socket of this user's (what a stale record may have left, and nothing else). */
export function isOwnSocket(path: string): boolean {
  const st = lstatSync(path, { throwIfNoEntry: false });
  return !!st && st.isSocket() && st.uid === myUid();
}

/**
 * Listens on a Unix socket only its owner may connect to, from the first moment (the umask holds
 * while the socket file is made; the mode is then set for good). A socket left by a killed server
 * at that path is replaced; anything else there is left alone (the listen fails EADDRINUSE).
 */
export async function listenOwnerOnly(server: Server, path: string): Promise<void> {
  if (isOwnSocket(path)) rmSync(path, { force: true });
  await new Promise<void>((resolve, reject) => {
    const old = process.umask(0o177);
    server.once('error', (e) => {
      process.umask(old);
      reject(e);
    });
    server.listen(path, () => {
      process.umask(old);
      resolve();
    });
  });
  chmodSync(path, 0o600);
}
