/**
 * `npm run bench -- store --backend lmdb [--reps N]`: the storage backends side by side in one
 * run, through the same Vfs calls (one write transaction per call, as the CLI and FUSE use the
 * store): SQLite first, then each backend named. Every repetition uses fresh vaults; the first is a
 * warm-up; medians. PostgreSQL (`--backend postgres`) runs on `$AVFS_PG_URL`, else on a throwaway
 * cluster with PostgreSQL's durable defaults on a Unix socket (loopback: what grows with distance
 * is the round trips, which are counted per operation and printed under the table).
 */
import { randomFillSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BackendKind } from '../host/store/backend';
import { forkVault } from '../host/store/forks';
import { SyncPg } from '../host/store/pgSync';
import { startCluster } from '../scripts/pgcluster.mjs';
import { AvfsHome } from '../host/store/home';
import { importTree } from '../host/vfs/transfer';
import { Vfs } from '../host/vfs/vfs';

const MiB = 1024 * 1024;
const SMALL_N = 2000;
const BIG_N = 100;

interface Row {
  label: string;
  unit: 'ops/s' | 'MiB/s' | 'ms';
  /** Higher is better (throughput) or lower (ms). */
  higher: boolean;
}

const ROWS = {
  w1k: { label: 'write 1 KiB files', unit: 'ops/s', higher: true },
  r1k: { label: 'read 1 KiB files', unit: 'ops/s', higher: true },
  stat: { label: 'stat', unit: 'ops/s', higher: true },
  readdir: { label: 'readdir + attributes, 1,000 entries', unit: 'ms', higher: false },
  w1m: { label: 'write 1 MiB files', unit: 'MiB/s', higher: true },
  r1m: { label: 'read 1 MiB files', unit: 'MiB/s', higher: true },
  import: { label: 'import node_modules/zod', unit: 'ms', higher: false },
  save10k: { label: 'checkpoint save, 10,000 files', unit: 'ms', higher: false },
  restore10k: { label: 'checkpoint restore, 10,000 files', unit: 'ms', higher: false },
  save50k: { label: 'checkpoint save, 50,000 files', unit: 'ms', higher: false },
  restore50k: { label: 'checkpoint restore, 50,000 files', unit: 'ms', higher: false },
  fork: { label: 'fork (10,000 files)', unit: 'ms', higher: false },
} satisfies Record<string, Row>;
type Op = keyof typeof ROWS;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/** Round trips to PostgreSQL per operation, by row (the last repetition's). */
const trips = new Map<Op, number>();
let timing: Op | undefined;
let perOp = 1;
const time = (fn: () => void) => {
  const n = SyncPg.trips;
  const t = performance.now();
  fn();
  const ms = performance.now() - t;
  if (timing && SyncPg.trips > n) trips.set(timing, (SyncPg.trips - n) / perOp);
  return ms;
};
/** Names the row the next `time` measures, and how many operations it makes. */
const row = (op: Op, ops = 1) => {
  timing = op;
  perOp = ops;
};

function populate(vfs: Vfs, n: number): void {
  vfs.mutate('/', () => {
    for (let i = 0; i < n; i++) {
      if (i % 100 === 0) vfs.mkdir(`/t/d${i / 100}`, { parents: true });
      vfs.writeFile(`/t/d${Math.floor(i / 100)}/f${i}.ts`, Buffer.from(`export const v${i} = ${i};\n`));
    }
  });
}

function rep(dir: string, backend: BackendKind, importSrc: string): Record<Op, number> {
  const home = new AvfsHome(dir);
  const v = home.create('b', {}, backend);
  v.startBackgroundCheckpoints();
  const vfs = new Vfs(v);
  const out = {} as Record<Op, number>;
  const small = Buffer.alloc(1024);
  vfs.mkdir('/s0');
  vfs.mkdir('/s1');
  row('w1k', SMALL_N);
  out.w1k = SMALL_N / (time(() => {
    for (let i = 0; i < SMALL_N; i++) vfs.writeFile(`/s${i % 2}/f${i}`, randomFillSync(small));
  }) / 1000);
  row('r1k', SMALL_N);
  out.r1k = SMALL_N / (time(() => {
    for (let i = 0; i < SMALL_N; i++) vfs.readFile(`/s${i % 2}/f${i}`);
  }) / 1000);
  row('stat', SMALL_N);
  out.stat = SMALL_N / (time(() => {
    for (let i = 0; i < SMALL_N; i++) vfs.stat(`/s${i % 2}/f${i}`);
  }) / 1000);
  row('readdir');
  out.readdir = median(Array.from({ length: 5 }, () => time(() => vfs.readdir('/s0'))));
  const big = Buffer.alloc(MiB);
  vfs.mkdir('/big');
  row('w1m', BIG_N);
  out.w1m = BIG_N / (time(() => {
    for (let i = 0; i < BIG_N; i++) vfs.writeFile(`/big/f${i}`, randomFillSync(big));
  }) / 1000);
  row('r1m', BIG_N);
  out.r1m = BIG_N / (time(() => {
    for (let i = 0; i < BIG_N; i++) vfs.readFile(`/big/f${i}`);
  }) / 1000);
  row('import');
  out.import = time(() => importTree(vfs, importSrc, '/imp'));
  v.close();

  for (const n of [10_000, 50_000] as const) {
    const cv = home.create(`cp${n}`, {}, backend);
    const cvfs = new Vfs(cv);
    populate(cvfs, n);
    timing = undefined;
    cv.checkpoints.save({ name: 'base' });
    cvfs.writeFile('/changed', Buffer.from('x'));
    row(n === 10_000 ? 'save10k' : 'save50k');
    const s = time(() => cv.checkpoints.save({ name: 'again' }));
    row(n === 10_000 ? 'restore10k' : 'restore50k');
    const r = time(() => cv.checkpoints.restore('base'));
    timing = undefined;
    if (n === 10_000) {
      out.save10k = s;
      out.restore10k = r;
    } else {
      out.save50k = s;
      out.restore50k = r;
    }
    cv.close();
  }
  row('fork');
  out.fork = time(() => forkVault(home, 'cp10000', 'f').close());
  return out;
}

