/**
 * A MountSession serves one vault at one mountpoint, in the process that holds it. Its lifecycle
 * is explicit:
 *
 *   unmounted ──mount()──▶ mounting ──ready──▶ mounted ──unmount()──▶ unmounting ──▶ unmounted
 *                              └───────────── failure ────────────────────────────────┘
 *
 * `mount()` reports mounted only after the kernel lists the mount and a stat of the mountpoint
 * (asynchronous: never touch one's own mount synchronously) returns the vault's root inode.
 * `unmount()` is idempotent. A stale mount left by a killed server is cleared first (and
 * `auto_unmount` makes the kernel drop the mount when this process dies).
 */
import { readFileSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { AvfsHome } from '../store/home';
import { ROOT_INO } from '../store/schema';
import { VERSION } from '../version';
import type { Vault } from '../store/vault';
import { FileIo } from '../vfs/handles';
import { Vfs } from '../vfs/vfs';
import { type MountedFs, mountFuse } from './binding';
import { createVaultOps, type VaultOps } from './ops';
import { lazyUnmount, mountEntry, type MountRecord, MountRegistry, probe } from './registry';

/** A one-shot mount starts its background WAL checkpoints only if its command runs this long. */
const ONE_SHOT_CHECKPOINTS_AFTER_MS = 1_000;

export type MountState = 'unmounted' | 'mounting' | 'mounted' | 'unmounting';

const TRANSITIONS: Record<MountState, readonly MountState[]> = {
  unmounted: ['mounting'],
  mounting: ['mounted', 'unmounted'],
  mounted: ['unmounting'],
  unmounting: ['unmounted'],
};

export function canMoveMount(from: MountState, to: MountState): boolean {
  return TRANSITIONS[from].includes(to);
}

export interface MountSessionOptions {
  home: AvfsHome;
  vault: string;
  mountpoint: string;
  readonly?: boolean;
  /** Seconds the kernel may cache names and attributes (default 1). */
  cacheSeconds?: number;
  /**
   * Let other users than the mounter use the mount (`allow_other`), with the kernel checking
   * each access against owner, group and mode bits. Non-root mounters need `user_allow_other`
   * in /etc/fuse.conf.
   */
  allowOther?: boolean;
  /**
   * The mount serves one command and goes (a one-shot `proxy exec`): the background WAL
   * checkpoints (a worker thread) start only if the command runs past ONE_SHOT_CHECKPOINTS_AFTER_MS
   * (a short command would spend more on the thread than it takes), and the sweep of stale
   * mounts of other homes (a `stat` process per avfs mount on the machine) is left to mount
   * servers and `avfs mounts`. Stale records of this home, and a stale mount at this
   * mountpoint, are still cleared.
   */
  oneShot?: boolean;
  log?: (line: string) => void;
}

const mountError = (mountpoint: string, reason: string, message: string) =>
  new AvfsError('MountError', `cannot mount at ${mountpoint}: ${message}`, { mountpoint, reason });

/**
 * Checks that `mountpoint` can take a mount: an existing, empty directory that nothing is mounted
 * on. A stale avfs mount there (its server died) is cleared. Throws MountError or Busy.
 */
export async function checkMountpoint(mountpoint: string): Promise<string> {
  const mp = resolve(mountpoint);
  const entry = mountEntry(mp);
  if (entry) {
    const p = await probe(mp, 2000);
    if (p.probe === 'stale' && entry.fstype.startsWith('fuse')) {
      await lazyUnmount(mp);
    } else {
      throw new AvfsError('Busy', `mountpoint is busy: ${entry.fstype} ${entry.source} is mounted on ${mp}`, {
        mountpoint: mp,
        fstype: entry.fstype,
        source: entry.source,
      });
    }
  }
  let st;
  try {
    st = await stat(mp);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? 'error';
    throw mountError(mp, code === 'ENOENT' ? 'missing' : code, code === 'ENOENT' ? 'the directory does not exist' : `${code}`);
  }
  if (!st.isDirectory()) throw mountError(mp, 'not_a_directory', 'not a directory');
  if ((await readdir(mp)).length > 0) throw mountError(mp, 'not_empty', 'the directory is not empty');
  return mp;
}

/**
 * fusermount lets a non-root user mount with `allow_other` only when /etc/fuse.conf says
 * `user_allow_other`: say so before trying, instead of a failed mount.
 */
function checkAllowOther(mountpoint: string, conf = '/etc/fuse.conf'): void {
  if (typeof process.getuid !== 'function' || process.getuid() === 0) return;
  let text = '';
  try {
    text = readFileSync(conf, 'utf8');
  } catch {
    /* no file: the option is not set */
  }
  if (!/^\s*user_allow_other\s*$/m.test(text)) {
    throw mountError(mountpoint, 'allow_other_not_permitted', `--allow-other needs a line "user_allow_other" in ${conf} (or mounting as root)`);
  }
}

export class MountSession {
  private _state: MountState = 'unmounted';
  private fs: MountedFs | undefined;
  private vault: Vault | undefined;
  private vops: VaultOps | undefined;
  private unmounting: Promise<boolean> | undefined;
  readonly registry: MountRegistry;
  readonly mountpoint: string;
  private started = '';
  private execSocket: string | undefined;
  private checkpointsLater: NodeJS.Timeout | undefined;

  constructor(private readonly opts: MountSessionOptions) {
    this.registry = new MountRegistry(opts.home);
    this.mountpoint = resolve(opts.mountpoint);
  }

  /** The name of the vault served. */
  get vaultName(): string {
    return this.opts.vault;
  }

  get state(): MountState {
    return this._state;
  }

  /** The open handles (for tests and status). */
  get openFiles(): number {
    return this.vops?.files.size ?? 0;
  }

  private move(to: MountState): void {
    if (!canMoveMount(this._state, to)) {
      throw new AvfsError('MountError', `mount of ${this.mountpoint}: cannot go from ${this._state} to ${to}`, { state: this._state });
    }
    this._state = to;
  }

  private log(line: string): void {
    this.opts.log?.(`${new Date().toISOString()} ${line}`);
  }

  record(state: MountRecord['state']): MountRecord {
    return {
      vault: this.opts.vault,
      mountpoint: this.mountpoint,
      readonly: !!this.opts.readonly,
      allow_other: !!this.opts.allowOther,
      pid: process.pid,
      started: this.started,
      state,
      log: this.registry.logOf(this.mountpoint),
      ...(this.execSocket !== undefined ? { exec_socket: this.execSocket, version: VERSION } : {}),
    };
  }

  /** Names the exec endpoint this process serves for the mount in its record (host/proxy/mountExec.ts). */
  announceExec(socket: string): MountRecord {
    if (this._state !== 'mounted') throw new AvfsError('MountError', `mount of ${this.mountpoint} is ${this._state}`, { state: this._state });
    this.execSocket = socket;
    const rec = this.record('mounted');
    this.registry.write(rec);
    return rec;
  }

  async mount(): Promise<MountRecord> {
    this.move('mounting');
    this.started = new Date().toISOString();
    try {
      await this.registry.prune({ foreign: !this.opts.oneShot });
      await checkMountpoint(this.mountpoint);
      if (this.opts.allowOther) checkAllowOther(this.mountpoint);
      const vault = (this.vault = this.opts.home.open(this.opts.vault, { readonly: !!this.opts.readonly, surface: 'fuse' }));
      // The server lives as long as the mount: keep WAL checkpoint syncs off the FUSE request path.
      if (!this.opts.oneShot) vault.startBackgroundCheckpoints();
      else {
        this.checkpointsLater = setTimeout(() => this.vault?.startBackgroundCheckpoints(), ONE_SHOT_CHECKPOINTS_AFTER_MS);
        this.checkpointsLater.unref();
      }
      const io = new FileIo(new Vfs(vault));
      const others = this.registry.records().filter((r) => r.pid !== process.pid && r.vault === this.opts.vault && this.registry.isLive(r));
      if (others.length === 0) {
        const swept = io.sweepOrphans();
        if (swept > 0) this.log(`freed ${swept} orphaned inodes left by an earlier mount`);
      }
      this.vops = createVaultOps(io, {
        error: (op, path, e) => this.log(`${op} ${path}: ${e.kind}: ${e.message}`),
      });
      this.registry.write(this.record('mounting'));
      const cache = this.opts.cacheSeconds ?? 1;
      this.fs = await mountFuse(this.mountpoint, this.vops.ops, {
        source: `avfs:${this.opts.vault}`,
        autoUnmount: true,
        entryTimeout: cache,
        attrTimeout: cache,
        allowOther: !!this.opts.allowOther,
      });
      await this.waitReady();
      this.move('mounted');
      const rec = this.record('mounted');
      this.registry.write(rec);
      this.log(`mounted ${this.opts.vault} at ${this.mountpoint}${this.opts.readonly ? ' (read-only)' : ''}`);
      return rec;
    } catch (e) {
      await this.teardown();
      this._state = 'unmounted';
      if (e instanceof AvfsError) throw e;
      throw mountError(this.mountpoint, 'mount_failed', (e as Error).message);
    }
  }

  /**
   * Ready when the kernel lists the mount and the mountpoint's root answers with our root inode.
   * The stat is this process's own, asynchronous (this thread stays free to answer it): the mount
   * is the one this process just made and serves, so it cannot hang on another server, and a
   * `stat` child (what probe() runs for mounts of other processes) cost a process start per mount.
   */
  private async waitReady(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const entry = mountEntry(this.mountpoint);
      if (entry?.fstype === 'fuse.avfs') {
        const p = await stat(this.mountpoint).then(
          (st) => ({ ino: st.ino, code: '' }),
          (e: NodeJS.ErrnoException) => ({ ino: undefined, code: e.code ?? 'error' }),
        );
        if (p.ino === ROOT_INO) return;
        last = `stat ${p.code || 'ok'} ino ${p.ino ?? '-'}`;
      } else {
        last = 'not in the mount table yet';
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    throw mountError(this.mountpoint, 'not_ready', `the mount did not become ready (${last})`);
  }

  /** Unmounts (idempotent): persists buffered writes, unmounts, closes the vault. */
  unmount(): Promise<boolean> {
    if (this._state === 'unmounted') return Promise.resolve(false);
    if (this.unmounting) return this.unmounting;
    this.move('unmounting');
    this.unmounting = (async () => {
      try {
        this.registry.write(this.record('unmounting'));
      } catch {
        /* the home may be gone */
      }
      await this.teardown();
      this.move('unmounted');
      this.unmounting = undefined;
      this.log(`unmounted ${this.mountpoint}`);
      return true;
    })();
    return this.unmounting;
  }

  /** Whether the kernel still lists this mount (a user may have run `fusermount -u`). */
  stillMounted(): boolean {
    return mountEntry(this.mountpoint)?.fstype === 'fuse.avfs';
  }

  private async teardown(): Promise<void> {
    const flush = () => {
      try {
        this.vops?.flushAll();
      } catch (e) {
        this.log(`flushing buffered writes failed: ${(e as Error).message}`);
      }
    };
    flush();
    if (this.fs) {
      try {
        await this.fs.unmount();
      } catch (e) {
        this.log(`unmount failed (${(e as Error).message}); detaching lazily`);
        await lazyUnmount(this.mountpoint);
      }
      this.fs = undefined;
    }
    flush();
    clearTimeout(this.checkpointsLater);
    this.vault?.close();
    this.vault = undefined;
    this.vops = undefined;
    try {
      this.registry.remove(this.mountpoint, process.pid);
    } catch {
      /* the home may be gone */
    }
  }
}
