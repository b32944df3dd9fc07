/**
 * A run's sandbox plan kept between processes: `<avfs home>/sandbox-plan.json`, beside the probe's
 * answer (probe.ts) and sandbox.json, hidden from runs as they are. The plan's part that reads the
 * file system (what of the home and the tools' folders is shown, what is hidden again: PlanPart)
 * looks at ~150 paths and takes 3-5 ms of a cold CLI call; kept, a call checks the state of the
 * folders and files those answers came from (one lstat each, ~30) and uses it.
 *
 * Reused only when nothing it depends on can have changed:
 * - the same inputs (the key): home, avfs home, the settings' allow-list, the PATH and tool
 *   variables of the caller, the temporary folder, the user, the mount table (a mount over a
 *   folder changes what is there without touching the folder), and this build of avfs;
 * - every folder whose entries an answer came from (each link followed, each missing path), every
 *   folder listed and every file read has the same device, inode, mode, links, size, mtime and
 *   ctime: an entry made, removed, renamed or replaced changes its folder's times, a file written
 *   its own, and ctime cannot be set back by anyone;
 * - it never met the run's mount (a plan that did depends on where that is), and no path it
 *   looked at is inside this run's mount.
 * A plan is kept only when none of those times is within RACY_MS of when it was made (a change in
 * the same tick of the kernel's clock would leave the same time behind).
 */
import { lstatSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PlanInput, PlanPart } from './plan';
import { normPath, recorded, within } from './secrets';
import { TOOL_VARS } from './toolFolders';

export const PLAN_CACHE_FILE = 'sandbox-plan.json';
/** Bumped when what a plan holds changes shape. */
const FORMAT = 1;
/** A folder or file changed this close to the plan's start keeps it from being kept. */
const RACY_MS = 100;

interface Kept {
  key: string;
  part: PlanPart;
  /** [path, its state] of each path the answers depend on. */
  deps: Array<[string, string]>;
  looked: string[];
}

/** The state that says a path is unchanged, and its newest time (ms). */
function stateOf(p: string): { state: string; newest: number } {
  try {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return { state: '-', newest: 0 };
    return { state: `${st.dev}:${st.ino}:${st.mode}:${st.nlink}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`, newest: Math.max(st.mtimeMs, st.ctimeMs) };
  } catch (e) {
    return { state: `!${(e as NodeJS.ErrnoException).code ?? ''}`, newest: 0 };
  }
}

/** This build of avfs: its code file's identity (a plan made by other code is not used). */
let build: string | undefined;
const buildStamp = (): string => {
  if (build === undefined) {
    try {
      const st = statSync(__filename);
      build = `${__filename}:${st.size}:${st.mtimeMs}`;
    } catch {
      build = __filename;
    }
  }
  return build;
};

function keyOf(i: PlanInput): string {
  const avfsHome = normPath(i.avfsHome);
  // The avfs home's own mounts (each one-shot run's) are never looked into, and come and go.
  const inHome = `${avfsHome}/`;
  const mounts = mountLines().filter((l) => !(l.split(' ', 5)[4] ?? '').startsWith(inHome));
  const env = ['PATH', 'XDG_RUNTIME_DIR', ...TOOL_VARS].map((v) => i.env[v] ?? null);
  return JSON.stringify([FORMAT, buildStamp(), process.getuid?.() ?? -1, i.home, avfsHome, i.settings.home_read_only, env, tmpdir(), mounts]);
}

/** The kernel's mount table, a line per mount (each names its place, file system and source). */
function mountLines(): string[] {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8').split('\n');
  } catch {
    return [];
  }
}

function readKept(file: string): Kept | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Kept;
  } catch {
    return undefined;
  }
}

const strings = (a: unknown): boolean => Array.isArray(a) && a.every((x) => typeof x === 'string');
const pathOrNull = (a: unknown): boolean => a === null || typeof a === 'string';

/** A part as planPart() makes it (a file edited by hand, or cut short, is planned over). */
function wellFormed(p: Partial<PlanPart> | undefined): boolean {
  return (
    typeof p === 'object' && p !== null && pathOrNull(p.home) && pathOrNull(p.homeAt) && typeof p.homeLink === 'boolean' &&
    strings(p.homeReadOnly) && strings(p.hide) && strings(p.pathReadOnly) &&
    Array.isArray(p.hiddenAgain) && p.hiddenAgain.every((h) => typeof h?.path === 'string' && typeof h.dir === 'boolean') &&
    Array.isArray(p.pathLinks) && p.pathLinks.every((l) => typeof l?.path === 'string' && typeof l.target === 'string')
  );
}

function usable(k: Kept | undefined, key: string, mounts: string[]): k is Kept {
  if (!k || k.key !== key || !Array.isArray(k.deps) || !strings(k.looked) || !wellFormed(k.part)) return false;
  for (const d of k.deps) if (!Array.isArray(d) || typeof d[0] !== 'string' || stateOf(d[0]).state !== d[1]) return false;
  for (const p of k.looked) for (const m of mounts) if (within(p, m)) return false;
  return true;
}

/** How this process's plans were had (for tests and the bench): the kept part used, or planned afresh. */
export const planCacheUse = { kept: 0, planned: 0 };

/** The plan's part for `i`: the one kept, if it still holds, else `make()`'s (kept where it may be). Inside the plan's outside() span; `mounts`: the run's mount by its path and its real one. */
export function cachedPlanPart(i: PlanInput, mounts: string[], make: () => PlanPart): PlanPart {
  const file = join(i.avfsHome, PLAN_CACHE_FILE);
  const key = keyOf(i);
  const kept = readKept(file);
  if (usable(kept, key, mounts)) {
    planCacheUse.kept++;
    return kept.part;
  }
  planCacheUse.planned++;
  const started = Date.now();
  const r = recorded(make);
  if (r.met) return r.value;
  const deps: Array<[string, string]> = [];
  for (const p of r.paths) {
    const { state, newest } = stateOf(p);
    if (newest >= started - RACY_MS) return r.value;
    deps.push([p, state]);
  }
  try {
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ key, part: r.value, deps, looked: r.looked } satisfies Kept), { mode: 0o600 });
    renameSync(tmp, file);
  } catch {
    /* an avfs home that cannot be written (or none yet): planned again next time */
  }
  return r.value;
}
