/** Paths of the Unix sockets avfs listens on (the host's, mount servers' exec endpoints). */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import type { Server } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** Unix socket paths are limited to 107 bytes. */
const SOCKET_PATH_MAX = 107;

/** `preferred` when it fits a Unix socket's path; else a short path in a private runtime directory, named after `key`. */
export function unixSocketPath(preferred: string, key: string): string {
  if (Buffer.byteLength(preferred) <= SOCKET_PATH_MAX) return preferred;
  const dir = join(tmpdir(), `avfs-${userInfo().uid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // node:crypto is required here, for the rare long path: every CLI call that looks for a running
  // host comes through this module, and loading crypto costs a cold call ~2 ms.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createHash } = require('node:crypto') as typeof import('node:crypto');
  return join(dir, createHash('sha256').update(key).digest('hex').slice(0, 16) + '.sock');
}

/**
 * Listens on a Unix socket only its owner may connect to, from the first moment (the umask holds
 * while the socket file is made; the mode is then set for good). A socket left by a killed server
 * at that path is replaced.
 */
export async function listenOwnerOnly(server: Server, path: string): Promise<void> {
  rmSync(path, { force: true });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const old = process.umask(0o177);
    server.listen(path, () => {
      process.umask(old);
      resolve();
    });
  });
  chmodSync(path, 0o600);
}
