/**
 * avfs's FUSE binding: the small interface avfs needs from libfuse 2, over its own N-API addon
 * (host/fuse/native/, built into dist/avfs_fuse.node by `npm run build`). It exists because the
 * off-the-shelf binding could not carry what a faithful mount needs: both times of a utimens
 * whole (nanoseconds, before 1970, UTIME_NOW and UTIME_OMIT, a change of only one of them) and
 * the calling process's uid/gid. docs/fuse.md, "The binding".
 *
 * Handlers are called on the main thread, one at a time, while a loop thread waits for their
 * answer, so a handler may answer at once or later (other requests then wait their turn or are
 * dispatched meanwhile). The Buffer handed to read/write is the handler's until it answers: copy
 * out of a write's what must outlive the call; a read fills its first `len` bytes.
 */
import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { ADDON_FILE, addonCandidates, addonFile, loadNativeAddon } from './addon';
import { lazyUnmount } from './registry';

/** The process whose call a request is (fuse_get_context: fsuid, fsgid, thread id). */
export interface FuseCaller {
  uid: number;
  gid: number;
  pid: number;
}

/** A time set by utimens: nanoseconds since the epoch, or UTIME_NOW / UTIME_OMIT. */
export type FuseTime = bigint | 'now' | 'omit';

export interface FuseStat {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  nlink: number;
  ino: number;
  rdev?: number;
  blksize?: number;
  blocks?: number;
  /** Nanoseconds since the epoch (negative before 1970). */
  atime: bigint;
  mtime: bigint;
  ctime: bigint;
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

/** Every callback takes 0 or a negative errno first; read and write answer a byte count instead. */
export type Cb = (err: number) => void;
export type CbV<T> = (err: number, value?: T) => void;

/**
 * The operations a mount serves (an operation left out answers ENOSYS, or libfuse's default).
 * Each handler also gets the calling process last, for those that need it.
 */
export interface FuseOps {
  init?(cb: Cb, caller: FuseCaller): void;
  statfs?(path: string, cb: CbV<FuseStatfs>, caller: FuseCaller): void;
  getattr?(path: string, cb: CbV<FuseStat>, caller: FuseCaller): void;
  fgetattr?(path: string, fd: number, cb: CbV<FuseStat>, caller: FuseCaller): void;
  access?(path: string, mode: number, cb: Cb, caller: FuseCaller): void;
  /** `stats` need only `ino` and `mode` (the type reported to readdir callers). */
  readdir?(path: string, cb: (err: number, names?: string[], stats?: Array<Pick<FuseStat, 'ino' | 'mode'>>) => void, caller: FuseCaller): void;
  readlink?(path: string, cb: CbV<string>, caller: FuseCaller): void;
  open?(path: string, flags: number, cb: CbV<number>, caller: FuseCaller): void;
  create?(path: string, mode: number, cb: CbV<number>, caller: FuseCaller): void;
  read?(path: string, fd: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void, caller: FuseCaller): void;
  write?(path: string, fd: number, buf: Buffer, len: number, pos: number, cb: (n: number) => void, caller: FuseCaller): void;
  flush?(path: string, fd: number, cb: Cb, caller: FuseCaller): void;
  fsync?(path: string, datasync: number, fd: number, cb: Cb, caller: FuseCaller): void;
  fsyncdir?(path: string, datasync: number, fd: number, cb: Cb, caller: FuseCaller): void;
  release?(path: string, fd: number, cb: Cb, caller: FuseCaller): void;
  truncate?(path: string, size: number, cb: Cb, caller: FuseCaller): void;
  ftruncate?(path: string, fd: number, size: number, cb: Cb, caller: FuseCaller): void;
  /** Either time may be 'omit' (leave it) or 'now' (the server's clock): touch -m, tar x. */
  utimens?(path: string, atime: FuseTime, mtime: FuseTime, cb: Cb, caller: FuseCaller): void;
  /** `mode` carries the file type (S_IFIFO, S_IFSOCK, …); `dev` the device number. */
  mknod?(path: string, mode: number, dev: number, cb: Cb, caller: FuseCaller): void;
  chmod?(path: string, mode: number, cb: Cb, caller: FuseCaller): void;
  /** An id of 0xffffffff means "leave it". */
  chown?(path: string, uid: number, gid: number, cb: Cb, caller: FuseCaller): void;
  unlink?(path: string, cb: Cb, caller: FuseCaller): void;
  rename?(src: string, dest: string, cb: Cb, caller: FuseCaller): void;
  link?(src: string, dest: string, cb: Cb, caller: FuseCaller): void;
  symlink?(target: string, path: string, cb: Cb, caller: FuseCaller): void;
  mkdir?(path: string, mode: number, cb: Cb, caller: FuseCaller): void;
  rmdir?(path: string, cb: Cb, caller: FuseCaller): void;
}

export interface MountOptions {
  /** Shown as the source in mountinfo (`avfs:<vault>`); commas become underscores. */
  source: string;
  /** The mount's type is `fuse.<subtype>` (default `avfs`). */
  subtype?: string;
  /** Remove the mount when the serving process dies (a fusermount watchdog). */
  autoUnmount?: boolean;
  /** Seconds the kernel may cache names and attributes. */
  entryTimeout?: number;
  attrTimeout?: number;
  /** Keep the page cache across opens while a file's mtime and size are unchanged. */
  autoCache?: boolean;
  /**
   * Let users other than the mounter in (`allow_other`); the kernel then checks every access
   * against the mode bits (`default_permissions`, always on). Non-root mounters need
   * `user_allow_other` in /etc/fuse.conf.
   */
  allowOther?: boolean;
  /** libfuse's request trace on stderr. */
  debug?: boolean;
}

export interface MountedFs {
  readonly mountpoint: string;
  /** Stops serving and detaches the mount; resolves once the loop thread has ended. */
  unmount(): Promise<void>;
}

/** The libfuse options every avfs mount (and the bench's in-memory ceiling) uses. */
export function libfuseOptions(opts: MountOptions): string {
  return [
    `fsname=${opts.source.replace(/,/g, '_')}`,
    `subtype=${opts.subtype ?? 'avfs'}`,
    // 128 KiB writes instead of 4 KiB.
    'big_writes',
    // Our inode numbers reach stat(), so hard links share one.
    'use_ino',
    'default_permissions',
    `entry_timeout=${opts.entryTimeout ?? 1}`,
    `attr_timeout=${opts.attrTimeout ?? 1}`,
    ...((opts.autoUnmount ?? true) ? ['auto_unmount'] : []),
    ...((opts.autoCache ?? true) ? ['auto_cache'] : []),
    ...(opts.allowOther ? ['allow_other'] : []),
    ...(opts.debug ? ['debug'] : []),
  ].join(',');
}

/** The addon's interface (host/fuse/native/addon.c). */
interface NativeHandle {
  reply(seq: number, result: number, a?: unknown, b?: unknown): boolean;
  unmount(): void;
}
type Dispatch = (op: number, seq: number, uid: number, gid: number, pid: number, ...args: unknown[]) => void;
interface Addon {
  /** A pipe: [read end, write end], both close-on-exec. */
  pipe(): [number, number];
  /** Operation names by op code; the code `ops.length` means the loop has ended. */
  ops: string[];
  mount(mountpoint: string, options: string, implemented: string[], dispatch: Dispatch): NativeHandle;
}

export { ADDON_FILE };
const EIO = -5;

/** The compiled addon, or a MountError saying how to build it or why it does not load. */
function loadAddon(): Addon {
  const file = addonFile();
  if (!file) {
    throw new AvfsError(
      'MountError',
      `avfs's FUSE binding (${ADDON_FILE}) is not built: run \`npm run build\` in the avfs checkout (it needs a C compiler and libfuse 2's headers: apt-get install build-essential libfuse-dev)`,
      { reason: 'binding_missing', looked_in: addonCandidates() },
    );
  }
  try {
    return loadNativeAddon<Addon>()!;
  } catch (e) {
    // Most often libfuse.so.2 is missing: the binding links it, and only a mount loads the binding.
    throw new AvfsError('MountError', `avfs's FUSE binding (${file}) does not load: ${(e as Error).message} (a missing libfuse.so.2 is installed with apt-get install libfuse2; a damaged binding is rebuilt by npm run build)`, {
      reason: 'binding_unloadable',
    });
  }
}

/** Mounts `ops` at `mountpoint`; resolves once the kernel has started talking to the file system. */
export async function mountFuse(mountpointArg: string, ops: FuseOps, opts: MountOptions): Promise<MountedFs> {
  const native = loadAddon();
  // Absolute: the loop thread detaches it by this path at the end, whatever the cwd is by then.
  const mountpoint = resolve(mountpointArg);
  // A mount left by a server that died ("Transport endpoint is not connected") is cleared first.
  await stat(mountpoint).catch(async (e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOTCONN') await lazyUnmount(mountpoint);
  });
  const handlers = native.ops.map((name) => (ops as Record<string, unknown>)[name] as ((...a: unknown[]) => void) | undefined);
  const implemented = native.ops.filter((_, i) => typeof handlers[i] === 'function');
  const INIT = native.ops.indexOf('init');
  const END = native.ops.length;

  let handle: NativeHandle | undefined;
  let ended: number | undefined;
  const onEnd: Array<() => void> = [];
  return new Promise<MountedFs>((resolve, reject) => {
    const mounted: MountedFs = {
      mountpoint,
      unmount: () =>
        new Promise<void>((res) => {
          if (ended !== undefined) return res();
          onEnd.push(res);
          handle?.unmount();
        }),
    };
    const dispatch: Dispatch = (op, seq, uid, gid, pid, ...args) => {
      if (op === END) {
        ended = args[0] as number;
        reject(new Error(`the FUSE loop ended before the kernel's first request${ended ? ` (errno ${ended})` : ''}`));
        for (const f of onEnd.splice(0)) f();
        return;
      }
      const answer = (result: number, a?: unknown, b?: unknown) => handle!.reply(seq, result, a, b);
      const caller: FuseCaller = { uid, gid, pid };
      try {
        if (op === INIT) {
          // The kernel has started talking to us.
          resolve(mounted);
          if (ops.init) ops.init(answer, caller);
          else answer(0);
          return;
        }
        handlers[op]!.call(ops, ...args, answer, caller);
      } catch (e) {
        answer(EIO);
        throw e;
      }
    };
    try {
      handle = native.mount(mountpoint, libfuseOptions(opts), implemented, dispatch);
    } catch (e) {
      reject(new Error(`cannot mount at ${mountpoint}: ${(e as Error).message}`));
    }
  });
}
