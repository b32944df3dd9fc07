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
    debug: opts.debug ?? false,
    // Our handlers answer synchronously; a per-call timer would only cost time.
    timeout: false,
  });
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
