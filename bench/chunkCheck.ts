/**
 * What checking chunks against their SHA-256 on read costs (host/store/chunks.ts), side by side in
 * one run: the check as avfs does it (`once`: a chunk is hashed the first time this process reads
 * it), at every read (`every`), and none (`off`, what reads cost before the check).
 *
 *   npm run bench -- chunkCheck [--mib N] [--rounds N]
 *
 * - store: N MiB of 1 MiB files read through the vfs in this process, twice (the first read of
 *   each chunk, then a read again), each way on a freshly opened vault, the ways interleaved per round;
 * - FUSE: one N MiB file read with `cat` through `avfs mount` (its own server process, given the
 *   way in AVFS_BENCH_CHUNK_CHECK, which only this bench sets), a fresh mount each way and round.
 * Medians in MiB/s; the machine's load is printed with them.
 */
import { spawnSync } from 'node:child_process';
import { randomFillSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ChunkCheck, setChunkCheckForBench } from '../host/store/chunks';
import { AvfsHome } from '../host/store/home';
import { Vfs } from '../host/vfs/vfs';

const args = process.argv.slice(2);
const intArg = (name: string, dflt: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : dflt);
const MIB = intArg('--mib', 128);
const ROUNDS = intArg('--rounds', 3);
const MiB = 1024 * 1024;
const CLI = join(__dirname, '..', 'dist', 'avfs.js');
const WAYS: ChunkCheck[] = ['off', 'every', 'once'];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');

function seconds(fn: () => void): number {
  const t0 = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

function avfs(home: string, env: Record<string, string>, ...argv: string[]): string {
  const r = spawnSync(process.execPath, [CLI, ...argv], { env: { ...process.env, AVFS_HOME: home, ...env }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`avfs ${argv.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

function main(): void {
  const dir = mkdtempSync(join(tmpdir(), 'avfs-bench-chunkcheck-'));
  try {
    const home = new AvfsHome(join(dir, 'home'));
    // Random bytes: every chunk its own (no chunk stored once for many).
    const v = home.create('bench');
    const files = new Vfs(v);
    files.mkdir('/s');
    for (let i = 0; i < MIB; i++) files.writeFile(`/s/${i}`, randomFillSync(Buffer.alloc(MiB)));
    files.writeFile('/big', Buffer.concat(Array.from({ length: MIB }, () => randomFillSync(Buffer.alloc(MiB)))));
    v.close();
    console.log(`chunk check on reads: ${MIB} MiB, ${ROUNDS} rounds; load average ${load()}`);

    const store: Record<ChunkCheck, { first: number[]; again: number[] }> = { off: { first: [], again: [] }, every: { first: [], again: [] }, once: { first: [], again: [] } };
    const fuse: Record<ChunkCheck, { first: number[]; again: number[] }> = { off: { first: [], again: [] }, every: { first: [], again: [] }, once: { first: [], again: [] } };
    for (let round = 0; round < ROUNDS; round++) {
      for (const way of WAYS) {
        setChunkCheckForBench(way);
        const opened = home.open('bench');
        const vfs = new Vfs(opened);
        const readAll = () => {
          let n = 0;
          for (let i = 0; i < MIB; i++) n += vfs.readFile(`/s/${i}`).length;
          if (n !== MIB * MiB) throw new Error(`read ${n} bytes`);
        };
        store[way].first.push(MIB / seconds(readAll));
        store[way].again.push(MIB / seconds(readAll));
        opened.close();

        const mnt = join(dir, `mnt-${way}-${round}`);
        mkdirSync(mnt);
        const env = { AVFS_BENCH_CHUNK_CHECK: way };
        avfs(home.dir, env, 'mount', 'bench', mnt);
        try {
          const cat = () => {
            const r = spawnSync('cat', [join(mnt, 'big')], { stdio: ['ignore', 'ignore', 'inherit'] });
            if (r.status !== 0) throw new Error('cat through the mount failed');
          };
          fuse[way].first.push(MIB / seconds(cat));
          fuse[way].again.push(MIB / seconds(cat));
        } finally {
          avfs(home.dir, env, 'unmount', mnt);
        }
      }
    }
    setChunkCheckForBench('once');

    const cell = (xs: number[], base: number[]) => `${median(xs).toFixed(0)} MiB/s (${(median(xs) / median(base)).toFixed(2)}×)`.padEnd(24);
    console.log(`\n  ${'read'.padEnd(32)} ${'off (no check)'.padEnd(24)} ${'every read'.padEnd(24)} once per chunk (avfs)`);
    for (const [name, t] of [['store, first read', store], ['FUSE cat, first read', fuse]] as const) {
      const key = 'first' as const;
      console.log(`  ${name.padEnd(32)} ${cell(t.off[key], t.off[key])} ${cell(t.every[key], t.off[key])} ${cell(t.once[key], t.off[key])}`);
      const name2 = name.replace('first read', 'read again');
      console.log(`  ${name2.padEnd(32)} ${cell(t.off.again, t.off.again)} ${cell(t.every.again, t.off.again)} ${cell(t.once.again, t.off.again)}`);
    }
    console.log(`  (× is against no check; load average after: ${load()})`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
