/**
 * A tiny in-memory FUSE file system on the same binding and mount options as a vault mount: the
 * ceiling of Node FUSE on this machine, for `npm run bench -- fuse`. Bench-only: no quotas, no
 * journal, no persistence. Run as its own process: `node --import tsx bench/_memfs.ts MOUNTPOINT
 * [CACHE_SECONDS]` (the kernel's entry and attribute cache time, default 1); prints `ready` once
 * mounted, on SIGUSR2 prints (and resets) how many requests of each kind it has answered, as one
 * JSON line, and unmounts on SIGTERM.
 */
import { stat } from 'node:fs/promises';
import { type FuseOps, type FuseStat, type FuseTime, mountFuse } from '../host/fuse/binding';

const ENOENT = -2;
const EEXIST = -17;
const ENOTDIR = -20;
const EISDIR = -21;
const ENOTEMPTY = -39;
const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

interface Node {
  ino: number;
  mode: number;
  nlink: number;
  size: number;
  /** Content in 64 KiB pages (a missing page reads as zeros), so growing a file copies nothing. */
  pages: Map<number, Buffer>;
  target: string;
  children: Map<string, Node> | null;
  /** Nanoseconds since the epoch. */
  atime: bigint;
  mtime: bigint;
  ctime: bigint;
}

const nowNs = (): bigint => BigInt(Date.now()) * 1_000_000n;
const timeOf = (t: FuseTime, old: bigint): bigint => (t === 'omit' ? old : t === 'now' ? nowNs() : t);

let nextIno = 1;
function node(mode: number): Node {
  const now = nowNs();
  const dir = (mode & S_IFMT) === S_IFDIR;
  return { ino: nextIno++, mode, nlink: dir ? 2 : 1, size: 0, pages: new Map(), target: '', children: dir ? new Map() : null, atime: now, mtime: now, ctime: now };
}

const root = node(S_IFDIR | 0o755);
const handles = new Map<number, Node>();
let nextFh = 1;

function find(path: string): Node | undefined {
  if (path === '/') return root;
  let cur: Node | undefined = root;
  for (const part of path.slice(1).split('/')) {
    cur = cur?.children?.get(part);
    if (!cur) return undefined;
  }
  return cur;
}

function parentOf(path: string): { dir: Node | undefined; name: string } {
  const i = path.lastIndexOf('/');
  return { dir: find(path.slice(0, i) || '/'), name: path.slice(i + 1) };
}

const toStat = (n: Node): FuseStat => ({
  mode: n.mode,
  uid: 0,
  gid: 0,
  size: n.size,
  nlink: n.nlink,
  ino: n.ino,
  blksize: 4096,
  blocks: Math.ceil(n.size / 512),
  atime: n.atime,
  mtime: n.mtime,
  ctime: n.ctime,
});

function add(path: string, n: Node): number {
  const { dir, name } = parentOf(path);
  if (!dir?.children) return ENOENT;
  if (dir.children.has(name)) return EEXIST;
  dir.children.set(name, n);
  if (n.children) dir.nlink++;
  dir.mtime = dir.ctime = nowNs();
  return 0;
}

const PAGE = 65536;

function readPages(n: Node, dst: Buffer, pos: number, len: number): void {
  for (let done = 0; done < len; ) {
    const at = pos + done;
    const page = n.pages.get(Math.floor(at / PAGE));
    const inPage = at % PAGE;
    const m = Math.min(PAGE - inPage, len - done);
    if (page) page.copy(dst, done, inPage, inPage + m);
    else dst.fill(0, done, done + m);
    done += m;
  }
}

function writePages(n: Node, src: Buffer, pos: number, len: number): void {
  for (let done = 0; done < len; ) {
    const at = pos + done;
    const idx = Math.floor(at / PAGE);
    let page = n.pages.get(idx);
    if (!page) n.pages.set(idx, (page = Buffer.alloc(PAGE)));
    const inPage = at % PAGE;
    const m = Math.min(PAGE - inPage, len - done);
    src.copy(page, inPage, done, done + m);
    done += m;
  }
}

function resize(n: Node, size: number): void {
  if (size < n.size) {
    for (const idx of n.pages.keys()) if (idx * PAGE >= size) n.pages.delete(idx);
    const tail = n.pages.get(Math.floor(size / PAGE));
    if (tail) tail.fill(0, size % PAGE);
  }
  n.size = size;
}

