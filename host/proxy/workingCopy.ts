/**
 * The working copy of `proxy exec --materialize`: a native directory holding the vault's tree,
 * where the command runs at the local file system's speed, and whose changes are committed back
 * to the vault in one transaction after it.
 *
 * It lives in tmpfs where there is one, else under the avfs home (workDirOf), and stays between runs
 * (warm). A manifest (`state.v8`) records, for each path, what the vault held there (its inode) and
 * what the copy held (the local inode, mode, size, mtime and ctime) when the two were last equal,
 * and the vault journal's sequence number at that moment. So:
 *
 * - before a run, the copy is brought up to date from the paths the journal names since then
 *   (O(changes)); a trail that cannot say (trimmed, a restore, another vault file) rebuilds it;
 * - after a run, a walk of the copy compared with the manifest gives the run's exact changes
 *   (renames by local inode, hard links by shared inodes, modes, symlinks), applied to the vault
 *   in one transaction, where the paths others changed in the vault meanwhile are checked first:
 *   one the run changed too is a `WorkingCopyConflict` and nothing is written;
 * - a run that did not commit (timed out, cancelled, its owner killed, a conflict, a failed
 *   commit) leaves a marker (`running`): the next run rebuilds the copy from the vault, so a
 *   half-done run's files never reach the vault later. A copy whose commit failed is moved aside
 *   (`kept/<run id>`) first, so its work is not lost.
 *
 * One run at a time uses a vault's copy (a lock directory holding its pid; a dead one's is taken
 * over). Fifos, sockets and devices made in the copy are not carried to the vault.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { deserialize, serialize } from 'node:v8';
import type { ChangeSummary } from '../protocol/changes';
import { AvfsError } from '../protocol/errors';
import { loadNativeAddon } from '../fuse/addon';
import { pidAlive } from '../fuse/registry';
import { type BatchEntry, type BatchRef, kindOf, S_IFDIR, S_IFLNK, S_IFMT, S_IFREG } from '../store/inodes';
import { ROOT_INO } from '../store/schema';
import { makePrivateDir, makePrivateDirOnce, writePrivateFile } from '../store/privateFs';
import type { Vault } from '../store/vault';
import { Vfs } from '../vfs/vfs';

type Kind = 'file' | 'directory' | 'symlink';

/** One path of the copy as it was when the copy and the vault last agreed. */
interface Entry {
  kind: Kind;
  /** Permission bits. */
  mode: number;
  size: number;
  /** The local inode, mtime and ctime (ns). */
  lino: bigint;
  /** Birth time (ns; 0 where the file system keeps none): an inode number reused by a new file is not the same file. */
  btime: bigint;
  mtime: bigint;
  ctime: bigint;
  /** The vault's inode at this path. */
  vino: number;
  target?: string;
}

interface State {
  version: 1;
  vault_dev: number;
  vault_ino: number;
  seq: number;
  entries: Map<string, Entry>;
}

/** A copy's manifest, as it passes between threads. */
export type WorkingCopyState = State;

/** How the copy was made ready for a run. */
export interface PrepareResult {
  /** full: rebuilt from the vault's whole tree; journal: only the paths changed since the last run. */
  synced: 'full' | 'journal';
  /** Paths written into the copy. */
  pulled: number;
}

export interface CommitResult {
  changes: ChangeSummary;
  /** Vault paths written, created, linked, renamed or removed. */
  applied: number;
  /** Paths others changed in the vault during the run, brought into the copy afterwards. */
  merged: number;
  /** Milliseconds of each step of the commit. */
  steps: CommitSteps;
}

/** Where a commit's time went (ms): the walk, working out the changes, reading new files, the vault's transaction, the manifest and merge after it. */
export interface CommitSteps {
  walk_ms: number;
  compare_ms: number;
  read_ms: number;
  write_ms: number;
  finish_ms: number;
}

const STATE_VERSION = 1;

/** What a walk of the copy knows of a path (times in ns; birth time 0 where the file system keeps none). */
export interface LocalStat {
  ino: bigint;
  mode: number;
  size: number;
  mtimeNs: bigint;
  ctimeNs: bigint;
  birthtimeNs: bigint;
}
export type Scanned = { st: LocalStat; kind: Kind };

const kindOfMode = (mode: number): Kind | undefined => {
  const fmt = mode & S_IFMT;
  return fmt === S_IFREG ? 'file' : fmt === S_IFDIR ? 'directory' : fmt === S_IFLNK ? 'symlink' : undefined;
};

