/**
 * Where a proxied command runs: a mount of its vault, leased for one call. A live mount of the
 * vault (kept by an earlier call, or made with `avfs mount`) is reused; otherwise one is made:
 * served by this process for a one-shot CLI call (cheapest: no second process), or by a detached
 * mount server when it is to be kept, or when this process must not serve FUSE (the host).
 *
 * The barrier is the mount's own (fsync of its root, see host/fuse/ops.ts): it returns once every
 * write the kernel handed to the server is committed to the vault, whichever process serves it.
 */
import { rmdirSync, rmSync, readFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { lazyUnmount, mountEntry, type MountRecord, MountRegistry, pidAlive } from '../fuse/registry';
import { startMountServer, stopMount } from '../fuse/server';
import type { AvfsHome } from '../store/home';
import type { GuardedMount } from '../protocol/guard';
import { fitsCall } from './mountFit';
import { makePrivateDir, makePrivateDirOnce, writePrivateFile } from '../store/privateFs';

export interface MountLease {
  mountpoint: string;
  /** A live mount was there already. */
  reused: boolean;
  /** The mount stays up after the call. */
  kept: boolean;
  /** Resolves once every write made through the mount so far is committed to the vault. */
  barrier(): Promise<void>;
  /** Ends the lease: unmounts what this lease mounted and does not keep. */
  release(): Promise<void>;
}

export interface MountPlan {
  vault: string;
  readonly: boolean;
  allowOther: boolean;
  mountpoint: string;
  /** A live mount of the vault is there: use it. */
  live: boolean;
  /** The directory is avfs's own (made for this mount, removed with it). */
  auto: boolean;
}

let oneShot = 0;

/**
 * Where an automatic mount of `vault` lives, under the avfs home: one directory per vault and
 * mode for a kept mount; one per run for a one-shot mount (several can run at once in a host).
 */
export function autoMountpoint(home: AvfsHome, vault: string, readonly: boolean, keep: boolean): string {
  const base = join(home.dir, 'mnt');
  const name = `${vault}${readonly ? '.ro' : ''}`;
  return join(base, keep ? name : `${name}.exec-${process.pid}-${++oneShot}`);
}

/**
 * A live mount of `vault` that a call can use: same mode (read-only, and open to other users
 * when that is asked for), not another run's one-shot mount, at `mountpoint` if one is given.
 */
export function findLiveMount(home: AvfsHome, vault: string, readonly: boolean, mountpoint?: string, allowOther = false): MountRecord | undefined {
  const reg = new MountRegistry(home);
  const want = { vault, readonly, allowOther, ...(mountpoint !== undefined ? { mountpoint } : {}) };
  return reg
    .records()
    .filter((r) => fitsCall(r, want))
    .find((r) => reg.isLive(r));
}

async function barrierAt(mountpoint: string): Promise<void> {
  const fh = await open(mountpoint, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One process at a time makes the mount for a mountpoint: two calls that both find none would
 * otherwise race to mount the same directory. The lock is a directory holding the owner's pid;
 * a lock whose owner died is taken over.
 */
async function withMountLock<T>(home: AvfsHome, mountpoint: string, fn: () => Promise<T>): Promise<T> {
  const reg = new MountRegistry(home);
  makePrivateDir(reg.dir);
  const lock = join(reg.dir, `${reg.idOf(mountpoint)}.lock`);
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      makePrivateDirOnce(lock);
      writePrivateFile(join(lock, 'pid'), String(process.pid));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = NaN;
      try {
        owner = Number(readFileSync(join(lock, 'pid'), 'utf8'));
      } catch {
        /* being created or removed */
      }
      if (Number.isInteger(owner) && owner > 0 && !pidAlive(owner)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new AvfsError('Busy', `another call has been mounting ${mountpoint} for a minute`, { mountpoint });
      else await sleep(25);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Decides where a call will run, without mounting anything: a live mount of the vault (at the
 * given mountpoint, if one is given), else the given or automatic directory. The policy judges
 * the command against this path before anything is mounted.
 */
export function planMount(home: AvfsHome, req: { vault: string; readonly: boolean; allowOther: boolean; keep: boolean; mountpoint?: string }): MountPlan {
  const live = findLiveMount(home, req.vault, req.readonly, req.mountpoint, req.allowOther);
  if (live) return { vault: req.vault, readonly: req.readonly, allowOther: req.allowOther, mountpoint: live.mountpoint, live: true, auto: false };
  return {
    vault: req.vault,
    readonly: req.readonly,
    allowOther: req.allowOther,
    mountpoint: resolve(req.mountpoint ?? autoMountpoint(home, req.vault, req.readonly, req.keep)),
    live: false,
    auto: req.mountpoint === undefined,
  };
}

export async function leaseMount(home: AvfsHome, plan: MountPlan, opts: { keep: boolean; inProcess: boolean }): Promise<MountLease> {
  const req = { ...plan, ...opts };
  if (plan.live && findLiveMount(home, plan.vault, plan.readonly, plan.mountpoint, plan.allowOther)) return reusedLease(plan.mountpoint);
  const mountpoint = plan.mountpoint;
  if (plan.auto) makePrivateDir(mountpoint);
  const removeDir = () => {
    if (plan.auto) removeMountDir(mountpoint);
  };

  /** A mount this call makes: mounted now; unmounted (and its directory removed) at release unless kept. */
  const made = async (kept: boolean, mount: () => Promise<unknown>, unmount: () => Promise<unknown>): Promise<MountLease> => {
    try {
      await mount();
    } catch (e) {
      removeDir();
      throw e;
    }
    return {
      mountpoint,
      reused: false,
      kept,
      barrier: () => barrierAt(mountpoint),
      release: async () => {
        if (kept) return;
        await unmount();
        removeDir();
      },
    };
  };

  if (!req.keep && req.inProcess) {
    const { MountSession } = await import('../fuse/session');
    const session = new MountSession({ home, vault: req.vault, mountpoint, readonly: req.readonly, allowOther: req.allowOther, oneShot: true });
    return made(false, () => session.mount(), () => session.unmount());
  }

  return withMountLock(home, mountpoint, async () => {
    // Another call may have mounted it while this one waited for the lock.
    const again = findLiveMount(home, req.vault, req.readonly, mountpoint, req.allowOther);
    if (again) return reusedLease(again.mountpoint);
    return made(
      req.keep,
      () => startMountServer(home, req.vault, mountpoint, { readonly: req.readonly, allowOther: req.allowOther }),
      () => stopMount(home, mountpoint, 10_000),
    );
  });
}

/** A mount someone else made: used, never unmounted by this call. */
function reusedLease(mountpoint: string): MountLease {
  return { mountpoint, reused: true, kept: true, barrier: () => barrierAt(mountpoint), release: async () => undefined };
}

function removeMountDir(mountpoint: string): void {
  try {
    rmdirSync(mountpoint);
  } catch {
    /* busy or already gone: left for the next call */
  }
}

/**
 * Ends a one-shot mount whose run's owner died, as the run would have (host/proxy/settle.ts): its
 * server is stopped (it unmounts and leaves); a mount the dead owner served itself is detached
 * (fusermount's auto_unmount has usually done it) and its record dropped, without signalling the
 * pid it names (the owner is dead: that pid may be another process's by now). Then its directory goes.
 */
export async function releaseOrphanedMount(home: AvfsHome, mount: GuardedMount, ownerPid: number): Promise<void> {
  if (mount.served_by_owner) {
    if (mountEntry(mount.mountpoint)?.fstype.startsWith('fuse')) await lazyUnmount(mount.mountpoint);
    new MountRegistry(home).remove(mount.mountpoint, ownerPid);
  } else {
    await stopMount(home, mount.mountpoint, 10_000);
  }
  if (mount.remove_dir) removeMountDir(mount.mountpoint);
}
