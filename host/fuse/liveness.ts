/**
 * Whether a mount is being served now: its process runs and the kernel lists it as avfs's. Apart
 * from registry.ts (no zod, no store) because a CLI call checks it at start, before it loads
 * anything else (host/cli/liveMountClient.ts). Nothing here touches a mountpoint (only the folder above it).
 */
import { readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

export interface MountInfoEntry {
  mountpoint: string;
  fstype: string;
  source: string;
}

/** The process's mount table (/proc/self/mountinfo), octal escapes undone; `only`: of the file system types it takes. */
export function mountTable(only?: (fstype: string) => boolean): MountInfoEntry[] {
  let text: string;
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  const out: MountInfoEntry[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    const [left, right] = line.split(' - ');
    const l = left?.split(' ') ?? [];
    const r = right?.split(' ') ?? [];
    if (l[4] === undefined || r[0] === undefined || (only && !only(r[0]))) continue;
    out.push({ mountpoint: unescape(l[4]), fstype: r[0], source: unescape(r[1] ?? '') });
  }
  return out;
}

/**
 * A mountpoint as the kernel lists it: the links of the folders above it resolved (an avfs home
 * under a home that is a link), never the mountpoint itself, which a hung server would block.
 */
export function kernelPath(mountpoint: string): string {
  const mp = resolve(mountpoint);
  try {
    return join(realpathSync.native(dirname(mp)), basename(mp));
  } catch {
    return mp;
  }
}

export function mountEntry(mountpoint: string): MountInfoEntry | undefined {
  const mp = kernelPath(mountpoint);
  const all = mountTable().filter((e) => e.mountpoint === mp);
  return all[all.length - 1];
}

/** Whether `pid` runs (a zombie waiting for a reaper that is slow to come counts as gone). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return st.slice(st.lastIndexOf(')') + 2, st.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** A mount record's server runs and the kernel lists its mount (the record's fields that tell). */
export function servedNow(rec: { pid: number; mountpoint: string }): boolean {
  return pidAlive(rec.pid) && mountEntry(rec.mountpoint)?.fstype === 'fuse.avfs';
}
