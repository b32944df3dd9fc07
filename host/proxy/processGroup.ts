/**
 * Process groups on Linux: who is still in one, and signalling all of it. A command runs as the
 * leader of its own group, so everything it starts (unless it leaves the group on purpose, with
 * setsid) can be found and stopped.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Whether any process (a zombie too) is in group `pgid`: one kill(2), where listing the group reads all of /proc. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Pids whose process group is `pgid` (zombies excluded: they are already dead). */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  // Most commands leave nothing behind: then there is no group to look for.
  if (!groupExists(pgid)) return out;
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces or parentheses): state ppid pgrp …
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] !== 'Z' && Number(fields[2]) === pgid) out.push(Number(name));
  }
  return out;
}

/** Sends `signal` to every process of the group; false when the group is already empty. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw e;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves true once the group is empty, or false after `ms`. */
export async function waitGroupEmpty(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (groupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await sleep(10);
  }
}

/**
 * SIGTERM to the whole group, SIGKILL to what is left after `graceMs`; resolves when it is empty.
 * `spareLeader`: the SIGTERM goes to all but the group's leader (a sandboxed run's bwrap, whose end
 * would end everything in the run at once, with no grace): to each process of the group as it is
 * seen during the grace period (the command may not have started yet: bwrap is still making its
 * mounts), and bwrap ends once they have; the SIGKILL still goes to all.
 */
export async function stopGroup(pgid: number, graceMs: number, spareLeader = false): Promise<void> {
  if (spareLeader) {
    if (await termFollowers(pgid, graceMs)) return;
  } else {
    if (!signalGroup(pgid, 'SIGTERM')) return;
    if (await waitGroupEmpty(pgid, graceMs)) return;
  }
  signalGroup(pgid, 'SIGKILL');
  await waitGroupEmpty(pgid, 5_000);
}

/** SIGTERM to each process of the group but its leader, once each, as they appear; true once the group is empty, false after `ms`. */
async function termFollowers(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  const told = new Set<number>();
  for (;;) {
    const members = groupMembers(pgid);
    if (members.length === 0) return true;
    if (Date.now() >= deadline) return false;
    for (const pid of members) {
      if (pid === pgid || told.has(pid)) continue;
      told.add(pid);
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        /* gone */
      }
    }
    // Each look reads all of /proc: not every 10 ms for a whole grace period.
    await sleep(told.size === 0 ? 10 : 50);
  }
}
