/** Mount operations (`mount/*`): mounts are served by their own processes, never by the caller. */
import { mkdirSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { type MountRecord, MountRegistry } from '../fuse/registry';
import { startMountServer, stopMount } from '../fuse/server';
import { AvfsError } from '../protocol/errors';
import type { MountInfo } from '../protocol/methods';
import { autoMountpoint } from '../proxy/mounts';
import type { OpsTable } from './context';

export function mountInfo(r: MountRecord, live: boolean): MountInfo {
  return { vault: r.vault, mountpoint: r.mountpoint, readonly: r.readonly, allow_other: !!r.allow_other, pid: r.pid, started: r.started, state: r.state, live };
}

function absolute(field: string, value: string): string {
  if (!isAbsolute(value)) throw new AvfsError('InvalidInput', `${field} must be an absolute path, got ${JSON.stringify(value)}`, { field, value });
  return value;
}

export const mountOps = {
  'mount/list': async (ctx) => {
    const registry = new MountRegistry(ctx.home);
    const cleaned = await registry.prune();
    return { mounts: registry.records().map((r) => mountInfo(r, registry.isLive(r))), cleaned };
  },

  'mount/mount': async (ctx, p) => {
    ctx.home.resolve(p.vault);
    let mp: string;
    if (p.mountpoint !== undefined) {
      mp = absolute('mountpoint', p.mountpoint);
    } else {
      mp = autoMountpoint(ctx.home, p.vault, p.readonly, true);
      mkdirSync(mp, { recursive: true });
    }
    await new MountRegistry(ctx.home).prune();
    // The session module loads the FUSE binding, which nothing else here needs.
    const { checkMountpoint } = await import('../fuse/session');
    mp = await checkMountpoint(mp);
    const rec = await startMountServer(ctx.home, p.vault, mp, {
      readonly: p.readonly,
      allowOther: p.allow_other,
      ...(p.cache_ms !== undefined ? { cacheMs: p.cache_ms } : {}),
    });
    return mountInfo(rec, true);
  },

  'mount/unmount': (ctx, p) => stopMount(ctx.home, absolute('mountpoint', p.mountpoint), p.timeout_ms),
} satisfies Partial<OpsTable>;
