/**
 * Writing a set of changes into a project folder all or nothing. Every new file and symlink is first
 * written to a staging folder inside the project (same file system, so a rename moves it into
 * place), with a journal of the steps. Only then are the steps made, each one a rename: what a step
 * replaces or removes is renamed into the staging folder, not deleted. An apply interrupted at any
 * point (kill -9, power loss) is found by the next apply or sync of that folder and rolled back
 * from the journal (recover), so the project ends as it was. The journal is written once, when
 * everything is staged; removing it is the mark that the commit is whole (a staging folder
 * without one is only cleaned up).
 */
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError } from '../protocol/errors';
import { STAGING_PREFIX } from './ignore';

export type Step =
  | { op: 'remove'; rel: string }
  | { op: 'mkdir'; rel: string; mode: number }
  | { op: 'chmod'; rel: string; mode: number; oldMode: number }
  | { op: 'put'; rel: string; kind: 'file'; data: Buffer; mode: number; mtimeNs: bigint }
  | { op: 'put'; rel: string; kind: 'symlink'; target: string };

type JournalStep = { op: Step['op']; rel: string; mode?: number; oldMode?: number };
interface Journal {
  state: 'committing';
  steps: JournalStep[];
}

const JOURNAL = 'journal.json';
const seconds = (ns: bigint): number => Number(ns / 1000n) / 1e6;

function onDisk<T>(what: string, p: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const kind = code === 'EACCES' || code === 'EPERM' ? 'PermissionDenied' : code === 'EROFS' ? 'ReadOnly' : 'StorageError';
    throw new AvfsError(kind, `cannot ${what} ${p}: ${code ?? (e as Error).message}`, { path: p });
  }
}

function writeJournal(dir: string, j: Journal): void {
  const tmp = path.join(dir, `${JOURNAL}.tmp`);
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, JSON.stringify(j));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, path.join(dir, JOURNAL));
}

/** A test seam: AVFS_TEST_APPLY_HOLD=N stops the process (until killed) after N steps of the commit. */
function holdForTest(done: number): void {
  const at = process.env.AVFS_TEST_APPLY_HOLD;
  if (at === undefined || Number(at) !== done) return;
  fs.writeSync(2, `avfs: holding the apply after ${done} steps\n`);
  while (true) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
}

/**
 * Makes `steps` in `root`, in order, all or nothing. Steps that remove come deepest first, steps
 * that create come parents first (the caller orders them). Returns the number of steps made.
 */
export function commitSteps(root: string, steps: Step[]): number {
  if (steps.length === 0) return 0;
  const stage = path.join(root, `${STAGING_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  onDisk('create the staging folder', stage, () => {
    fs.mkdirSync(stage, { mode: 0o700 });
    fs.mkdirSync(path.join(stage, 'new'));
    fs.mkdirSync(path.join(stage, 'old'));
  });
  const journal: Journal = {
    state: 'committing',
    steps: steps.map((s) => ({ op: s.op, rel: s.rel, ...('mode' in s ? { mode: s.mode } : {}), ...(s.op === 'chmod' ? { oldMode: s.oldMode } : {}) })),
  };
  try {
    onDisk('stage the changes in', stage, () => {
      steps.forEach((s, i) => {
        if (s.op !== 'put') return;
        const staged = path.join(stage, 'new', String(i));
        if (s.kind === 'symlink') {
          fs.symlinkSync(s.target, staged);
          return;
        }
        // Not fsynced one by one: what the commit must survive is the process dying (the page cache
        // keeps what was written); a power loss is left to the file system's rename ordering.
        const fd = fs.openSync(staged, 'wx', s.mode & 0o7777);
        try {
          fs.writeSync(fd, s.data);
          fs.fchmodSync(fd, s.mode & 0o7777);
          fs.futimesSync(fd, seconds(s.mtimeNs), seconds(s.mtimeNs));
        } finally {
          fs.closeSync(fd);
        }
      });
      // From here on a staging folder found by recover is rolled back step by step.
      writeJournal(stage, journal);
    });
  } catch (e) {
    fs.rmSync(stage, { recursive: true, force: true });
    throw e;
  }
  let done = 0;
  try {
    steps.forEach((s, i) => {
      holdForTest(done);
      const target = path.join(root, s.rel);
      const old = path.join(stage, 'old', String(i));
      onDisk('write', target, () => {
        switch (s.op) {
          case 'remove':
            fs.renameSync(target, old);
            break;
          case 'mkdir':
            fs.mkdirSync(target, { mode: s.mode & 0o7777 });
            fs.chmodSync(target, s.mode & 0o7777);
            break;
          case 'chmod':
            fs.chmodSync(target, s.mode & 0o7777);
            break;
          case 'put':
            if (fs.lstatSync(target, { throwIfNoEntry: false })) fs.renameSync(target, old);
            fs.renameSync(path.join(stage, 'new', String(i)), target);
            break;
        }
      });
      done++;
    });
    holdForTest(done);
  } catch (e) {
    rollBack(root, stage, journal);
    throw e;
  }
  // Whole: without its journal the staging folder is only removed, never rolled back.
  fs.unlinkSync(path.join(stage, JOURNAL));
  removeStage(stage, steps.length);
  return done;
}

/** Removes a whole commit's staging folder: what the steps replaced (old/N), then the folders. */
function removeStage(stage: string, count: number): void {
  try {
    for (let i = 0; i < count; i++) {
      try {
        fs.unlinkSync(path.join(stage, 'old', String(i)));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') continue;
        throw e;
      }
    }
    for (const d of ['new', 'old', '']) fs.rmdirSync(path.join(stage, d));
  } catch {
    // A directory replaced by the commit sits in old/ whole: the general way.
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

/** Undoes what a commit made, last step first, from its journal and staging folder. */
function rollBack(root: string, stage: string, j: Journal): void {
  for (let i = j.steps.length - 1; i >= 0; i--) {
    const s = j.steps[i]!;
    const target = path.join(root, s.rel);
    const old = path.join(stage, 'old', String(i));
    const staged = path.join(stage, 'new', String(i));
    const has = (p: string) => fs.lstatSync(p, { throwIfNoEntry: false }) !== undefined;
    switch (s.op) {
      case 'remove':
        if (has(old)) fs.renameSync(old, target);
        break;
      case 'mkdir':
        // Made by this commit: the plan creates a directory only where there was none.
        if (has(target)) fs.rmdirSync(target);
        break;
      case 'chmod':
        if (s.oldMode !== undefined && has(target)) fs.chmodSync(target, s.oldMode & 0o7777);
        break;
      case 'put':
        if (!has(staged) && has(target)) fs.rmSync(target, { force: true });
        if (has(old)) fs.renameSync(old, target);
        break;
    }
  }
  fs.rmSync(stage, { recursive: true, force: true });
}

/**
 * Finds applies interrupted in `root` (their staging folders) and rolls each back (one that had
 * finished is only cleaned up). Returns the folders found.
 */
export function recover(root: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(root).filter((n) => n.startsWith(STAGING_PREFIX));
  } catch {
    return [];
  }
  for (const name of names) {
    const stage = path.join(root, name);
    let j: Journal | undefined;
    try {
      j = JSON.parse(fs.readFileSync(path.join(stage, JOURNAL), 'utf8')) as Journal;
    } catch {
      j = undefined;
    }
    onDisk('roll back the interrupted apply in', stage, () => {
      if (j?.state === 'committing') rollBack(root, stage, j);
      else fs.rmSync(stage, { recursive: true, force: true });
    });
  }
  return names;
}
