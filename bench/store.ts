/**
 * Store benchmark: the vault store (host/store + host/vfs) side by side, in one run, with
 * Turso's AgentFS SDK (`agentfs-sdk`) and plain `node:fs` on a temp dir (disk and /dev/shm).
 *
 *   npm run bench -- store [--reps N]
 *   npm run bench -- store --backend lmdb [--reps N]   (the storage backends side by side: bench/_backends.ts)
 *   npm run bench -- store --raw [--reps N]   (only the small-file rows, avfs beside the raw design)
 *
 * Every repetition uses fresh vaults / databases / directories; the first repetition is a
 * warm-up and is not counted; the table shows medians. avfs is measured the way the CLI and
 * FUSE use it: one Vfs call = one SQLite transaction.
 */
import { randomFillSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AgentFS } from 'agentfs-sdk';
import Database from 'better-sqlite3';
import { checkBackend } from '../host/store/backend';
import { AvfsHome } from '../host/store/home';
import { benchBackends } from './_backends';
import { RawStore } from './_raw';
import { importTree } from '../host/vfs/transfer';
import { Vfs } from '../host/vfs/vfs';

// ---- parameters ----

const args = process.argv.slice(2);
function intArg(name: string, dflt: number): number {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} needs a positive integer`);
  return v;
}

const REPS = intArg('--reps', 5);
/** Only rows 1-3, for avfs and the raw better-sqlite3 design (bench/_raw.ts). */
const RAW_ONLY = args.includes('--raw');
const SMALL_N = 2000; // 1 KiB files, in two directories of 1,000
const SMALL_SIZE = 1024;
const DIR_N = 1000;
const READDIR_ITERS = 20;
const BIG_N = 200; // 1 MiB files (avfs, fs)
const BIG_N_BATCHED = 100; // 5b, avfs
const BIG_N_AGENTFS = 24; // agentfs-sdk writes ~15 MiB/s: fewer files keep the run short
const MiB = 1024 * 1024;
const ROOT = path.join(__dirname, '..');
const IMPORT_SRC = path.join(ROOT, 'node_modules', 'zod');

type Op =
  | 'w1k'
  | 'w1kBatch'
  | 'r1k'
  | 'stat'
  | 'readdir'
  | 'readdirPlus'
  | 'w1m'
  | 'w1mBatch'
  | 'w1kInline'
  | 'w1mInline'
  | 'r1m'
  | 'impFiles'
  | 'impMiB';
/** The rows measured beside the raw design; `…Cpu`: the process's CPU time per operation (all its threads), in µs. */
type RawOp = 'w1k' | 'r1k' | 'stat';
type Sample = Partial<Record<Op | `${RawOp}Cpu` | `${RawOp}Stmts`, number>>;
type BackendId = 'avfs' | 'raw' | 'agentfs' | 'fsTmp' | 'fsShm';

interface OpInfo {
  label: string;
  unit: 'ops/s' | 'ms' | 'MiB/s' | 'files/s';
  /** Higher is better (throughput); false for latencies. */
  higher: boolean;
}

const OPS: Record<Op, OpInfo> = {
  w1k: { label: '1. write 1 KiB files', unit: 'ops/s', higher: true },
  w1kBatch: { label: '1b. write 1 KiB files, batched in one transaction', unit: 'ops/s', higher: true },
  r1k: { label: '2. read 1 KiB files', unit: 'ops/s', higher: true },
  stat: { label: '3. stat', unit: 'ops/s', higher: true },
  readdir: { label: '4. readdir, 1,000 entries', unit: 'ms', higher: false },
  readdirPlus: { label: '4b. readdir + attributes, 1,000 entries', unit: 'ms', higher: false },
  w1m: { label: '5. write 1 MiB files', unit: 'MiB/s', higher: true },
  w1mBatch: { label: '5b. write 1 MiB files, batched in one transaction', unit: 'MiB/s', higher: true },
  w1kInline: { label: '1c. write 1 KiB files, checkpoints inline (one-shot process)', unit: 'ops/s', higher: true },
  w1mInline: { label: '5c. write 1 MiB files, checkpoints inline (one-shot process)', unit: 'MiB/s', higher: true },
  r1m: { label: '6. read 1 MiB files', unit: 'MiB/s', higher: true },
  impFiles: { label: '7. import node_modules/zod', unit: 'files/s', higher: true },
  impMiB: { label: '7. import node_modules/zod', unit: 'MiB/s', higher: true },
};
const OP_ORDER: Op[] = ['w1k', 'w1kBatch', 'w1kInline', 'r1k', 'stat', 'readdir', 'readdirPlus', 'w1m', 'w1mBatch', 'w1mInline', 'r1m', 'impFiles', 'impMiB'];
/** Rows measured for avfs only, compared with the other libraries' plain row. */
const SAME_AS: Partial<Record<Op, Op>> = { w1kInline: 'w1k', w1mInline: 'w1m' };

// ---- helpers ----

const gc = (globalThis as { gc?: () => void }).gc;
function settle(): void {
  gc?.();
}

function randomBuffers(n: number, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < n; i++) out.push(randomFillSync(Buffer.allocUnsafe(size)));
  return out;
}

const smallPath = (i: number): string => `/s/${i < DIR_N ? 'a' : 'b'}/f${i}`;
const bigPath = (i: number): string => `/big/f${i}`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** CPU time (user + system, all threads) of the last time() call, in ms: less swayed by a loaded machine than wall time. */
let lastCpuMs = 0;

/**
 * SQLite statements this thread has run (each run/get/all/iterate of a prepared statement and each
 * exec), counted with --raw only: the table's statements per call, both sides counted the same way.
 */
let statements = 0;
let lastStatements = 0;
if (RAW_ONLY) {
  const mem = new Database(':memory:');
  const proto = Object.getPrototypeOf(mem.prepare('SELECT 1')) as Record<string, (...a: unknown[]) => unknown>;
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const orig = proto[m]!;
    proto[m] = function (this: unknown, ...a: unknown[]) {
      statements++;
      return orig.apply(this, a);
    };
  }
  const dbProto = Database.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
  const exec = dbProto.exec!;
  dbProto.exec = function (this: unknown, ...a: unknown[]) {
    statements++;
    return exec.apply(this, a);
  };
  mem.close();
}
/** Statements per operation of the last time() call over `n` operations. */
const stmtsPerOp = (n: number): number => lastStatements / n;

/** Times a synchronous loop body; returns milliseconds. */
function time(fn: () => void): number {
  settle();
  const c0 = process.cpuUsage();
  const s0 = statements;
  const t = performance.now();
  fn();
  const ms = performance.now() - t;
  const c = process.cpuUsage(c0);
  lastCpuMs = (c.user + c.system) / 1000;
  lastStatements = statements - s0;
  return ms;
}

/** The CPU µs per operation of the last time() call over `n` operations. */
const cpuPerOp = (n: number): number => (lastCpuMs * 1000) / n;

async function timeAsync(fn: () => Promise<void>): Promise<number> {
  settle();
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function check(cond: boolean, what: string): void {
  if (!cond) throw new Error(`benchmark self-check failed: ${what}`);
}

/** The file system type a directory lives on (from /proc/mounts), e.g. ext4 or tmpfs. */
function fsType(dir: string): string {
  try {
    const real = fs.realpathSync(dir);
    let best = '';
    let type = '?';
    for (const line of fs.readFileSync('/proc/mounts', 'utf8').split('\n')) {
      const [, mnt, t] = line.split(' ');
      if (!mnt || !t) continue;
      if ((real === mnt || real.startsWith(mnt.endsWith('/') ? mnt : mnt + '/')) && mnt.length >= best.length) {
        best = mnt;
        type = t;
      }
    }
    return type;
  } catch {
    return '?';
  }
}

interface HostTree {
  dirs: string[]; // relative, parents before children
  files: string[]; // relative
  bytes: number;
}

function scanTree(root: string): HostTree {
  const t: HostTree = { dirs: [], files: [], bytes: 0 };
  const walk = (rel: string): void => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) {
        t.dirs.push(r);
        walk(r);
      } else if (e.isFile()) {
        t.files.push(r);
        t.bytes += fs.statSync(path.join(root, r)).size;
      }
    }
  };
  walk('');
  return t;
}

// ---- data, shared by every backend ----

const small = randomBuffers(SMALL_N, SMALL_SIZE);
const big = randomBuffers(BIG_N, MiB);
const tree = scanTree(IMPORT_SRC);

// ---- backends: one repetition each, on fresh storage under `dir` ----

function repAvfs(dir: string): Sample {
  const out: Sample = {};
  const home = new AvfsHome(dir);

  // 1-6, one Vfs call (= one transaction) per operation, in a long-lived process as the mount
  // server and the host run: WAL checkpoints on a background thread.
  const v = home.create('bench');
  v.startBackgroundCheckpoints();
  const vfs = new Vfs(v);
  try {
    vfs.mkdir('/s/a', { parents: true });
    vfs.mkdir('/s/b');
    vfs.mkdir('/big');
    out.w1k = SMALL_N / (time(() => {
      for (let i = 0; i < SMALL_N; i++) vfs.writeFile(smallPath(i), small[i]!);
    }) / 1000);
    out.w1kCpu = cpuPerOp(SMALL_N);
    out.w1kStmts = stmtsPerOp(SMALL_N);
    let bytes = 0;
    out.r1k = SMALL_N / (time(() => {
      for (let i = 0; i < SMALL_N; i++) bytes += vfs.readFile(smallPath(i)).length;
    }) / 1000);
    out.r1kCpu = cpuPerOp(SMALL_N);
    out.r1kStmts = stmtsPerOp(SMALL_N);
    check(bytes === SMALL_N * SMALL_SIZE, 'avfs read 1 KiB');
    let sizes = 0;
    out.stat = SMALL_N / (time(() => {
      for (let i = 0; i < SMALL_N; i++) sizes += vfs.stat(smallPath(i)).size;
    }) / 1000);
    out.statCpu = cpuPerOp(SMALL_N);
    out.statStmts = stmtsPerOp(SMALL_N);
    check(sizes === SMALL_N * SMALL_SIZE, 'avfs stat');
    if (RAW_ONLY) return out;
    let n = 0;
    out.readdir = time(() => {
      for (let k = 0; k < READDIR_ITERS; k++) n += vfs.readdirNames('/s/a').length;
    }) / READDIR_ITERS;
    check(n === READDIR_ITERS * DIR_N, 'avfs readdir');
    n = 0;
    out.readdirPlus = time(() => {
      for (let k = 0; k < READDIR_ITERS; k++) n += vfs.readdir('/s/a').length;
    }) / READDIR_ITERS;
    check(n === READDIR_ITERS * DIR_N, 'avfs readdir + attributes');
    out.w1m = BIG_N / (time(() => {
      for (let i = 0; i < BIG_N; i++) vfs.writeFile(bigPath(i), big[i]!);
    }) / 1000);
    bytes = 0;
    out.r1m = BIG_N / (time(() => {
      for (let i = 0; i < BIG_N; i++) bytes += vfs.readFile(bigPath(i)).length;
    }) / 1000);
    check(bytes === BIG_N * MiB, 'avfs read 1 MiB');
  } finally {
    v.close();
  }

  // 1c, 5c: the same writes as a one-shot process makes them (checkpoints inside commits)
  const vc = home.create('inline');
  const vfsc = new Vfs(vc);
  try {
    vfsc.mkdir('/s/a', { parents: true });
    vfsc.mkdir('/s/b');
    vfsc.mkdir('/big');
    out.w1kInline = SMALL_N / (time(() => {
      for (let i = 0; i < SMALL_N; i++) vfsc.writeFile(smallPath(i), small[i]!);
    }) / 1000);
    out.w1mInline = BIG_N / (time(() => {
      for (let i = 0; i < BIG_N; i++) vfsc.writeFile(bigPath(i), big[i]!);
    }) / 1000);
  } finally {
    vc.close();
  }

  // 1b, 5b: the same writes in one transaction, on a fresh vault
  const vb = home.create('batched');
  const vfsb = new Vfs(vb);
  try {
    vfsb.mkdir('/s/a', { parents: true });
    vfsb.mkdir('/s/b');
    vfsb.mkdir('/big');
    out.w1kBatch = SMALL_N / (time(() => {
      vfsb.mutate('/', () => {
        for (let i = 0; i < SMALL_N; i++) vfsb.writeFile(smallPath(i), small[i]!);
      });
    }) / 1000);
    out.w1mBatch = BIG_N_BATCHED / (time(() => {
      vfsb.mutate('/', () => {
        for (let i = 0; i < BIG_N_BATCHED; i++) vfsb.writeFile(bigPath(i), big[i]!);
      });
    }) / 1000);
  } finally {
    vb.close();
  }

  // 7: importTree (one transaction, as `avfs import` does)
  const vi = home.create('import');
  try {
    const vfsi = new Vfs(vi);
    let files = 0;
    const ms = time(() => {
      files = importTree(vfsi, IMPORT_SRC, '/zod').files;
    });
    check(files === tree.files.length, 'avfs import file count');
    out.impFiles = files / (ms / 1000);
    out.impMiB = tree.bytes / MiB / (ms / 1000);
  } finally {
    vi.close();
  }
  return out;
}

/** Rows 1-3 on the raw better-sqlite3 design (bench/_raw.ts), the store's reference for small operations. */
function repRaw(dir: string): Sample {
  const out: Sample = {};
  const raw = new RawStore(path.join(dir, 'raw.db'));
  try {
    raw.mkdir('/s');
    raw.mkdir('/s/a');
    raw.mkdir('/s/b');
    out.w1k = SMALL_N / (time(() => {
      for (let i = 0; i < SMALL_N; i++) raw.writeFile(smallPath(i), small[i]!);
    }) / 1000);
    out.w1kCpu = cpuPerOp(SMALL_N);
    out.w1kStmts = stmtsPerOp(SMALL_N);
    let bytes = 0;
    out.r1k = SMALL_N / (time(() => {
      for (let i = 0; i < SMALL_N; i++) bytes += raw.readFile(smallPath(i)).length;
    }) / 1000);
    out.r1kCpu = cpuPerOp(SMALL_N);
    out.r1kStmts = stmtsPerOp(SMALL_N);
    check(bytes === SMALL_N * SMALL_SIZE, 'raw read 1 KiB');
    let sizes = 0;
    out.stat = SMALL_N / (time(() => {
      for (let i = 0; i < SMALL_N; i++) sizes += Number(raw.stat(smallPath(i)).size);
    }) / 1000);
    out.statCpu = cpuPerOp(SMALL_N);
    out.statStmts = stmtsPerOp(SMALL_N);
    check(sizes === SMALL_N * SMALL_SIZE, 'raw stat');
  } finally {
    raw.close();
  }
  return out;
}

type AgentFsFs = AgentFS['fs'];

async function openAgentFs(file: string, synchronous: 'NORMAL' | null): Promise<AgentFS> {
  const a = await AgentFS.open({ path: file });
  if (synchronous) await a.getDatabase().exec(`PRAGMA synchronous = ${synchronous}`);
  return a;
}

async function agentFsPragmas(file: string, synchronous: 'NORMAL' | null): Promise<string> {
  const a = await openAgentFs(file, synchronous);
  try {
    const db = a.getDatabase();
    const parts: string[] = [];
    for (const p of ['journal_mode', 'synchronous', 'page_size']) {
      const rows = (await db.prepare(`PRAGMA ${p}`).all()) as Array<Record<string, unknown>>;
      parts.push(`${p}=${String(Object.values(rows[0] ?? {})[0])}`);
    }
    return parts.join(', ');
  } finally {
    await a.close();
  }
}

async function agentFsWriteSmall(afs: AgentFsFs, n: number): Promise<number> {
  return timeAsync(async () => {
    for (let i = 0; i < n; i++) await afs.writeFile(smallPath(i), small[i]!);
  });
}

async function agentFsWriteBig(afs: AgentFsFs, n: number): Promise<number> {
  return timeAsync(async () => {
    for (let i = 0; i < n; i++) await afs.writeFile(bigPath(i), big[i]!);
  });
}

async function agentFsDirs(afs: AgentFsFs): Promise<void> {
  await afs.mkdir('/s');
  await afs.mkdir('/s/a');
  await afs.mkdir('/s/b');
  await afs.mkdir('/big');
}

async function repAgentFs(dir: string): Promise<Sample> {
  const out: Sample = {};
  const a = await openAgentFs(path.join(dir, 'bench.db'), 'NORMAL');
  try {
    const afs = a.fs;
    await agentFsDirs(afs);
    out.w1k = SMALL_N / ((await agentFsWriteSmall(afs, SMALL_N)) / 1000);
    let bytes = 0;
    out.r1k = SMALL_N / ((await timeAsync(async () => {
      for (let i = 0; i < SMALL_N; i++) bytes += (await afs.readFile(smallPath(i))).length;
    })) / 1000);
    check(bytes === SMALL_N * SMALL_SIZE, 'agentfs read 1 KiB');
    let sizes = 0;
    out.stat = SMALL_N / ((await timeAsync(async () => {
      for (let i = 0; i < SMALL_N; i++) sizes += (await afs.stat(smallPath(i))).size;
    })) / 1000);
    check(sizes === SMALL_N * SMALL_SIZE, 'agentfs stat');
    let n = 0;
    out.readdir = (await timeAsync(async () => {
      for (let k = 0; k < READDIR_ITERS; k++) n += (await afs.readdir('/s/a')).length;
    })) / READDIR_ITERS;
    check(n === READDIR_ITERS * DIR_N, 'agentfs readdir');
    n = 0;
    out.readdirPlus = (await timeAsync(async () => {
      for (let k = 0; k < READDIR_ITERS; k++) n += (await afs.readdirPlus('/s/a')).length;
    })) / READDIR_ITERS;
    check(n === READDIR_ITERS * DIR_N, 'agentfs readdirPlus');
    out.w1m = BIG_N_AGENTFS / ((await agentFsWriteBig(afs, BIG_N_AGENTFS)) / 1000);
    bytes = 0;
    out.r1m = BIG_N_AGENTFS / ((await timeAsync(async () => {
      for (let i = 0; i < BIG_N_AGENTFS; i++) bytes += (await afs.readFile(bigPath(i))).length;
    })) / 1000);
    check(bytes === BIG_N_AGENTFS * MiB, 'agentfs read 1 MiB');
  } finally {
    await a.close();
  }

  // 1b, 5b: the SDK opens no transaction of its own in writeFile, so BEGIN … COMMIT batches
  const b = await openAgentFs(path.join(dir, 'batched.db'), 'NORMAL');
  try {
    const db = b.getDatabase();
    await agentFsDirs(b.fs);
    const batch = async (fn: () => Promise<number>): Promise<number> => {
      settle();
      const t = performance.now();
      await db.exec('BEGIN IMMEDIATE');
      await fn();
      await db.exec('COMMIT');
      return performance.now() - t;
    };
    out.w1kBatch = SMALL_N / ((await batch(() => agentFsWriteSmall(b.fs, SMALL_N))) / 1000);
    out.w1mBatch = BIG_N_AGENTFS / ((await batch(() => agentFsWriteBig(b.fs, BIG_N_AGENTFS))) / 1000);
  } finally {
    await b.close();
  }

  // 7: import = walk the host tree, one mkdir / writeFile per entry
  const c = await openAgentFs(path.join(dir, 'import.db'), 'NORMAL');
  try {
    const afs = c.fs;
    let files = 0;
    const ms = await timeAsync(async () => {
      const walk = async (hostDir: string, vdir: string): Promise<void> => {
        await afs.mkdir(vdir);
        for (const e of fs.readdirSync(hostDir, { withFileTypes: true })) {
          const h = path.join(hostDir, e.name);
          if (e.isDirectory()) await walk(h, `${vdir}/${e.name}`);
          else if (e.isFile()) {
            await afs.writeFile(`${vdir}/${e.name}`, fs.readFileSync(h));
            files++;
          }
        }
      };
      await walk(IMPORT_SRC, '/zod');
    });
    check(files === tree.files.length, 'agentfs import file count');
    out.impFiles = files / (ms / 1000);
    out.impMiB = tree.bytes / MiB / (ms / 1000);
  } finally {
    await c.close();
  }
  return out;
}

function repFs(dir: string): Sample {
  const out: Sample = {};
  const p = (v: string): string => path.join(dir, v);
  fs.mkdirSync(p('/s/a'), { recursive: true });
  fs.mkdirSync(p('/s/b'));
  fs.mkdirSync(p('/big'));
  out.w1k = SMALL_N / (time(() => {
    for (let i = 0; i < SMALL_N; i++) fs.writeFileSync(p(smallPath(i)), small[i]!);
  }) / 1000);
  let bytes = 0;
  out.r1k = SMALL_N / (time(() => {
    for (let i = 0; i < SMALL_N; i++) bytes += fs.readFileSync(p(smallPath(i))).length;
  }) / 1000);
  check(bytes === SMALL_N * SMALL_SIZE, 'fs read 1 KiB');
  let sizes = 0;
  out.stat = SMALL_N / (time(() => {
    for (let i = 0; i < SMALL_N; i++) sizes += fs.statSync(p(smallPath(i))).size;
  }) / 1000);
  check(sizes === SMALL_N * SMALL_SIZE, 'fs stat');
  let n = 0;
  out.readdir = time(() => {
    for (let k = 0; k < READDIR_ITERS; k++) n += fs.readdirSync(p('/s/a')).length;
  }) / READDIR_ITERS;
  check(n === READDIR_ITERS * DIR_N, 'fs readdir');
  n = 0;
  out.readdirPlus = time(() => {
    for (let k = 0; k < READDIR_ITERS; k++) {
      const d = p('/s/a');
      for (const name of fs.readdirSync(d)) n += fs.lstatSync(path.join(d, name)).size > 0 ? 1 : 0;
    }
  }) / READDIR_ITERS;
  check(n === READDIR_ITERS * DIR_N, 'fs readdir + lstat');
  out.w1m = BIG_N / (time(() => {
    for (let i = 0; i < BIG_N; i++) fs.writeFileSync(p(bigPath(i)), big[i]!);
  }) / 1000);
  bytes = 0;
  out.r1m = BIG_N / (time(() => {
    for (let i = 0; i < BIG_N; i++) bytes += fs.readFileSync(p(bigPath(i))).length;
  }) / 1000);
  check(bytes === BIG_N * MiB, 'fs read 1 MiB');
  const ms = time(() => fs.cpSync(IMPORT_SRC, p('/zod'), { recursive: true }));
  out.impFiles = tree.files.length / (ms / 1000);
  out.impMiB = tree.bytes / MiB / (ms / 1000);
  return out;
}

// ---- run ----

interface Backend {
  id: BackendId;
  parent: string;
  run: (dir: string) => Sample | Promise<Sample>;
}

function fmt(v: number | undefined, unit: OpInfo['unit']): string {
  if (v === undefined || !Number.isFinite(v)) return '—';
  if (unit === 'ms') return v < 10 ? v.toFixed(2) : v.toFixed(1);
  if (unit === 'MiB/s') return v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
  return Math.round(v).toLocaleString('en-US');
}

function pad(cells: string[], widths: number[]): string {
  return '| ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ') + ' |';
}

async function main(): Promise<void> {
  check(fs.existsSync(IMPORT_SRC), `${IMPORT_SRC} exists`);
  const b = args.indexOf('--backend');
  if (b >= 0) {
    // The storage backends side by side (bench/_backends.ts), instead of the comparison with other stores.
    const named = (args[b + 1] ?? '').split(',').map(checkBackend).filter((x) => x !== 'sqlite');
    return benchBackends(['sqlite', ...named], REPS);
  }
  const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'avfs-bench-store-'));
  const shmRoot = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/avfs-bench-store-') : null;
  const cleanup = (): void => {
    fs.rmSync(tmpRoot, { recursive: true, force: true });
    if (shmRoot) fs.rmSync(shmRoot, { recursive: true, force: true });
  };
  process.on('SIGINT', () => {
    cleanup();
    process.exit(130);
  });
  try {
    await run(tmpRoot, shmRoot);
  } finally {
    cleanup();
  }
}

async function run(tmpRoot: string, shmRoot: string | null): Promise<void> {
  const cpus = os.cpus();
  const tursoVersion = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/@tursodatabase/database/package.json'), 'utf8')) as { version: string }
  ).version;
  const sdkVersion = (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules/agentfs-sdk/package.json'), 'utf8')) as { version: string }
  ).version;
  console.log(`command: npm run bench -- store${args.length ? ' ' + args.join(' ') : ''}`);
  console.log(`         (${[path.basename(process.execPath), ...process.execArgv, path.relative(ROOT, process.argv[1] ?? ''), ...args].join(' ')})`);
  console.log(
    `machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM, ` +
      `${os.type()} ${os.release()}, node ${process.version}`,
  );
  const load = (): string => os.loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`load:    ${load()} (1/5/15 min) at start`);
  console.log(`temp:    ${tmpRoot} (${fsType(tmpRoot)})${shmRoot ? `, ${shmRoot} (${fsType(shmRoot)})` : ', no /dev/shm'}`);

  const probeVault = new AvfsHome(path.join(tmpRoot, 'probe')).create('probe');
  const sqliteVersion = probeVault.db.prepare<[], { v: string }>('SELECT sqlite_version() AS v').get()?.v ?? '?';
  const avfsPragmas = ['journal_mode', 'synchronous', 'page_size']
    .map((p) => `${p}=${String(probeVault.db.pragma(p, { simple: true }))}`)
    .join(', ');
  probeVault.close();
  if (RAW_ONLY) return runRaw(tmpRoot, load, avfsPragmas);
  const afsPragmas = await agentFsPragmas(path.join(tmpRoot, 'probe', 'probe.db'), 'NORMAL');
  const afsDefaultPragmas = await agentFsPragmas(path.join(tmpRoot, 'probe', 'probe-default.db'), null);
  console.log(`avfs:    better-sqlite3 (SQLite ${sqliteVersion}); ${avfsPragmas}; one BEGIN IMMEDIATE … COMMIT per Vfs call`);
  console.log(
    `agentfs: agentfs-sdk ${sdkVersion} on @tursodatabase/database ${tursoVersion}; run with PRAGMA synchronous = NORMAL ` +
      `(→ ${afsPragmas}); SDK default is ${afsDefaultPragmas}. writeFile/readFile open no transaction, ` +
      `so each SQL statement autocommits; readFile also writes atime.`,
  );
  console.log(
    `work:    ${SMALL_N} × 1 KiB (2 dirs × ${DIR_N}), readdir × ${READDIR_ITERS}, 1 MiB × ${BIG_N} ` +
      `(batched: × ${BIG_N_BATCHED}; agentfs-sdk: × ${BIG_N_AGENTFS}), import ${tree.files.length} files / ${(tree.bytes / MiB).toFixed(1)} MiB ` +
      `from node_modules/zod; all content random and distinct; ${REPS} reps + 1 warm-up, medians`,
  );
  console.log('');

  const backends: Backend[] = [
    { id: 'avfs', parent: tmpRoot, run: repAvfs },
    { id: 'raw', parent: tmpRoot, run: repRaw },
    { id: 'agentfs', parent: tmpRoot, run: repAgentFs },
    { id: 'fsTmp', parent: tmpRoot, run: repFs },
    ...(shmRoot ? [{ id: 'fsShm' as const, parent: shmRoot, run: repFs }] : []),
  ];
  const started = performance.now();
  const samples = await repeat(backends, started);

  // agentfs-sdk at its own default durability (synchronous=FULL), writes only, for reference
  const fullW1k: number[] = [];
  const fullW1m: number[] = [];
  const FULL_SMALL = 300;
  const FULL_BIG = 5;
  for (let rep = 0; rep < 3; rep++) {
    const dir = fs.mkdtempSync(path.join(tmpRoot, `agentfs-full-${rep}-`));
    const a = await openAgentFs(path.join(dir, 'full.db'), null);
    try {
      await agentFsDirs(a.fs);
      fullW1k.push(FULL_SMALL / ((await agentFsWriteSmall(a.fs, FULL_SMALL)) / 1000));
      fullW1m.push(FULL_BIG / ((await agentFsWriteBig(a.fs, FULL_BIG)) / 1000));
    } finally {
      await a.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  // ---- report ----
  const med = (id: BackendId, op: Op): number | undefined => {
    const xs = (samples.get(id) ?? []).map((s) => s[op]).filter((x): x is number => x !== undefined);
    return xs.length ? median(xs) : undefined;
  };
  const ratio = (op: Op): number | undefined => {
    const a = med('avfs', op);
    const b = med('agentfs', SAME_AS[op] ?? op);
    if (a === undefined || b === undefined) return undefined;
    return OPS[op].higher ? a / b : b / a;
  };
  printRawTable(samples);
  const header = ['operation', 'unit', 'avfs', 'agentfs-sdk', 'fs(tmp)', 'fs(shm)', 'avfs÷agentfs'];
  const rows: string[][] = OP_ORDER.map((op) => {
    const info = OPS[op];
    const batchedFs = op === 'w1kBatch' || op === 'w1mBatch' || SAME_AS[op] !== undefined;
    const r = ratio(op);
    return [
      info.label,
      info.unit,
      fmt(med('avfs', op), info.unit),
      SAME_AS[op] ? `(${fmt(med('agentfs', SAME_AS[op]!), info.unit)})` : fmt(med('agentfs', op), info.unit),
      batchedFs ? '—' : fmt(med('fsTmp', op), info.unit),
      batchedFs ? '—' : fmt(med('fsShm', op), info.unit),
      r === undefined ? '—' : `${r.toFixed(r < 10 ? 2 : 1)}×`,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  console.log(pad(header, widths));
  console.log('|' + widths.map((w, i) => (i === 0 || i === 1 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|');
  for (const r of rows) console.log(pad(r, widths));
  console.log('');
  for (const note of [
    'avfs÷agentfs: throughput ratio (readdir: agentfs ms ÷ avfs ms); > 1 means avfs is faster.',
    '4: names only: avfs readdirNames, agentfs-sdk readdir, fs readdirSync.',
    '4b: names and attributes: avfs readdir, agentfs-sdk readdirPlus, fs readdirSync + lstat of each entry.',
    'avfs column: a long-lived process (as the mount server and host are), WAL checkpoints on a background thread.',
    '1c/5c: avfs as a one-shot process (checkpoints inside commits), against agentfs-sdk\'s rows 1 and 5 (in parentheses).',
    '1b/5b: avfs: one vfs.mutate() around all the writes; agentfs-sdk: BEGIN IMMEDIATE … COMMIT around them.',
    '7: avfs importTree (one transaction); agentfs-sdk mkdir/writeFile per entry; fs cpSync.',
  ]) {
    console.log(note);
  }
  console.log(
    `agentfs-sdk at its default synchronous=FULL (3 reps, median): write 1 KiB ${fmt(median(fullW1k), 'ops/s')} ops/s, ` +
      `write 1 MiB ${fmt(median(fullW1m), 'MiB/s')} MiB/s`,
  );
  console.log('');

  const smallOps: Array<[Op, string]> = [
    ['w1k', 'write 1 KiB'],
    ['r1k', 'read 1 KiB'],
    ['stat', 'stat'],
    ['readdir', 'readdir'],
  ];
  const parts = smallOps.map(([op, name]) => {
    const r = ratio(op) ?? 0;
    return `${name} ${r.toFixed(2)}× ${r >= 3 ? 'PASS' : 'MISS'}`;
  });
  const allSmall = smallOps.every(([op]) => (ratio(op) ?? 0) >= 3);
  console.log(`target: avfs ≥ 3× agentfs-sdk throughput on small-file ops (1-4): ${allSmall ? 'PASS' : 'MISS'} (${parts.join('; ')})`);
  const bulk = med('avfs', 'w1m') ?? 0;
  console.log(`target: avfs bulk writes (5) ≥ 180 MiB/s: ${bulk >= 180 ? 'PASS' : 'MISS'} (${fmt(bulk, 'MiB/s')} MiB/s)`);
  console.log(`total time ${((performance.now() - started) / 1000).toFixed(0)} s; load ${load()} at the end`);
}

/** Each backend's samples, rotating the order of backends from one repetition to the next; the first repetition is a warm-up. */
async function repeat(backends: Backend[], started: number): Promise<Map<BackendId, Sample[]>> {
  const samples = new Map<BackendId, Sample[]>(backends.map((b) => [b.id, []]));
  for (let rep = 0; rep <= REPS; rep++) {
    for (let k = 0; k < backends.length; k++) {
      const b = backends[(rep + k) % backends.length]!;
      const dir = fs.mkdtempSync(path.join(b.parent, `${b.id}-${rep}-`));
      try {
        const s = await b.run(dir);
        if (rep > 0) samples.get(b.id)!.push(s);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
    process.stderr.write(`  ${rep === 0 ? 'warm-up' : `rep ${rep}/${REPS}`} done (${((performance.now() - started) / 1000).toFixed(0)} s)\n`);
  }
  return samples;
}

const RAW_TARGET = 1.5;

/**
 * Rows 1-3: avfs beside the raw design, by wall time and by CPU time per operation (the process's,
 * all threads: avfs's background checkpoints count), and the target: avfs takes at most 1.5× the
 * raw design's time per operation.
 */
function printRawTable(samples: Map<BackendId, Sample[]>): void {
  const med = (id: BackendId, k: keyof Sample): number => median((samples.get(id) ?? []).map((s) => s[k] ?? NaN));
  const ops: RawOp[] = ['w1k', 'r1k', 'stat'];
  const rows = ops.map((op) => {
    const a = med('avfs', op);
    const r = med('raw', op);
    const ac = med('avfs', `${op}Cpu`);
    const rc = med('raw', `${op}Cpu`);
    return { op, a, r, x: r / a, ac, rc, xc: ac / rc, as: med('avfs', `${op}Stmts`), rs: med('raw', `${op}Stmts`) };
  });
  const header = ['operation', 'unit', 'avfs', 'raw better-sqlite3', 'avfs time ÷ raw', 'avfs CPU µs/op', 'raw CPU µs/op', 'avfs CPU ÷ raw', 'statements/op avfs, raw'];
  const cells = rows.map(({ op, a, r, x, ac, rc, xc, as, rs }) => [
    OPS[op].label,
    OPS[op].unit,
    fmt(a, 'ops/s'),
    fmt(r, 'ops/s'),
    `${x.toFixed(2)}×`,
    ac.toFixed(1),
    rc.toFixed(1),
    `${xc.toFixed(2)}×`,
    `${as.toFixed(1)}, ${rs.toFixed(1)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  console.log(pad(header, widths));
  console.log('|' + widths.map((w, i) => (i === 0 || i === 1 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|');
  for (const c of cells) console.log(pad(c, widths));
  console.log('');
  console.log('raw: bench/_raw.ts, the same model written by hand (entries → inodes, content inline, prepared statements, one transaction per call, same pragmas and background WAL checkpoints; no journal, quotas, chunks or hashes).');
  const parts = rows.map(({ op, x, xc }) => `${OPS[op].label.replace(/^\d+\. /, '')} ${x.toFixed(2)}× (CPU ${xc.toFixed(2)}×) ${x <= RAW_TARGET ? 'PASS' : 'MISS'}`);
  const all = rows.every(({ x }) => x <= RAW_TARGET);
  console.log(`target: avfs small-file ops within ${RAW_TARGET}× of the raw design's wall time (1-3): ${all ? 'PASS' : 'MISS'} (${parts.join('; ')})`);
  console.log('');
}

async function runRaw(tmpRoot: string, load: () => string, avfsPragmas: string): Promise<void> {
  console.log(`avfs:    ${avfsPragmas}; one BEGIN IMMEDIATE … COMMIT per Vfs call; WAL checkpoints on a background thread`);
  console.log(`work:    ${SMALL_N} × 1 KiB (2 dirs × ${DIR_N}), write, read, stat; all content random and distinct; ${REPS} reps + 1 warm-up, medians`);
  console.log('');
  const started = performance.now();
  const samples = await repeat(
    [
      { id: 'avfs', parent: tmpRoot, run: repAvfs },
      { id: 'raw', parent: tmpRoot, run: repRaw },
    ],
    started,
  );
  printRawTable(samples);
  console.log(`total time ${((performance.now() - started) / 1000).toFixed(0)} s; load ${load()} at the end`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