/** The addon's walk and reads (host/fuse/native/tree.c), one call each instead of one per path. */
interface TreeAddon {
  scanTree(root: string): { paths: string; stats: Buffer } | null;
  readFiles(root: string, paths: string, sizes: Float64Array): { data: Buffer; lengths: Float64Array };
}
let treeAddon: TreeAddon | null | undefined;
/** The addon's tree calls; null where it is not built or does not load (the walk and reads are then Node's). */
function nativeTree(): TreeAddon | null {
  if (treeAddon === undefined) {
    try {
      const a = loadNativeAddon<Partial<TreeAddon>>();
      treeAddon = a?.scanTree && a.readFiles ? (a as TreeAddon) : null;
    } catch {
      treeAddon = null;
    }
  }
  return treeAddon;
}
/** One read of the addon covers at most this many bytes (larger files are read alone). */
const BATCH_BYTES = 64 << 20;
/** Sorts paths shallowest first, then by name (a parent before what is in it). */
function sortByDepth(paths: string[]): void {
  const levels: string[][] = [];
  for (const p of paths) {
    let d = 0;
    for (let i = p.indexOf('/'); i >= 0; i = p.indexOf('/', i + 1)) d++;
    (levels[d] ??= []).push(p);
  }
  let i = 0;
  for (const level of levels) if (level) for (const p of level.sort(byPath)) paths[i++] = p;
}

const SLAB = 1 << 20;

/**
 * Reads many small files whose sizes are known (from the scan) into shared slabs: one open, read
 * and close each, no allocation per file. A file that grew since it was stat'ed is read whole.
 */
class SlabReader {
  private slab = Buffer.allocUnsafe(0);
  private used = 0;

  read(file: string, size: number): Buffer {
    if (size >= SLAB / 4) return fs.readFileSync(file);
    if (this.used + size + 1 > this.slab.length) {
      this.slab = Buffer.allocUnsafe(SLAB);
      this.used = 0;
    }
    const fd = fs.openSync(file, 'r');
    let n: number;
    try {
      // One byte more than expected: a file that grew since its stat is noticed.
      n = fs.readSync(fd, this.slab, this.used, size + 1, 0);
    } finally {
      fs.closeSync(fd);
    }
    if (n > size) return fs.readFileSync(file);
    const out = this.slab.subarray(this.used, this.used + n);
    this.used += n;
    return out;
  }
}
/**
 * Every path below `root` (as "/a/b", a directory before what it holds) with what lstat says of
 * it: regular files, directories and symlinks only (others are neither listed nor entered). The
 * addon's walk (one call) where it loads and `addon` is not false, else Node's (one lstat each).
 */
export function walkTree(root: string, addon = true): Map<string, Scanned> {
  const out = new Map<string, Scanned>();
  const walked = addon ? nativeTree()?.scanTree(root) : undefined;
  if (walked) {
    const f = new BigInt64Array(walked.stats.buffer, walked.stats.byteOffset, walked.stats.length / 8);
    const count = f.length / 6;
    const paths = count > 0 ? walked.paths.split('\0') : [];
    for (let i = 0, k = 0; i < count; i++, k += 6) {
      const mode = Number(f[k]!);
      out.set(paths[i]!, { kind: kindOfMode(mode)!, st: { mode, ino: f[k + 1]!, size: Number(f[k + 2]!), mtimeNs: f[k + 3]!, ctimeNs: f[k + 4]!, birthtimeNs: f[k + 5]! } });
    }
    return out;
  }
  const walk = (dir: string, prefix: string) => {
    for (const name of fs.readdirSync(dir)) {
      const at = `${dir}/${name}`;
      const st = fs.lstatSync(at, { bigint: true });
      const mode = Number(st.mode);
      const kind = kindOfMode(mode);
      if (!kind) continue;
      const p = `${prefix}/${name}`;
      out.set(p, { kind, st: { mode, ino: st.ino, size: Number(st.size), mtimeNs: st.mtimeNs, ctimeNs: st.ctimeNs, birthtimeNs: st.birthtimeNs } });
      if (kind === 'directory') walk(at, p);
    }
  };
  walk(root, '');
  return out;
}

/**
 * The bytes of the files `files` below `root` ([path, size the walk gave]): small ones in batches
 * through the addon where it loads and `addon` is not false, the rest (and any whose size changed
 * since the walk: read whole) one by one.
 */
export function readFilesIn(root: string, files: Array<[string, number]>, addon = true): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  const slab = new SlabReader();
  const native = addon ? nativeTree() : null;
  const batch: Array<[string, number]> = [];
  let bytes = 0;
  const flush = () => {
    if (batch.length === 0) return;
    const sizes = Float64Array.from(batch, (f) => f[1]);
    const { data, lengths } = native!.readFiles(root, batch.map((f) => f[0]).join('\0'), sizes);
    let off = 0;
    batch.forEach(([p], i) => {
      const n = lengths[i]!;
      out.set(p, n >= 0 ? data.subarray(off, off + n) : fs.readFileSync(root + p));
      off += sizes[i]! + 1;
    });
    batch.length = 0;
    bytes = 0;
  };
  for (const f of files) {
    const [p, size] = f;
    if (!native || size >= SLAB / 4) {
      out.set(p, slab.read(root + p, size));
      continue;
    }
    if (bytes + size > BATCH_BYTES) flush();
    batch.push(f);
    bytes += size;
  }
  flush();
  return out;
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const within = (p: string, dir: string) => p === dir || p.startsWith(dir + '/');
const octal = (mode: number) => '0' + (mode & 0o7777).toString(8).padStart(3, '0');

