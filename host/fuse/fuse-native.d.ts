/** The part of fuse-native@2.2.6 (no types of its own) that avfs uses. */
declare module 'fuse-native' {
  export interface FuseStat {
    mode: number;
    uid: number;
    gid: number;
    size: number;
    nlink: number;
    ino: number;
    dev?: number;
    rdev?: number;
    blksize?: number;
    blocks?: number;
    /** Dates or milliseconds since the epoch: the binding keeps millisecond precision, unsigned. */
    atime: Date | number;
    mtime: Date | number;
    ctime: Date | number;
  }

  export interface FuseStatfs {
    bsize: number;
    frsize: number;
    blocks: number;
    bfree: number;
    bavail: number;
    files: number;
    ffree: number;
    favail: number;
    fsid: number;
    flag: number;
    namemax: number;
  }

  /** Every callback takes a negative errno, or 0, first. */
  export type Cb = (err: number) => void;
  export type CbV<T> = (err: number, value?: T) => void;

  export interface FuseOps {
    init?(cb: Cb): void;
    statfs?(path: string, cb: CbV<FuseStatfs>): void;
    getattr?(path: string, cb: CbV<FuseStat>): void;
    fgetattr?(path: string, fd: number, cb: CbV<FuseStat>): void;
    access?(path: string, mode: number, cb: Cb): void;
    readdir?(path: string, cb: (err: number, names?: string[], stats?: FuseStat[]) => void): void;
    readlink?(path: string, cb: CbV<string>): void;
    open?(path: string, flags: number, cb: CbV<number>): void;
    create?(path: string, mode: number, cb: CbV<number>): void;
    read?(path: string, fd: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void): void;
    write?(path: string, fd: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void): void;
    flush?(path: string, fd: number, cb: Cb): void;
    fsync?(path: string, datasync: number, fd: number, cb: Cb): void;
    fsyncdir?(path: string, datasync: number, fd: number, cb: Cb): void;
    release?(path: string, fd: number, cb: Cb): void;
    truncate?(path: string, size: number, cb: Cb): void;
    ftruncate?(path: string, fd: number, size: number, cb: Cb): void;
    /**
     * Milliseconds. fuse-native 2.2.6 passes the access time as both arguments (see
     * host/fuse/binding.ts, which hands on the real mtime); called only when both times are set.
     */
    utimens?(path: string, atime: number, mtime: number, cb: Cb): void;
    /** `mode` carries the file type (S_IFIFO, S_IFSOCK, …); `dev` the device number. */
    mknod?(path: string, mode: number, dev: number, cb: Cb): void;
    chmod?(path: string, mode: number, cb: Cb): void;
    chown?(path: string, uid: number, gid: number, cb: Cb): void;
    unlink?(path: string, cb: Cb): void;
    rename?(src: string, dest: string, cb: Cb): void;
    link?(src: string, dest: string, cb: Cb): void;
    symlink?(target: string, path: string, cb: Cb): void;
    mkdir?(path: string, mode: number, cb: Cb): void;
    rmdir?(path: string, cb: Cb): void;
  }

  export interface FuseOptions {
    force?: boolean;
    mkdir?: boolean;
    autoUnmount?: boolean;
    autoCache?: boolean;
    fsname?: string;
    subtype?: string;
    entryTimeout?: number;
    attrTimeout?: number;
    debug?: boolean;
    allowOther?: boolean;
    /** Per-operation timeout in ms, or false for none. */
    timeout?: number | false;
  }

  class Fuse {
    constructor(mnt: string, ops: FuseOps, opts?: FuseOptions);
    readonly mnt: string;
    mount(cb: (err: Error | null) => void): void;
    unmount(cb: (err: Error | null) => void): void;
    static unmount(mnt: string, cb: (err: Error | null) => void): void;
  }

  export default Fuse;
}
