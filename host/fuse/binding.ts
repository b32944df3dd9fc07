/**
 * The small interface avfs needs from a FUSE binding, over fuse-native (libfuse 2, N-API).
 * Never calls `Fuse.configure()` (it rewrites system files). Options fuse-native has no field for
 * (big_writes, use_ino) ride along in the fsname option, which is passed through verbatim.
 */
import Fuse, { type FuseOps } from 'fuse-native';

export type { FuseOps, FuseStat, FuseStatfs } from 'fuse-native';

export interface MountOptions {
  /** Shown as the source in mountinfo (`avfs:<vault>`); must not contain commas. */
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
  debug?: boolean;
}

export interface MountedFs {
  readonly mountpoint: string;
  unmount(): Promise<void>;
}

/** The libfuse options every avfs mount (and the bench's in-memory ceiling) uses. */
export function libfuseOptions(opts: MountOptions): string {
  // big_writes: 128 KiB writes instead of 4 KiB; use_ino: our inode numbers reach stat(), so
  // hard links share one.
  // The timeouts ride here too: fuse-native drops a timeout of 0 (falsy) from its own options.
  return [
    opts.source.replace(/,/g, '_'),
    'big_writes',
    'use_ino',
    'default_permissions',
    `entry_timeout=${opts.entryTimeout ?? 1}`,
    `attr_timeout=${opts.attrTimeout ?? 1}`,
  ].join(',');
}

export function mountFuse(mountpoint: string, ops: FuseOps, opts: MountOptions): Promise<MountedFs> {
  const fuse = new Fuse(mountpoint, ops, {
    fsname: libfuseOptions(opts),
    subtype: opts.subtype ?? 'avfs',
    force: true,
    autoUnmount: opts.autoUnmount ?? true,
    autoCache: opts.autoCache ?? true,
    allowOther: opts.allowOther ?? false,
    debug: opts.debug ?? false,
    // Our handlers answer synchronously; a per-call timer would only cost time.
    timeout: false,
  });
  carryModificationTime(fuse);
  return new Promise((resolve, reject) => {
    fuse.mount((e) => {
      if (e) return reject(e);
      let done: Promise<void> | undefined;
      resolve({
        mountpoint: fuse.mnt,
        unmount: () =>
          (done ??= new Promise<void>((res, rej) => {
            fuse.unmount((ue) => (ue ? rej(ue) : res()));
          })),
      });
    });
  });
}

/**
 * fuse-native 2.2.6 hands `utimens` the access time twice (fuse-native.c passes `l->atime` as both
 * arguments), so the modification time a caller sets never reaches JS through the arguments. The
 * native side has it, though: each request's thread-local struct (`fuse_thread_locals_t`) is the
 * Buffer the binding passes its JS handler first, with `size_t atime; size_t mtime;` (milliseconds)
 * side by side. This reads the modification time from there and hands it on in place of the
 * duplicate. It is used only when the struct is the one expected (its size on 64-bit Linux, the
 * opcode field, and the access time equal to the argument); otherwise both times stay the access
 * time, as the binding has them. No file of the binding is changed.
 */
const UTIMENS_OP = 12;
const LOCALS_SIZE = 360;
const LOCALS_OP = 8;
const LOCALS_ATIME = 104;
const LOCALS_MTIME = 112;

type NativeHandler = (this: unknown, locals: Buffer, op: number, ...args: unknown[]) => unknown;

function mtimeFromLocals(locals: unknown, op: number, atimeLow: number, atimeHigh: number): [number, number] | undefined {
  if (!Buffer.isBuffer(locals) || locals.length !== LOCALS_SIZE || op !== UTIMENS_OP) return undefined;
  if (locals.readUInt32LE(LOCALS_OP) !== UTIMENS_OP) return undefined;
  if (locals.readUInt32LE(LOCALS_ATIME) !== atimeLow || locals.readUInt32LE(LOCALS_ATIME + 4) !== atimeHigh) return undefined;
  return [locals.readUInt32LE(LOCALS_MTIME), locals.readUInt32LE(LOCALS_MTIME + 4)];
}

function carryModificationTime(fuse: Fuse): void {
  const handlers = (fuse as unknown as { _handlers?: Array<NativeHandler | undefined> })._handlers;
  const original = handlers?.[UTIMENS_OP];
  if (!handlers || typeof original !== 'function') return;
  handlers[UTIMENS_OP] = function (this: unknown, locals: Buffer, op: number, ...args: unknown[]) {
    const [path, aLow, aHigh] = args as [string, number, number];
    const m = mtimeFromLocals(locals, op, aLow, aHigh);
    if (!m) return original.call(this, locals, op, ...args);
    return original.call(this, locals, op, path, aLow, aHigh, m[0], m[1]);
  };
}