const SHM = '/dev/shm';
let shmRoot: string | null | undefined;

/**
 * This user's folder for working copies in tmpfs (/dev/shm), or null where there is none or it is
 * not safely this user's (a folder of that name someone else made, or a symlink, is not used).
 */
function tmpfsRoot(): string | null {
  if (shmRoot !== undefined) return shmRoot;
  shmRoot = null;
  try {
    const mounts = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n');
    if (!mounts.some((l) => l.split(' ')[1] === SHM && l.split(' ')[2] === 'tmpfs')) return null;
    const uid = process.getuid?.() ?? 0;
    const root = join(SHM, `avfs-${uid}`);
    try {
      fs.mkdirSync(root, { mode: 0o700 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') return null;
    }
    const st = fs.lstatSync(root);
    if (!st.isDirectory() || st.uid !== uid || (st.mode & 0o077) !== 0) return null;
    shmRoot = root;
  } catch {
    /* no usable tmpfs: the home's disk */
  }
  return shmRoot;
}

/**
 * Where a vault's working copy lives: in tmpfs where there is one (/dev/shm/avfs-<uid>/<home>/),
 * since small files there cost a fraction of what they cost on this machine's disk (see
 * docs/performance.md); else under the avfs home (`<home>/work/<vault>`).
 */
export function workDirOf(homeDir: string, vault: string): string {
  return join(workRootOf(homeDir), vault);
}

/** The folder of an avfs home's working copies (removed with a vault's copy, or the home). */
export function workRootOf(homeDir: string): string {
  const shm = tmpfsRoot();
  return shm ? join(shm, createHash('sha256').update(homeDir).digest('hex').slice(0, 16)) : join(homeDir, 'work');
}

export function workingTreeOf(homeDir: string, vault: string): string {
  return join(workDirOf(homeDir, vault), 'tree');
}

export class WorkingCopy {
  readonly tree: string;
  private readonly stateFile: string;
  private readonly marker: string;
  private state: State | undefined;

  private constructor(
    readonly dir: string,
    private readonly lock: string | undefined,
  ) {
    this.tree = join(dir, 'tree');
    this.stateFile = join(dir, 'state.v8');
    this.marker = join(dir, 'running');
  }

  /** Takes the vault's working copy for one run: Busy while another live run holds it. */
  static take(homeDir: string, vault: string): WorkingCopy {
    const dir = workDirOf(homeDir, vault);
    makePrivateDir(dir);
    const lock = join(dir, 'lock');
    for (let attempt = 0; ; attempt++) {
      try {
        makePrivateDirOnce(lock);
        writePrivateFile(join(lock, 'pid'), String(process.pid));
        return new WorkingCopy(dir, lock);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw e;
        let owner = NaN;
        try {
          owner = Number(fs.readFileSync(join(lock, 'pid'), 'utf8'));
        } catch {
          /* being made or removed */
        }
        if (Number.isInteger(owner) && owner > 0 && pidAlive(owner)) {
          throw new AvfsError('Busy', `another --materialize run of vault ${vault} is under way (pid ${owner}); its working copy serves one run at a time`, { vault, pid: owner });
        }
        fs.rmSync(lock, { recursive: true, force: true });
      }
    }
  }

  /**
   * The copy at `dir` for another thread of the process that took it (the host's operation
   * threads prepare and commit it there): it holds no lock of its own. `state`: what `prepared`
   * gave after a prepare elsewhere.
   */
  static at(dir: string, state?: WorkingCopyState): WorkingCopy {
    const c = new WorkingCopy(dir, undefined);
    c.state = state;
    return c;
  }

  /** The manifest a prepare made (for `at` in another thread, or `adopt` back). */
  get prepared(): WorkingCopyState | undefined {
    return this.state;
  }

  /** Takes the manifest a prepare made in another thread. */
  adopt(state: WorkingCopyState): void {
    this.state = state;
  }

  release(): void {
    if (this.lock) fs.rmSync(this.lock, { recursive: true, force: true });
  }

  private local(p: string): string {
    return p === '/' ? this.tree : this.tree + p;
  }

  private load(): State | undefined {
    try {
      const s = deserialize(fs.readFileSync(this.stateFile)) as State;
      return s.version === STATE_VERSION ? s : undefined;
    } catch {
      return undefined;
    }
  }

  private save(s: State): void {
    writePrivateFile(this.stateFile + '.tmp', serialize(s));
    fs.renameSync(this.stateFile + '.tmp', this.stateFile);
  }

  /**
   * Brings the copy to the vault's live tree: from the journal's paths since the last run, or
   * rebuilt. Then marks it in use: until a commit clears the mark, the next run rebuilds it.
   */
  prepare(vault: Vault): PrepareResult {
    const id = fs.statSync(vault.file);
    const prior = fs.existsSync(this.marker) ? undefined : this.load();
    const result = vault.store.read((): PrepareResult => {
      const seq = vault.journal.lastSeq();
      const fresh = (entries: Map<string, Entry>): State => ({ version: STATE_VERSION, vault_dev: id.dev, vault_ino: id.ino, seq, entries });
      if (prior && prior.vault_dev === id.dev && prior.vault_ino === id.ino && prior.seq <= seq && fs.existsSync(this.tree)) {
        const paths = vault.journal.pathsSince(prior.seq);
        if (paths !== null) {
          const pulled = this.pull(vault, prior.entries, paths);
          if (pulled !== null) {
            this.state = fresh(prior.entries);
            return { synced: 'journal', pulled };
          }
        }
      }
      const entries = new Map<string, Entry>();
      fs.rmSync(this.tree, { recursive: true, force: true });
      fs.mkdirSync(this.tree, { mode: 0o755 });
      const pulled = this.exportTree(vault, '/', entries);
      this.state = fresh(entries);
      return { synced: 'full', pulled };
    });
    fs.rmSync(this.stateFile, { force: true });
    writePrivateFile(this.marker, String(process.pid));
    return result;
  }

  /**
   * Writes the vault's subtree at `p` into the copy (`p` itself included unless it is the root),
   * recording each path. Files the vault hard-links are linked in the copy too.
   */
  private exportTree(vault: Vault, p: string, entries: Map<string, Entry>, twins = new Map<number, string>()): number {
    const inodes = vault.inodes;
    let n = 0;
    const dirs: Array<[string, number]> = [];
    const one = (path: string, a: { ino: number; mode: number; size: number; nlink: number; mtime: bigint }) => {
      const kind = kindOf(a.mode);
      const at = this.local(path);
      const bits = a.mode & 0o7777;
      if (kind === 'directory') {
        fs.mkdirSync(at, { mode: 0o700 });
        dirs.push([path, bits]);
        const st = fs.lstatSync(at, { bigint: true });
        entries.set(path, { kind, mode: bits, size: 0, lino: st.ino, btime: st.birthtimeNs, mtime: st.mtimeNs, ctime: st.ctimeNs, vino: a.ino });
        n++;
        for (const c of inodes.readdirAttrs(a.ino)) one(`${path === '/' ? '' : path}/${c.name}`, c.attr);
        return;
      }
      if (kind === 'symlink') {
        const target = inodes.readlink(a.ino) ?? '';
        fs.symlinkSync(target, at);
        const st = fs.lstatSync(at, { bigint: true });
        entries.set(path, { kind, mode: Number(st.mode) & 0o7777, size: Number(st.size), lino: st.ino, btime: st.birthtimeNs, mtime: st.mtimeNs, ctime: st.ctimeNs, vino: a.ino, target });
        n++;
        return;
      }
      if (kind !== 'file') return;
      const twin = a.nlink > 1 ? twins.get(a.ino) : undefined;
      if (twin !== undefined && fs.existsSync(this.local(twin))) {
        fs.linkSync(this.local(twin), at);
      } else {
        const fd = fs.openSync(at, 'w', bits);
        try {
          if (a.size > 0) fs.writeSync(fd, inodes.readAll(a.ino, a.size));
          fs.fchmodSync(fd, bits);
          const secs = Number(a.mtime / 1_000_000n) / 1000;
          fs.futimesSync(fd, secs, secs);
        } finally {
          fs.closeSync(fd);
        }
        if (a.nlink > 1) twins.set(a.ino, path);
      }
      const st = fs.lstatSync(at, { bigint: true });
      entries.set(path, { kind, mode: bits, size: a.size, lino: st.ino, btime: st.birthtimeNs, mtime: st.mtimeNs, ctime: st.ctimeNs, vino: a.ino });
      // The other names of this file in the copy changed ctime (nlink): recorded again.
      if (twin !== undefined) for (const [q, e] of entries) if (e.vino === a.ino && q !== path) entries.set(q, { ...e, ctime: st.ctimeNs });
      n++;
    };
    if (p === '/') {
      for (const c of inodes.readdirAttrs(1)) one(`/${c.name}`, c.attr);
    } else {
      const r = new Vfs(vault).tryResolve(p, false);
      if (r) one(p, r.attr);
    }
    // Last, deepest first: a directory without write permission still got its entries.
    for (const [path, bits] of dirs.reverse()) fs.chmodSync(this.local(path), bits);
    return n;
  }

  /**
   * Makes the copy's paths `paths` (and what is under them) what the vault holds there; null when
   * that cannot be done exactly (a path runs through a symlink in the vault).
   */
  private pull(vault: Vault, entries: Map<string, Entry>, paths: string[]): number | null {
    const vfs = new Vfs(vault);
    const sorted = [...new Set(paths.map((p) => '/' + p.split('/').filter(Boolean).join('/')))].filter((p) => p !== '/').sort(byPath);
    const roots: string[] = [];
    for (const p of sorted) if (!roots.some((r) => within(p, r))) roots.push(p);
    let n = 0;
    for (const p of roots) {
      const parent = p.slice(0, p.lastIndexOf('/')) || '/';
      const pr = vfs.tryResolve(parent, false);
      if (pr && pr.physical !== pr.path) return null;
      const at = this.local(p);
      const was = fs.lstatSync(at, { throwIfNoEntry: false });
      if (was?.isDirectory()) {
        fs.rmSync(at, { recursive: true, force: true });
        for (const k of [...entries.keys()]) if (within(k, p)) entries.delete(k);
      } else {
        if (was) fs.unlinkSync(at);
        entries.delete(p);
      }
      const r = vfs.tryResolve(p, false);
      if (!r) continue;
      if (pr && !fs.existsSync(this.local(parent))) return null;
      // A hard link to a file the copy holds elsewhere: that file gets the vault's bytes, then is linked here.
      const twins = new Map<number, string>();
      if (kindOf(r.attr.mode) !== 'directory') {
        for (const [q, e] of entries) {
          if (e.vino !== r.ino || e.kind !== 'file') continue;
          const data = vault.inodes.readAll(r.ino, r.attr.size);
          fs.writeFileSync(this.local(q), data);
          const st = fs.lstatSync(this.local(q), { bigint: true });
          entries.set(q, { ...e, size: data.length, mtime: st.mtimeNs, ctime: st.ctimeNs });
          twins.set(r.ino, q);
          break;
        }
      }
      n += this.exportTree(vault, p, entries, twins);
    }
    return n;
  }

  /** Every path of the copy as it is now. */
  private scan(): Map<string, Scanned> {
    return walkTree(this.tree);
  }

  /** A read-only run: the copy must still be what the vault holds, else the next run rebuilds it. */
  settleUnchanged(): boolean {
    const s = this.state;
    if (!s) return false;
    const now = this.scan();
    const same =
      now.size === s.entries.size &&
      [...now].every(([p, { st, kind }]) => {
        const e = s.entries.get(p);
        return !!e && e.kind === kind && e.lino === st.ino && (kind === 'directory' || (e.mtime === st.mtimeNs && e.ctime === st.ctimeNs)) && e.mode === (Number(st.mode) & 0o7777);
      });
    if (same) this.finish(s);
    return same;
  }

  private finish(s: State): void {
    this.save(s);
    fs.rmSync(this.marker, { force: true });
  }

  /** Moves the copy aside (its run's work kept there) and forgets it: the next run rebuilds one. */
  keepAside(runId: string): string {
    const kept = join(this.dir, 'kept', runId);
    makePrivateDir(join(this.dir, 'kept'));
    fs.renameSync(this.tree, kept);
    fs.rmSync(this.stateFile, { force: true });
    return kept;
  }

  /**
   * Commits what the run changed in the copy to the vault, in one transaction, and returns the
   * change summary. Paths others changed in the vault since the copy was prepared are merged when
   * the run did not touch them, and are a WorkingCopyConflict (nothing written) when it did.
   */
  commit(vault: Vault): CommitResult {
    const s = this.state;
    if (!s) throw new AvfsError('Internal', 'the working copy was not prepared');
    const old = s.entries;
    let t = performance.now();
    const steps: CommitSteps = { walk_ms: 0, compare_ms: 0, read_ms: 0, write_ms: 0, finish_ms: 0 };
    const step = (k: keyof CommitSteps) => {
      const n = performance.now();
      steps[k] = Math.round((n - t) * 10) / 10;
      t = n;
    };
    const now = this.scan();
    step('walk_ms');
    const vfs = new Vfs(vault);
    const readLocal = (p: string) => fs.readFileSync(this.local(p));

    // ---- what the run did, path by path
    const gone: string[] = [];
    const fresh: string[] = [];
    const kept: string[] = [];
    for (const [p, e] of old) {
      const n = now.get(p);
      if (!n || n.kind !== e.kind) gone.push(p);
      else kept.push(p);
    }
    for (const [p, n] of now) {
      const e = old.get(p);
      if (!e || e.kind !== n.kind) fresh.push(p);
    }
    gone.sort(byPath);
    sortByDepth(fresh);
    const goneByLino = new Map<bigint, string>();
    for (const p of gone) goneByLino.set(old.get(p)!.lino, p);
    /** The gone path whose file `n` is (same inode, same birth): a rename. */
    const movedFrom = (n: { st: LocalStat; kind: Kind }): string | undefined => {
      const x = goneByLino.get(n.st.ino);
      const e = x === undefined ? undefined : old.get(x)!;
      return e && e.kind === n.kind && e.btime === n.st.birthtimeNs ? x : undefined;
    };

    const summary: ChangeSummary = {
      from: 'before-run',
      to: 'current',
      added: [],
      deleted: [],
      modified: [],
      renamed: [],
      totals: { added: 0, deleted: 0, modified: 0, renamed: 0, bytes_before: 0, bytes_after: 0 },
    };
    const sizeOf = (n: { st: LocalStat; kind: Kind }) => (n.kind === 'directory' ? 0 : Number(n.st.size));
    const targetOf = (p: string) => fs.readlinkSync(this.local(p));
    /** Same bytes (or target) as the vault's entry `e`, for a path of the same kind. */
    const sameContent = (p: string, e: Entry, n: { st: LocalStat; kind: Kind }): boolean => {
      if (n.kind === 'directory') return true;
      if (e.lino === n.st.ino && e.size === Number(n.st.size) && e.mtime === n.st.mtimeNs && e.ctime === n.st.ctimeNs) return true;
      if (n.kind === 'symlink') return e.target === targetOf(p);
      if (e.size !== Number(n.st.size)) return false;
      return readLocal(p).equals(vault.inodes.readAll(e.vino, e.size));
    };

    // Renames: a local inode that left a path that is gone for one that is new (shallowest first).
    const renames: Array<{ from: string; to: string }> = [];
    const dirRenames: Array<[string, string]> = [];
    const moved = new Set<string>();
    const renamedTo = new Set<string>();
    /** Paths whose content the vault must get (new ones, and moved ones whose bytes changed). */
    const writes = new Set<string>();
    for (const q of fresh) {
      const n = now.get(q)!;
      const x = movedFrom(n);
      if (x === undefined || moved.has(x)) continue;
      const e = old.get(x)!;
      moved.add(x);
      renamedTo.add(q);
      const changed = !sameContent(q, e, n);
      const implied = dirRenames.some(([f, t]) => x.startsWith(f + '/') && q.startsWith(t + '/') && x.slice(f.length) === q.slice(t.length));
      if (changed) writes.add(q);
      if (implied) {
        if (changed) summary.modified.push({ path: q, type: n.kind, size_before: e.size, size_after: sizeOf(n), content_changed: true });
        continue;
      }
      if (n.kind === 'directory') dirRenames.push([x, q]);
      renames.push({ from: x, to: q });
      summary.renamed.push({ from: x, to: q, type: n.kind, size: sizeOf(n), content_changed: changed });
    }
    const deleted = gone.filter((p) => !moved.has(p));
    for (const p of deleted) summary.deleted.push({ path: p, type: old.get(p)!.kind, size: old.get(p)!.size });

    // Hard links: the first name of a local inode is made, the others are linked to it.
    const linoPath = new Map<bigint, string>();
    for (const p of kept) {
      const n = now.get(p)!;
      if (n.kind === 'file' && old.get(p)!.lino === n.st.ino && !linoPath.has(n.st.ino)) linoPath.set(n.st.ino, p);
    }
    for (const q of renamedTo) if (now.get(q)!.kind === 'file' && !linoPath.has(now.get(q)!.st.ino)) linoPath.set(now.get(q)!.st.ino, q);
    const creates: Array<{ path: string; linkTo?: string }> = [];
    for (const q of fresh) {
      if (renamedTo.has(q)) continue;
      const n = now.get(q)!;
      const twin = n.kind === 'file' ? linoPath.get(n.st.ino) : undefined;
      if (twin !== undefined) creates.push({ path: q, linkTo: twin });
      else {
        creates.push({ path: q });
        if (n.kind === 'file') linoPath.set(n.st.ino, q);
      }
      summary.added.push({ path: q, type: n.kind, size: sizeOf(n), ...(twin !== undefined ? { hard_link_to: twin } : {}), ...(n.kind === 'symlink' ? { target: targetOf(q) } : {}) });
    }

    // Paths still there: new bytes, a new file put in place (a new local inode), a new mode.
    const modes: Array<{ path: string; mode: number; mtime?: bigint }> = [];
    const replaced: string[] = [];
    for (const p of kept) {
      const e = old.get(p)!;
      const n = now.get(p)!;
      const bits = Number(n.st.mode) & 0o7777;
      const modeChanged = n.kind !== 'symlink' && bits !== e.mode;
      const changed = !sameContent(p, e, n);
      if (changed) {
        if (e.lino !== n.st.ino || n.kind === 'symlink') replaced.push(p);
        else writes.add(p);
      }
      if (changed || modeChanged) {
        summary.modified.push({
          path: p,
          type: n.kind,
          size_before: e.size,
          size_after: sizeOf(n),
          content_changed: changed,
          ...(modeChanged ? { mode_before: octal(e.mode), mode_after: octal(bits) } : {}),
        });
      }
      if (modeChanged || (n.kind === 'file' && e.mtime !== n.st.mtimeNs)) modes.push({ path: p, mode: bits, ...(n.kind === 'file' ? { mtime: n.st.mtimeNs } : {}) });
    }
    // A moved path whose mode changed too: listed as modified (mode) at its new name.
    for (const q of renamedTo) {
      const n = now.get(q)!;
      const e = old.get(goneByLino.get(n.st.ino)!)!;
      const bits = Number(n.st.mode) & 0o7777;
      if (n.kind === 'symlink' || bits === e.mode) continue;
      modes.push({ path: q, mode: bits });
      const m = summary.modified.find((x) => x.path === q);
      if (m) Object.assign(m, { mode_before: octal(e.mode), mode_after: octal(bits) });
      else summary.modified.push({ path: q, type: n.kind, size_before: e.size, size_after: sizeOf(n), content_changed: false, mode_before: octal(e.mode), mode_after: octal(bits) });
    }

    summary.added.sort((a, b) => byPath(a.path, b.path));
    summary.deleted.sort((a, b) => byPath(a.path, b.path));
    summary.modified.sort((a, b) => byPath(a.path, b.path));
    const bytes = (sizes: Iterable<[unknown, number]>) => [...new Map(sizes).values()].reduce((x, y) => x + y, 0);
    summary.totals = {
      added: summary.added.length,
      deleted: summary.deleted.length,
      modified: summary.modified.length,
      renamed: summary.renamed.length,
      bytes_before: bytes([...old.values()].filter((e) => e.kind === 'file').map((e) => [e.vino, e.size] as [number, number])),
      bytes_after: bytes([...now.values()].filter((n) => n.kind === 'file').map((n) => [n.st.ino, Number(n.st.size)] as [bigint, number])),
    };
    
    const touched = [...new Set([...gone, ...fresh, ...replaced, ...writes, ...modes.map((m) => m.path)])];

    // ---- the vault, in one transaction
    /** Directories the transaction has moved so far: where an old path is in the vault now. */
    const movedDirs: Array<[string, string]> = [];
    const translate = (p: string) => {
      for (const [f, t] of movedDirs) if (within(p, f)) return t + p.slice(f.length);
      return p;
    };
    /** Is the vault's entry at `p` still the one the copy was made from (vault inode `vino`)? */
    const holds = (p: string, vino: number) => vfs.tryResolve(p, false)?.ino === vino;
    const ensureParent = (p: string) => {
      const parent = p.slice(0, p.lastIndexOf('/')) || '/';
      if (!vfs.tryResolve(parent, false)) vfs.mkdir(parent, { parents: true });
    };
    const put = (p: string) => {
      const n = now.get(p)!;
      const bits = Number(n.st.mode) & 0o7777;
      const at = vfs.tryResolve(p, false);
      if (n.kind === 'directory') {
        if (at && kindOf(at.attr.mode) !== 'directory') vfs.rm(p, { recursive: true });
        if (!at || kindOf(at.attr.mode) !== 'directory') vfs.mkdir(p, { mode: bits });
        else if ((at.attr.mode & 0o7777) !== bits) vfs.setattr(p, { mode: bits }, false);
        return;
      }
      if (at) vfs.rm(p, { recursive: true });
      if (n.kind === 'symlink') vfs.symlink(targetOf(p), p);
      else {
        vfs.writeFile(p, readLocal(p), { mode: bits });
        vfs.setattr(p, { mode: bits, mtime: n.st.mtimeNs }, false);
      }
    };
    const inodes = vault.inodes;
    const vinoOf = new Map<string, number>();
    const dirInos = new Map<string, number>([['/', ROOT_INO]]);
    for (const p of kept) if (old.get(p)!.kind === 'directory') dirInos.set(p, old.get(p)!.vino);
    const dirIno = (d: string): number => {
      let ino = dirInos.get(d);
      if (ino === undefined) {
        ino = vfs.resolve(d, false).ino;
        dirInos.set(d, ino);
      }
      return ino;
    };
    // New paths go in batches (InodeStore.createMany: one quota check, one counter update, each
    // row written once), their parents' inodes known; a batch is flushed before a path the vault
    // had (of another kind) is replaced, so what that needs is in the vault by then.
    const batch: BatchEntry[] = [];
    const batchPaths: string[] = [];
    const pending = new Map<string, number>();
    const refOf = (p: string, dir: boolean): BatchRef => {
      const i = pending.get(p);
      if (i !== undefined) return { entry: i };
      if (dir) return { ino: dirIno(p) };
      return { ino: vinoOf.get(p) ?? old.get(p)?.vino ?? vfs.resolve(p, false).ino };
    };
    const flush = () => {
      if (batch.length === 0) return;
      const inos = inodes.createMany(batch);
      batch.forEach((e, i) => {
        const p = batchPaths[i]!;
        vinoOf.set(p, inos[i]!);
        if (e.link) vault.journal.append('link', p, { path2: linkOf.get(p)! });
        else if ((e.mode & S_IFMT) === S_IFDIR) {
          vault.journal.append('mkdir', p);
          dirInos.set(p, inos[i]!);
        } else if (e.target !== undefined) vault.journal.append('symlink', p, { details: { target: e.target } });
        else vault.journal.append('create', p, { size: e.data?.length ?? 0 });
      });
      batch.length = 0;
      batchPaths.length = 0;
      pending.clear();
    };
    const linkOf = new Map<string, string>();
    const create = (c: { path: string; linkTo?: string }) => {
      const p = c.path;
      const n = now.get(p)!;
      const bits = Number(n.st.mode) & 0o7777;
      const parent = p.slice(0, p.lastIndexOf('/')) || '/';
      const e: BatchEntry = { parent: refOf(parent, true), name: p.slice(p.lastIndexOf('/') + 1), mode: 0, pathForErrors: p };
      if (c.linkTo !== undefined) {
        e.link = refOf(c.linkTo, false);
        linkOf.set(p, c.linkTo);
      } else if (n.kind === 'directory') e.mode = S_IFDIR | bits;
      else if (n.kind === 'symlink') {
        e.mode = S_IFLNK | 0o777;
        e.target = targetOf(p);
      } else {
        e.mode = S_IFREG | bits;
        e.data = newBytes.get(p)!;
        e.mtime = n.st.mtimeNs;
      }
      pending.set(p, batch.length);
      batch.push(e);
      batchPaths.push(p);
    };
    // The new files' bytes, read before the transaction (the copy is this run's alone by now).
    step('compare_ms');
    const newBytes = readFilesIn(
      this.tree,
      creates.filter((c) => c.linkTo === undefined && !old.has(c.path) && now.get(c.path)!.kind === 'file').map((c) => [c.path, now.get(c.path)!.st.size]),
    );
    step('read_ms');
    let others: string[] = [];
    let applied = 0;
    vfs.mutate('/', () => {
      const since = vault.journal.pathsSince(s.seq);
      if (since === null && touched.length > 0) {
        throw new AvfsError('WorkingCopyConflict', 'the vault was replaced during the run (a checkpoint restore, or its trail was trimmed): the run\'s changes were not committed', { paths: [] });
      }
      others = since ?? [];
      const clash = others.filter((o) => touched.some((t) => within(o, t) || within(t, o))).sort(byPath);
      if (clash.length > 0) {
        throw new AvfsError('WorkingCopyConflict', `changed in the vault during the run, and by the run: ${clash.slice(0, 10).join(', ')}${clash.length > 10 ? ` and ${clash.length - 10} more` : ''}; the run's changes were not committed`, { paths: clash.slice(0, 100) });
      }
      for (const { from, to } of renames) {
        const src = translate(from);
        if (!holds(src, old.get(from)!.vino)) throw new AvfsError('WorkingCopyConflict', `${from} is not what it was in the vault: the run's changes were not committed`, { paths: [from] });
        if (vfs.tryResolve(to, false)) vfs.rm(to, { recursive: true });
        ensureParent(to);
        vfs.rename(src, to);
        if (now.get(to)!.kind === 'directory') movedDirs.push([from, to]);
        applied++;
      }
      // Removals, shallowest first (a directory takes what is under it): only what is still the copy's.
      const removedDirs: string[] = [];
      for (const p of deleted) {
        if (removedDirs.some((d) => within(p, d))) continue;
        const at = translate(p);
        if (!holds(at, old.get(p)!.vino)) continue;
        vfs.rm(at, { recursive: true });
        if (old.get(p)!.kind === 'directory') removedDirs.push(p);
        applied++;
      }
      for (const c of creates) {
        if (!old.has(c.path)) {
          create(c);
          applied++;
          continue;
        }
        flush();
        if (c.linkTo !== undefined) {
          if (vfs.tryResolve(c.path, false)) vfs.rm(c.path, { recursive: true });
          vfs.link(c.linkTo, c.path);
        } else put(c.path);
        applied++;
      }
      flush();
      for (const p of replaced) {
        put(p);
        applied++;
      }
      for (const p of writes) {
        const n = now.get(p)!;
        if (n.kind !== 'file') continue;
        vfs.writeFile(p, readLocal(p));
        vfs.setattr(p, { mtime: n.st.mtimeNs }, false);
        applied++;
      }
      for (const m of modes) vfs.setattr(m.path, { mode: m.mode, ...(m.mtime !== undefined ? { mtime: m.mtime } : {}) }, false);
      // The copy's new manifest: vault inodes of what was written, carried over for the rest.
      const oldByLino = new Map<bigint, Entry>();
      for (const e of old.values()) oldByLino.set(e.lino, e);
      const written = new Set([...creates.map((c) => c.path), ...replaced]);
      const entries = new Map<string, Entry>();
      for (const [p, n] of now) {
        const st = n.st;
        const carried = written.has(p) ? undefined : oldByLino.get(st.ino);
        const vino = vinoOf.get(p) ?? (carried && carried.kind === n.kind ? carried.vino : vfs.resolve(p, false).ino);
        const e: Entry = { kind: n.kind, mode: Number(st.mode) & 0o7777, size: sizeOf(n), lino: st.ino, btime: st.birthtimeNs, mtime: st.mtimeNs, ctime: st.ctimeNs, vino };
        if (n.kind === 'symlink') e.target = carried?.target ?? targetOf(p);
        entries.set(p, e);
      }
      s.entries = entries;
      s.seq = vault.journal.lastSeq();
    });
    step('write_ms');
    // What others changed meanwhile comes into the copy now (none of it is the run's).
    let merged = 0;
    if (others.length > 0) {
      const pulled = vault.store.read(() => this.pull(vault, s.entries, others));
      if (pulled === null) {
        writePrivateFile(this.marker, String(process.pid));
        this.save(s);
        step('finish_ms');
        return { changes: summary, applied, merged: 0, steps };
      }
      merged = pulled;
    }
    this.finish(s);
    step('finish_ms');
    return { changes: summary, applied, merged, steps };
  }
}
