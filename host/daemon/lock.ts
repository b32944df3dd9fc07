/**
 * One host per avfs home. `<home>/host.json` names the running host (pid, socket); it is
 * claimed with O_EXCL, so two hosts cannot both start. A record whose process is gone (the host
 * crashed, or was killed) is stale: the next host, or a CLI call, removes it and its socket.
 */
import { linkSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { HostRecord } from '../protocol/records';
import { pidAlive } from '../fuse/liveness';
import type { HomeDir } from '../store/homeDir';
import { isOwnSocket, unixSocketPath } from '../store/socketPath';
import { makePrivateDir, writePrivateFile } from '../store/privateFs';

// The record's format is the protocol's (host/protocol/records.ts).
export { HostRecord };

export function hostFile(home: HomeDir): string {
  return join(home.dir, 'host.json');
}

/** A deeper home gets its socket in a private runtime directory (Unix socket paths are short). */
export function socketPath(home: HomeDir): string {
  return unixSocketPath(join(home.dir, 'host.sock'), home.dir);
}

/** The running host of this home, or undefined (a stale record is cleared on the way). */
export function readHost(home: HomeDir): HostRecord | undefined {
  let text: string;
  try {
    text = readFileSync(hostFile(home), 'utf8');
  } catch {
    return undefined;
  }
  const parsed = HostRecord.safeParse(safeJson(text));
  if (!parsed.success) {
    // Records are linked into place whole (claimHome), so one that does not parse is damage.
    rmSync(hostFile(home), { force: true });
    return undefined;
  }
  const rec = parsed.data;
  if (pidAlive(rec.pid)) return rec;
  clearStale(home, rec);
  return undefined;
}

/**
 * Clears the record of a host that died, and its socket only when it is provably that host's: the
 * path this home's socket has, and a socket of this user's there. A record naming anything else
 * (forged, or from another home) deletes nothing but itself.
 */
function clearStale(home: HomeDir, rec: HostRecord): void {
  let own = false;
  try {
    own = rec.socket === socketPath(home) && isOwnSocket(rec.socket);
  } catch {
    /* no private socket directory: nothing of ours to remove */
  }
  if (own) rmSync(rec.socket, { force: true });
  rmSync(hostFile(home), { force: true });
}

/**
 * Claims the home for this process; throws Busy naming the host that holds it. The record is
 * written to a private file first and then linked into place: link() fails if the name exists,
 * so readers never see half a record and two hosts can never both succeed.
 */
export function claimHome(home: HomeDir, rec: HostRecord): () => void {
  makePrivateDir(home.dir);
  const mine = `${hostFile(home)}.${rec.pid}`;
  writePrivateFile(mine, JSON.stringify(rec, null, 2) + '\n');
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(mine, hostFile(home));
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 5) throw e;
        const other = readHost(home);
        if (other) {
          throw new AvfsError('Busy', `a host is already running for ${home.dir}: pid ${other.pid}, socket ${other.socket} (started ${other.started_at})`, {
            pid: other.pid,
            socket: other.socket,
            home: home.dir,
          });
        }
        // readHost cleared a stale record: try again.
      }
    }
  } finally {
    rmSync(mine, { force: true });
  }
  return () => {
    try {
      const now = HostRecord.parse(JSON.parse(readFileSync(hostFile(home), 'utf8')));
      if (now.pid === rec.pid) rmSync(hostFile(home), { force: true });
    } catch {
      /* removed by someone else */
    }
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
