// Processes as /proc shows them: process groups (to stop code-server's) and the memory of a
// process tree (the runner's summary).
import { readdirSync, readFileSync } from 'node:fs';

/** Every process now: pid, parent, process group and command name. */
function processes() {
  const all = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // The command name (field 2) may hold spaces and parentheses: parse after its closing one.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const [, ppid, pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      all.push({ pid: Number(name), ppid: Number(ppid), pgid: Number(pgid), comm });
    } catch {
      // The process exited while we looked.
    }
  }
  return all;
}

/** The processes in process group `pgid` (zombies included until they are reaped). */
export function groupMembers(pgid) {
  return processes().filter((p) => p.pgid === pgid);
}

function children() {
  const byParent = new Map();
  for (const { pid, ppid } of processes()) {
    if (!byParent.has(ppid)) byParent.set(ppid, []);
    byParent.get(ppid).push(pid);
  }
  return byParent;
}

function kib(text, field) {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/**
 * Memory of `rootPid` and its descendants now, in bytes: rss (shared pages counted in every process)
 * and pss (shared pages split between the processes sharing them; the honest total).
 */
export function treeMemory(rootPid) {
  const byParent = children();
  const pids = [rootPid];
  for (let i = 0; i < pids.length; i++) pids.push(...(byParent.get(pids[i]) ?? []));
  let rss = 0;
  let pss = 0;
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += kib(rollup, 'Rss') * 1024;
      pss += kib(rollup, 'Pss') * 1024;
    } catch {
      // Exited, or not readable.
    }
  }
  return { rss, pss, processes: pids.length };
}

/** Samples treeMemory(rootPid) every `everyMs` and keeps the peaks. */
export function peakMemory(rootPid, everyMs = 500) {
  const peak = { rss: 0, pss: 0, processes: 0 };
  const sample = () => {
    const now = treeMemory(rootPid);
    peak.rss = Math.max(peak.rss, now.rss);
    peak.pss = Math.max(peak.pss, now.pss);
    peak.processes = Math.max(peak.processes, now.processes);
  };
  const timer = setInterval(sample, everyMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
