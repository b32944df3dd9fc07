/**
 * A tiny file system served through host/fuse/binding.ts alone, for test/fuse/binding.test.ts:
 * `node --import tsx test/fuse/bindingServer.ts MOUNTPOINT`. `/slow`'s getattr is answered 200 ms
 * late and its reads on the next turn of the event loop; `/hang`'s getattr is never answered.
 * Prints `ready`; on SIGINT it unmounts and prints `unmounted`, then does nothing more (the
 * process must end by itself); on SIGHUP it exits at once, still mounted.
 */
import { type FuseOps, type FuseStat, mountFuse } from '../../host/fuse/binding';

const ENOENT = -2;
const now = BigInt(Date.now()) * 1_000_000n;
const attr = (mode: number, ino: number, size = 0): FuseStat => ({ mode, uid: 0, gid: 0, size, nlink: 1, ino, atime: now, mtime: now, ctime: now });
const CONTENT = Buffer.from('answered later\n');

const ops: FuseOps = {
  getattr(path, cb) {
    if (path === '/') return cb(0, attr(0o040755, 1));
    if (path === '/slow') return void setTimeout(() => cb(0, attr(0o100644, 2, CONTENT.length)), 200);
    if (path === '/hang') return; // never answered
    cb(ENOENT);
  },
  readdir(path, cb) {
    if (path !== '/') return cb(ENOENT);
    cb(0, ['.', '..', 'slow', 'hang'], [attr(0o040755, 1), attr(0o040755, 1), attr(0o100644, 2), attr(0o100644, 3)]);
  },
  open(_path, _flags, cb) {
    cb(0, 7);
  },
  read(_path, _fd, buf, len, pos, cb) {
    const n = Math.max(0, Math.min(len, CONTENT.length - pos));
    CONTENT.copy(buf, 0, pos, pos + n);
    setImmediate(() => cb(n));
  },
};

async function main(): Promise<void> {
  const fs = await mountFuse(process.argv[2]!, ops, { source: 'bindingtest', subtype: 'bindingtest', entryTimeout: 0, attrTimeout: 0 });
  process.stdout.write('ready\n');
  process.once('SIGINT', () => void fs.unmount().then(() => process.stdout.write('unmounted\n')));
  process.once('SIGHUP', () => process.exit(0));
}

void main();