const ops: FuseOps = {
  getattr(path, cb) {
    const n = find(path);
    return n ? cb(0, toStat(n)) : cb(ENOENT);
  },
  fgetattr(path, fd, cb) {
    const n = handles.get(fd) ?? find(path);
    return n ? cb(0, toStat(n)) : cb(ENOENT);
  },
  statfs(_path, cb) {
    cb(0, { bsize: 4096, frsize: 4096, blocks: 1 << 28, bfree: 1 << 28, bavail: 1 << 28, files: 1e9, ffree: 1e9, favail: 1e9, fsid: 0, flag: 0, namemax: 255 });
  },
  readdir(path, cb) {
    const n = find(path);
    if (!n) return cb(ENOENT);
    if (!n.children) return cb(ENOTDIR);
    const names = ['.', '..'];
    const stats = [toStat(n), toStat(n)];
    for (const [name, c] of n.children) {
      names.push(name);
      stats.push(toStat(c));
    }
    cb(0, names, stats);
  },
  readlink(path, cb) {
    const n = find(path);
    return n ? cb(0, n.target) : cb(ENOENT);
  },
  open(path, _flags, cb) {
    const n = find(path);
    if (!n) return cb(ENOENT);
    if (n.children) return cb(EISDIR);
    handles.set(nextFh, n);
    cb(0, nextFh++);
  },
  create(path, mode, cb) {
    const n = node(S_IFREG | (mode & 0o7777));
    const e = add(path, n);
    if (e) return cb(e);
    handles.set(nextFh, n);
    cb(0, nextFh++);
  },
  read(_path, fd, buf, len, pos, cb) {
    const n = handles.get(fd);
    if (!n) return cb(ENOENT);
    const end = Math.min(n.size, pos + len);
    if (end <= pos) return cb(0);
    readPages(n, buf, pos, end - pos);
    cb(end - pos);
  },
  write(_path, fd, buf, len, pos, cb) {
    const n = handles.get(fd);
    if (!n) return cb(ENOENT);
    writePages(n, buf, pos, len);
    n.size = Math.max(n.size, pos + len);
    n.mtime = n.ctime = nowNs();
    cb(len);
  },
  flush(_path, _fd, cb) {
    cb(0);
  },
  fsync(_path, _d, _fd, cb) {
    cb(0);
  },
  release(_path, fd, cb) {
    handles.delete(fd);
    cb(0);
  },
  truncate(path, size, cb) {
    const n = find(path);
    if (!n) return cb(ENOENT);
    resize(n, size);
    cb(0);
  },
  ftruncate(path, fd, size, cb) {
    const n = handles.get(fd) ?? find(path);
    if (!n) return cb(ENOENT);
    resize(n, size);
    cb(0);
  },
  utimens(path, atime, mtime, cb) {
    const n = find(path);
    if (!n) return cb(ENOENT);
    n.atime = timeOf(atime, n.atime);
    n.mtime = timeOf(mtime, n.mtime);
    cb(0);
  },
  chmod(path, mode, cb) {
    const n = find(path);
    if (!n) return cb(ENOENT);
    n.mode = (n.mode & S_IFMT) | (mode & 0o7777);
    cb(0);
  },
  chown(_path, _uid, _gid, cb) {
    cb(0);
  },
  mkdir(path, mode, cb) {
    cb(add(path, node(S_IFDIR | (mode & 0o7777))));
  },
  rmdir(path, cb) {
    const { dir, name } = parentOf(path);
    const n = dir?.children?.get(name);
    if (!dir || !n) return cb(ENOENT);
    if (!n.children) return cb(ENOTDIR);
    if (n.children.size > 0) return cb(ENOTEMPTY);
    dir.children!.delete(name);
    dir.nlink--;
    cb(0);
  },
  unlink(path, cb) {
    const { dir, name } = parentOf(path);
    const n = dir?.children?.get(name);
    if (!dir || !n) return cb(ENOENT);
    if (n.children) return cb(EISDIR);
    dir.children!.delete(name);
    n.nlink--;
    cb(0);
  },
  rename(src, dest, cb) {
    const s = parentOf(src);
    const d = parentOf(dest);
    const n = s.dir?.children?.get(s.name);
    if (!n || !d.dir?.children) return cb(ENOENT);
    const old = d.dir.children.get(d.name);
    if (old?.children && old.children.size > 0) return cb(ENOTEMPTY);
    s.dir!.children!.delete(s.name);
    d.dir.children.set(d.name, n);
    if (n.children && s.dir !== d.dir) {
      s.dir!.nlink--;
      d.dir.nlink++;
    }
    if (old?.children) d.dir.nlink--;
    cb(0);
  },
  link(src, dest, cb) {
    const n = find(src);
    if (!n) return cb(ENOENT);
    const e = add(dest, n);
    if (!e) n.nlink++;
    cb(e);
  },
  symlink(target, path, cb) {
    const n = node(S_IFLNK | 0o777);
    n.target = target;
    n.size = Buffer.byteLength(target);
    cb(add(path, n));
  },
};

/** The same operations, each counting the requests it answers. */
function counted(o: FuseOps, counts: Map<string, number>): FuseOps {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(o) as Array<[string, (...a: unknown[]) => unknown]>) {
    out[name] = (...a: unknown[]) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return fn(...a);
    };
  }
  return out as FuseOps;
}

async function main(): Promise<void> {
  const mnt = process.argv[2];
  if (!mnt) throw new Error('usage: _memfs.ts MOUNTPOINT [CACHE_SECONDS]');
  const cache = Number(process.argv[3] ?? 1);
  const counts = new Map<string, number>();
  const fs = await mountFuse(mnt, counted(ops, counts), { source: 'memfs', subtype: 'memfs', autoUnmount: true, entryTimeout: cache, attrTimeout: cache });
  await stat(mnt);
  counts.clear();
  process.on('SIGUSR2', () => {
    process.stdout.write(JSON.stringify(Object.fromEntries(counts)) + '\n');
    counts.clear();
  });
  process.stdout.write('ready\n');
  const stop = () => {
    void fs.unmount().finally(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

void main();