export function benchBackends(backends: BackendKind[], reps: number): void {
  const root = path.join(__dirname, '..');
  const importSrc = path.join(root, 'node_modules', 'zod');
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'avfs-bench-backends-'));
  const cpus = os.cpus();
  const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
  console.log(`command: npm run bench -- store --backend ${backends.filter((b) => b !== 'sqlite').join(',')} --reps ${reps}`);
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? '?'}, node ${process.version}; load ${load()} at start`);
  console.log(`work:    ${SMALL_N} × 1 KiB, ${BIG_N} × 1 MiB (random), import node_modules/zod, checkpoints of 10,000 and 50,000 small files; ${reps} reps + 1 warm-up, medians\n`);
  // Every repetition's fresh home makes its vaults under the same names: on one server they need
  // the home's prefix (the conformance run's seam, host/store/engine.ts), and they stay there.
  if (backends.includes('postgres')) process.env.AVFS_PG_NAMESPACE = 'home';
  if (backends.includes('postgres') && !process.env.AVFS_PG_URL) {
    const cluster = startCluster({ durable: true });
    process.env.AVFS_PG_URL = cluster.url;
    console.log(`server:  PostgreSQL, a throwaway cluster on a Unix socket (fsync and synchronous commit on)`);
  }
  const samples = new Map<BackendKind, Array<Record<Op, number>>>(backends.map((b) => [b, []]));
  try {
    for (let r = 0; r <= reps; r++) {
      for (let k = 0; k < backends.length; k++) {
        const b = backends[(r + k) % backends.length]!;
        const dir = fs.mkdtempSync(path.join(tmp, `${b}-${r}-`));
        try {
          const s = rep(dir, b, importSrc);
          if (r > 0) samples.get(b)!.push(s);
        } finally {
          fs.rmSync(dir, { recursive: true, force: true });
        }
      }
      process.stderr.write(`  ${r === 0 ? 'warm-up' : `rep ${r}/${reps}`} done\n`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const fmt = (v: number, unit: Row['unit']) => (unit === 'ms' ? (v < 10 ? v.toFixed(2) : v.toFixed(1)) : v < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US'));
  const head = ['operation', 'unit', ...backends, ...backends.slice(1).map((b) => `${b}÷sqlite`)];
  const lines = [head];
  for (const op of Object.keys(ROWS) as Op[]) {
    const row = ROWS[op];
    const med = backends.map((b) => median(samples.get(b)!.map((s) => s[op])));
    const ratios = med.slice(1).map((m) => `${(row.higher ? m / med[0]! : med[0]! / m).toFixed(2)}×`);
    lines.push([row.label, row.unit, ...med.map((m) => fmt(m, row.unit)), ...ratios]);
  }
  const widths = head.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  const pad = (cells: string[]) => '| ' + cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ') + ' |';
  console.log(pad(lines[0]!));
  console.log('|' + widths.map((w, i) => (i === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|');
  for (const l of lines.slice(1)) console.log(pad(l));
  console.log(`\nratio: > 1 means the backend is faster than SQLite. load ${load()} at the end`);
  if (trips.size > 0) {
    console.log('\nPostgreSQL round trips per operation (each is one request to the server; over a network, multiply by its round-trip time):');
    for (const op of Object.keys(ROWS) as Op[]) if (trips.has(op)) console.log(`  ${ROWS[op].label}: ${trips.get(op)!.toFixed(2)}`);
  }
}
