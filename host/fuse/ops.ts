/**
 * The FUSE operation table of a vault mount. Every operation goes through the path API (Vfs, and
 * its handle-level FileIo), so read-only (EROFS), quotas (EDQUOT) and the journal apply as they do
 * for the CLI; every error becomes an errno through the one error table.
 *
 * libfuse 2's path API hides a file that is unlinked while open by renaming it to
 * `.fuse_hidden…` and unlinks that name at the last close. We turn that rename into "unlink, keep
 * the inode as an orphan" and that final unlink into "free the orphan", so the hidden name never
 * reaches the vault (a directory holding an open deleted file can still be removed).
 */
import { closeSync, constants, fsyncSync, openSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';
import { type Attr, kindOf, nowNs, type Owner, S_IFDIR, type SetAttr } from '../store/inodes';
import { ROOT_INO } from '../store/schema';
import type { FileIo } from '../vfs/handles';
import { NAME_MAX } from '../vfs/paths';
import type { FuseCaller, FuseOps, FuseStat, FuseStatfs, FuseTime } from './binding';
import { errnoByName, fuseErrno } from './errno';
import { OpenFiles } from './openFiles';

const O_ACCMODE = 3;
const ENOENT = errnoByName('ENOENT');
const O_TRUNC = constants.O_TRUNC;
const HIDDEN_RE = /\/\.fuse_hidden[0-9a-f]{16}$/;
const ENAMETOOLONG = errnoByName('ENAMETOOLONG');
const BLOCK = 4096;
/** What statfs reports when no quota is set. */
const DEFAULT_BYTES = 1024 ** 4;
const DEFAULT_FILES = 1_000_000_000;

export interface OpsLog {
  error(op: string, path: string, e: AvfsError): void;
}

export interface VaultOps {
  ops: FuseOps;
  files: OpenFiles;
  /** Persists every buffered write (before unmount). */
  flushAll(): void;
}

/** A new file, directory, symlink or FIFO belongs to the process that made it, as on a local disk. */
const ownerOf = (caller: FuseCaller): Owner => ({ uid: caller.uid, gid: caller.gid });

/**
 * The kernel looks names up one at a time, so the last component of the path it hands over is
 * the one to check; names of 256 to 1,024 bytes reach us (longer ones the kernel refuses itself).
 */
function lastNameTooLong(path: string): boolean {
  const name = path.length - path.lastIndexOf('/') - 1;
  return name > NAME_MAX / 4 && Buffer.byteLength(path.slice(path.length - name)) > NAME_MAX;
}

export function toFuseStat(a: Attr): FuseStat {
  // Directories report one block, as ext4 does (tools such as copy_file_range callers read a
  // zero-size "file" as empty instead of failing with EISDIR).
  const size = (a.mode & 0o170000) === S_IFDIR ? BLOCK : a.size;
  return {
    mode: a.mode,
    uid: a.uid,
    gid: a.gid,
    size,
    nlink: a.nlink,
    ino: a.ino,
    blksize: BLOCK,
    blocks: Math.ceil(size / 512),
    atime: a.atime,
    mtime: a.mtime,
    ctime: a.ctime,
  };
}

export function createVaultOps(io: FileIo, log: OpsLog): VaultOps {
  const files = new OpenFiles((ino, offset, data, path) => {
    io.batch(() => io.writeAt(ino, offset, data, path));
  });
  /** `.fuse_hidden…` path → the orphan inode it stands for. */
  const hidden = new Map<string, number>();
  const vfs = io.vfs;
  io.onCommitError = (e) => log.error('commit', '/', fuseErrno(e).error);

  const fail = (op: string, path: string, e: unknown): number => {
    const { errno, error } = fuseErrno(e);
    if (error.kind === 'Internal' || error.kind === 'StorageError') log.error(op, path, error);
    return errno;
  };

  /** Runs a callback-style mutation (in the group transaction): 0 or the errno. */
  const run = (op: string, path: string, cb: (err: number) => void, fn: () => void): void => {
    try {
      io.batch(fn);
    } catch (e) {
      return cb(fail(op, path, e));
    }
    cb(0);
  };

  const inoOf = (path: string): number => {
    const h = hidden.get(path);
    if (h !== undefined) return h;
    return io.lookup(path);
  };

  /** lstat for the kernel: an orphan by its hidden name, else by path; pending writes persisted first. */
  const tryAttrOf = (path: string): Attr | undefined => {
    const h = hidden.get(path);
    const a = h !== undefined ? io.attr(h) : io.tryStat(path);
    if (a && files.isOpen(a.ino)) {
      files.persistIno(a.ino);
      return io.attr(a.ino) ?? a;
    }
    return a;
  };

  const attrOf = (path: string): Attr => {
    const a = tryAttrOf(path);
    if (!a) throw new AvfsError('NotFound', `no such file or directory: ${path}`, { path });
    return a;
  };

  /**
   * Makes committed groups durable: with WAL and synchronous=NORMAL a COMMIT is not synced, so
   * fsync syncs the vault's WAL file itself (no WAL file: nothing is pending there).
   */
  const syncWal = (): void => {
    let fd: number;
    try {
      fd = openSync(`${vfs.vault.file}-wal`, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  };

  const journalHandle = (path: string, ino: number, unjournaled: boolean, orphan: boolean): void => {
    if (!unjournaled || orphan || HIDDEN_RE.test(path)) return;
    io.noteWritten(path, io.attr(ino)?.size ?? 0);
  };

  const ops: FuseOps = {
    getattr(path, cb) {
      try {
        if (lastNameTooLong(path)) return cb(ENAMETOOLONG);
        const a = tryAttrOf(path);
        cb(a ? 0 : ENOENT, a && toFuseStat(a));
      } catch (e) {
        cb(fail('getattr', path, e));
      }
    },

    fgetattr(path, fd, cb) {
      try {
        if (lastNameTooLong(path)) return cb(ENAMETOOLONG);
        const of = fd ? files.get(fd) : undefined;
        if (!of) return cb(0, toFuseStat(attrOf(path)));
        files.persist(of);
        const a = io.attr(of.ino);
        if (!a) throw new AvfsError('NotFound', `inode of ${path} is gone`, { path });
        cb(0, toFuseStat(a));
      } catch (e) {
        cb(fail('fgetattr', path, e));
      }
    },

    statfs(path, cb) {
      try {
        const q = io.vfs.inodes.quotas.get();
        const c = io.vfs.inodes.counters();
        const totalBytes = q.max_size_mb !== null ? q.max_size_mb * 1024 * 1024 : DEFAULT_BYTES;
        const blocks = Math.ceil(totalBytes / BLOCK);
        const used = Math.ceil(c.liveBytes / BLOCK);
        const totalFiles = q.max_files ?? DEFAULT_FILES;
        const st: FuseStatfs = {
          bsize: BLOCK,
          frsize: BLOCK,
          blocks,
          bfree: Math.max(0, blocks - used),
          bavail: Math.max(0, blocks - used),
          files: totalFiles,
          ffree: Math.max(0, totalFiles - c.liveInodes),
          favail: Math.max(0, totalFiles - c.liveInodes),
          fsid: 0,
          flag: io.readonly ? 1 : 0,
          namemax: NAME_MAX,
        };
        cb(0, st);
      } catch (e) {
        cb(fail('statfs', path, e));
      }
    },

    readdir(path, cb) {
      try {
        const ino = inoOf(path);
        const a = io.attr(ino);
        if (!a || kindOf(a.mode) !== 'directory') throw new AvfsError('NotADirectory', `not a directory: ${path}`, { path });
        const entries = io.readdir(ino);
        const parent = path === '/' ? ROOT_INO : safeIno(path.slice(0, path.lastIndexOf('/')) || '/');
        const names = ['.', '..'];
        const stats = [dirent(ino, S_IFDIR), dirent(parent, S_IFDIR)];
        for (const e of entries) {
          names.push(e.name);
          stats.push(dirent(e.ino, e.mode));
        }
        cb(0, names, stats);
      } catch (e) {
        cb(fail('readdir', path, e));
      }
    },

    readlink(path, cb) {
      try {
        cb(0, vfs.readlink(path));
      } catch (e) {
        cb(fail('readlink', path, e));
      }
    },

    open(path, flags, cb) {
      try {
        const forWrite = (flags & O_ACCMODE) !== 0;
        const h = hidden.get(path);
        let ino: number;
        if (h !== undefined) {
          if (forWrite && io.readonly) throw new AvfsError('ReadOnly', `read-only vault: cannot modify ${path}`, { path });
          ino = h;
        } else {
          ino = io.open(path, forWrite).ino;
        }
        const of = files.open(ino, path, forWrite);
        of.orphan = h !== undefined;
        if (forWrite && flags & O_TRUNC) {
          files.persistIno(ino);
          io.batch(() => io.truncateAt(ino, 0, path));
        }
        cb(0, of.fh);
      } catch (e) {
        cb(fail('open', path, e));
      }
    },

    create(path, mode, cb, caller) {
      try {
        const a = io.batch(() => io.create(path, mode, ownerOf(caller)));
        cb(0, files.open(a.ino, path, true).fh);
      } catch (e) {
        cb(fail('create', path, e));
      }
    },

    read(path, fd, buf, len, pos, cb) {
      try {
        const of = files.get(fd);
        files.persistIno(of.ino);
        cb(io.readInto(of.ino, pos, len, buf));
      } catch (e) {
        cb(fail('read', path, e));
      }
    },

    write(path, fd, buf, len, pos, cb) {
      try {
        const of = files.get(fd);
        if (!of.writable || io.readonly) throw new AvfsError('ReadOnly', `read-only: cannot write ${path}`, { path });
        files.write(of, pos, buf.subarray(0, len), io.hasByteQuota());
        cb(len);
      } catch (e) {
        cb(fail('write', path, e));
      }
    },

    flush(path, fd, cb) {
      run('flush', path, cb, () => {
        const of = files.get(fd);
        files.persist(of);
        journalHandle(path, of.ino, of.unjournaled, of.orphan);
        of.unjournaled = false;
      });
    },

    fsync(path, _datasync, fd, cb) {
      // fsync returns once the group holding this file's writes is committed and the WAL is synced.
      try {
        io.batch(() => files.persist(files.get(fd)));
        io.commit();
        syncWal();
      } catch (e) {
        return cb(fail('fsync', path, e));
      }
      cb(0);
    },

    fsyncdir(path, _datasync, _fd, cb) {
      // The mount's write barrier: fsync of a directory returns once every write the kernel has
      // handed to this server (buffered in any open handle, or in the open group transaction) is
      // committed to the vault and the WAL is synced. proxy exec calls it on the mount root after
      // the command exits, before it reads the change summary from the vault.
      try {
        files.persistAll();
        io.commit();
        syncWal();
      } catch (e) {
        return cb(fail('fsyncdir', path, e));
      }
      cb(0);
    },

    release(path, fd, cb) {
      run('release', path, cb, () => {
        const of = files.get(fd);
        let failure: unknown;
        try {
          files.persist(of);
          journalHandle(path, of.ino, of.unjournaled, of.orphan);
        } catch (e) {
          failure = e;
        }
        files.close(of);
        if (failure !== undefined) throw failure;
      });
    },

    truncate(path, size, cb) {
      run('truncate', path, cb, () => {
        const ino = inoOf(path);
        files.persistIno(ino);
        io.truncateAt(ino, size, path);
      });
    },

    ftruncate(path, fd, size, cb) {
      run('ftruncate', path, cb, () => {
        const of = files.get(fd);
        files.persistIno(of.ino);
        io.truncateAt(of.ino, size, path);
      });
    },

    utimens(path, atime, mtime, cb) {
      // Either time may be 'omit' (touch -m, tar x: leave it) or 'now' (UTIME_NOW: our clock).
      run('utimens', path, cb, () => {
        if (atime === 'omit' && mtime === 'omit') return;
        // Bytes still buffered in an open handle were written before the times were set: store
        // them first, or their persist at close would move mtime to the close (cp -p, tar, npm).
        const ino = inoOf(path);
        files.persistIno(ino);
        const times = timesToSet(atime, mtime);
        // An open file unlinked meanwhile has only its hidden name, which the vault never saw.
        if (hidden.has(path)) vfs.mutate(path, () => vfs.inodes.setattr(ino, times));
        else vfs.setattr(path, times, false);
      });
    },

    chmod(path, mode, cb) {
      run('chmod', path, cb, () => {
        vfs.setattr(path, { mode: mode & 0o7777 }, false);
      });
    },

    chown(path, uid, gid, cb) {
      run('chown', path, cb, () => {
        const keep = 0xffffffff;
        vfs.setattr(path, { ...(uid !== keep && uid !== -1 ? { uid } : {}), ...(gid !== keep && gid !== -1 ? { gid } : {}) }, false);
      });
    },

    mkdir(path, mode, cb, caller) {
      run('mkdir', path, cb, () => {
        vfs.mkdir(path, { mode: mode & 0o7777, owner: ownerOf(caller) });
      });
    },

    rmdir(path, cb) {
      run('rmdir', path, cb, () => {
        vfs.rm(path, { dirOnly: true });
        io.invalidate();
      });
    },

    unlink(path, cb) {
      run('unlink', path, cb, () => {
        const h = hidden.get(path);
        if (h !== undefined) {
          hidden.delete(path);
          if (!files.isOpen(h)) io.releaseOrphan(h);
          return;
        }
        vfs.rm(path);
        io.invalidate();
      });
    },

    rename(src, dest, cb) {
      run('rename', src, cb, () => {
        if (HIDDEN_RE.test(dest) && !hidden.has(src)) {
          // libfuse hides a file that is unlinked (or renamed over) while open.
          const ino = io.unlinkKeepOpen(src);
          hidden.set(dest, ino);
          for (const of of files.forIno(ino)) if ((io.attr(ino)?.nlink ?? 0) === 0) of.orphan = true;
          return;
        }
        if (hidden.has(src)) throw new AvfsError('NotFound', `no such file: ${src}`, { path: src });
        vfs.rename(src, dest);
        io.invalidate();
      });
    },

    link(src, dest, cb) {
      run('link', dest, cb, () => {
        vfs.link(src, dest);
      });
    },

    symlink(target, path, cb, caller) {
      run('symlink', path, cb, () => {
        vfs.symlink(target, path, ownerOf(caller));
      });
    },

    mknod(path, mode, _dev, cb, caller) {
      // FIFOs and sockets (mkfifo, bind): the vault keeps the inode, the kernel carries the traffic.
      run('mknod', path, cb, () => {
        vfs.mknod(path, mode, ownerOf(caller));
      });
    },
  };

  function safeIno(path: string): number {
    try {
      return inoOf(path);
    } catch {
      return ROOT_INO;
    }
  }

  return {
    ops: process.env.AVFS_FUSE_STATS ? instrument(ops, log) : ops,
    files,
    flushAll: () => {
      try {
        files.persistAll();
      } finally {
        io.commit();
      }
    },
  };
}

/** AVFS_FUSE_STATS=1: counts calls and time per operation, logged every 5 s. */
function instrument(ops: FuseOps, log: OpsLog): FuseOps {
  const stats = new Map<string, { n: number; ns: bigint }>();
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(ops) as Array<[string, (...a: unknown[]) => void]>) {
    out[name] = (...a: unknown[]) => {
      const t0 = process.hrtime.bigint();
      fn(...a);
      const s = stats.get(name) ?? { n: 0, ns: 0n };
      s.n++;
      s.ns += process.hrtime.bigint() - t0;
      stats.set(name, s);
    };
  }
  setInterval(() => {
    const line = [...stats].map(([k, v]) => `${k}=${v.n}/${Number(v.ns / 1000000n)}ms`).join(' ');
    if (line) log.error('stats', '/', new AvfsError('Internal', line));
    stats.clear();
  }, 5000).unref();
  return out as FuseOps;
}

/** What setattr gets from a utimens: UTIME_OMIT leaves a time out, UTIME_NOW is one clock reading for both. */
function timesToSet(atime: FuseTime, mtime: FuseTime): SetAttr {
  const now = atime === 'now' || mtime === 'now' ? nowNs() : 0n;
  const times: SetAttr = {};
  if (atime !== 'omit') times.atime = atime === 'now' ? now : atime;
  if (mtime !== 'omit') times.mtime = mtime === 'now' ? now : mtime;
  return times;
}

/** readdir needs only each entry's inode number and type. */
function dirent(ino: number, mode: number): Pick<FuseStat, 'ino' | 'mode'> {
  return { ino, mode };
}

