/**
 * Differential test: the same random sequences of file operations on a vault mount and on a
 * plain directory must give the same outcome per operation (bytes read, or the error code) and
 * leave identical trees (names, types, bytes, modes, link counts, symlink targets).
 *
 * Then single calls that random sequences do not reach (test/fuse/posixProbe.py), times compared to
 * the nanosecond: times set on an open descriptor, utimensat with ns, UTIME_NOW and UTIME_OMIT for
 * either time or both, times before 1970 and far past 2038, set-group-ID directories, mkfifo, Unix
 * socket bind, names longer than NAME_MAX and full paths longer than PATH_MAX.
 *
 * AVFS_FUSE_DIFF_SEQS=N runs N sequences (default 2500, plus a tenth with the cache on), AVFS_FUSE_DIFF_SEED=S picks the seed.
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as fsp from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bash, fuseMissing, type MountFixture, mountFixture } from './helpers';

const SEQS = Number(process.env.AVFS_FUSE_DIFF_SEQS ?? 2500);
const SEED = Number(process.env.AVFS_FUSE_DIFF_SEED ?? 20240601);
const OPS_PER_SEQ = 14;
const CONCURRENCY = 8;

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NAMES = ['a', 'b', 'c', 'd', 'd/a', 'd/b', 'e', 'e/f', 'e/f/a'];
const TARGETS = ['a', 'b', 'd', 'e/f', 'd/a', '../w/c', 'missing', 'a/x'];
const SIZES = [0, 1, 100, 4096, 65536, 70000, 140000];
const MODES = [0o644, 0o755, 0o600, 0o700, 0o444];

type Op = { kind: string; p: string; q?: string; data?: Buffer; n?: number };

function makeSequence(rnd: () => number, hardLinks: boolean): Op[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const bytes = (n: number) => {
    const b = Buffer.alloc(n);
    const fill = Math.floor(rnd() * 256);
    for (let i = 0; i < n; i += 997) b[i] = (fill + i) & 0xff;
    b.fill(fill, 0, Math.min(n, 50));
    return b;
  };
  const ops: Op[] = [];
  for (let i = 0; i < OPS_PER_SEQ; i++) {
    const p = pick(NAMES);
    const q = pick(NAMES);
    const r = rnd();
    if (r < 0.16) ops.push({ kind: 'writeFile', p, data: bytes(pick(SIZES)) });
    else if (r < 0.22) ops.push({ kind: 'append', p, data: bytes(pick([1, 300, 70000])) });
    else if (r < 0.3) ops.push({ kind: 'pwrite', p, data: bytes(pick([1, 5000, 65536])), n: pick([0, 10, 65530, 100000, 200000]) });
    else if (r < 0.35) ops.push({ kind: 'truncate', p, n: pick([0, 3, 65536, 65537, 150000]) });
    else if (r < 0.45) ops.push({ kind: 'mkdir', p });
    else if (r < 0.5) ops.push({ kind: 'rmdir', p });
    else if (r < 0.57) ops.push({ kind: 'unlink', p });
    else if (r < 0.67) ops.push({ kind: 'rename', p, q });
    else if (r < 0.73) ops.push({ kind: hardLinks ? 'link' : 'copyFile', p, q });
    else if (r < 0.78) ops.push({ kind: 'symlink', p, q: pick(TARGETS) });
    else if (r < 0.83) ops.push({ kind: 'chmod', p, n: pick(MODES) });
    else if (r < 0.88) ops.push({ kind: 'openUnlink', p, data: bytes(pick([10, 70000])), n: pick([0, 5, 66000]) });
    else if (r < 0.92) ops.push({ kind: 'copyFile', p, q });
    else ops.push({ kind: 'readFile', p });
  }
  return ops;
}

/** Applies one op under `root`; returns what a user observes: 'ok', bytes read, or the error code. */
async function apply(root: string, op: Op): Promise<string> {
  const P = join(root, op.p);
  const Q = op.q !== undefined ? join(root, op.q) : '';
  try {
    switch (op.kind) {
      case 'writeFile':
        await fsp.writeFile(P, op.data!);
        return 'ok';
      case 'append':
        await fsp.appendFile(P, op.data!);
        return 'ok';
      case 'pwrite': {
        const fh = await fsp.open(P, 'r+');
        try {
          await fh.write(op.data!, 0, op.data!.length, op.n!);
        } finally {
          await fh.close();
        }
        return 'ok';
      }
      case 'truncate':
        await fsp.truncate(P, op.n!);
        return 'ok';
      case 'mkdir':
        await fsp.mkdir(P);
        return 'ok';
      case 'rmdir':
        await fsp.rmdir(P);
        return 'ok';
      case 'unlink':
        await fsp.unlink(P);
        return 'ok';
      case 'rename':
        await fsp.rename(P, Q);
        return 'ok';
      case 'link':
        await fsp.link(P, Q);
        return 'ok';
      case 'symlink':
        await fsp.symlink(op.q!, P);
        return 'ok';
      case 'chmod':
        await fsp.chmod(P, op.n!);
        return 'ok';
      case 'copyFile':
        await fsp.copyFile(P, Q);
        return 'ok';
      case 'readFile':
        return 'read:' + hash(await fsp.readFile(P));
      case 'openUnlink': {
        // Unlink a file while it is open, keep using it, then close it.
        const fh = await fsp.open(P, 'r+');
        try {
          await fsp.unlink(P);
          await fh.write(op.data!, 0, op.data!.length, op.n!);
          const st = await fh.stat();
          const back = Buffer.alloc(st.size);
          await fh.read(back, 0, st.size, 0);
          return `size:${st.size}:read:${hash(back)}`;
        } finally {
          await fh.close();
        }
      }
      default:
        throw new Error(`unknown op ${op.kind}`);
    }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (!code) throw e;
    return code;
  }
}

function hash(b: Buffer): string {
  let h = 2166136261;
  for (let i = 0; i < b.length; i++) h = Math.imul(h ^ b[i]!, 16777619);
  return `${b.length}/${(h >>> 0).toString(16)}`;
}

/** Every entry under `root`: type, mode bits, link count, bytes (files) or target (symlinks). */
async function snapshot(root: string, withLinks: boolean): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    const names = (await fsp.readdir(dir)).sort();
    for (const name of names) {
      const p = join(dir, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = await fsp.lstat(p);
      const links = withLinks ? ` nlink=${st.nlink}` : '';
      if (st.isSymbolicLink()) out.push(`${r} -> ${await fsp.readlink(p)}`);
      else if (st.isDirectory()) {
        out.push(`${r}/ mode=${(st.mode & 0o7777).toString(8)}${links}`);
        await walk(p, r);
      } else out.push(`${r} mode=${(st.mode & 0o7777).toString(8)}${links} size=${st.size} ${hash(await fsp.readFile(p))}`);
    }
  };
  await walk(root, '');
  return out;
}

async function runSequences(mountRoot: string, plainRoot: string, count: number, seed: number, withLinks: boolean): Promise<number> {
  let next = 0;
  let opsRun = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      const rnd = prng(seed + i * 7919);
      const ops = makeSequence(rnd, withLinks);
      const a = join(mountRoot, `s${i}`, 'w');
      const b = join(plainRoot, `s${i}`, 'w');
      await fsp.mkdir(a, { recursive: true });
      await fsp.mkdir(b, { recursive: true });
      const log: string[] = [];
      for (const op of ops) {
        const ra = await apply(a, op);
        const rb = await apply(b, op);
        log.push(`${op.kind} ${op.p}${op.q !== undefined ? ' ' + op.q : ''}${op.n !== undefined ? ' n=' + op.n : ''}${op.data ? ' len=' + op.data.length : ''} → mount ${ra} / dir ${rb}`);
        assert.equal(ra, rb, `sequence ${i} (seed ${seed}): outcomes differ\n${log.join('\n')}`);
        opsRun++;
      }
      const [ta, tb] = [await snapshot(a, withLinks), await snapshot(b, withLinks)];
      assert.deepEqual(ta, tb, `sequence ${i} (seed ${seed}): trees differ after\n${log.join('\n')}`);
      await fsp.rm(join(mountRoot, `s${i}`), { recursive: true, force: true });
      await fsp.rm(join(plainRoot, `s${i}`), { recursive: true, force: true });
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return opsRun;
}

describe('differential: vault mount vs plain directory', { skip: fuseMissing }, () => {
  let exact: MountFixture;
  let cached: MountFixture;
  before(async () => {
    // Attribute caching off: link counts of other names of a hard-linked file are exact at once
    // (with the 1 s cache they may lag, see docs/fuse.md).
    exact = await mountFixture({ vault: 'diff', extraArgs: ['--cache-ms', '0'] });
    cached = await mountFixture({ vault: 'diffc' });
  });
  after(async () => {
    await exact?.cleanup();
    await cached?.cleanup();
  });

  test(`${SEQS} random sequences (seed ${SEED}), caching off: outcomes and trees identical, link counts included`, async () => {
    const plain = join(exact.dir, 'plain');
    mkdirSync(plain);
    const t0 = Date.now();
    const n = await runSequences(exact.mnt, plain, SEQS, SEED, true);
    console.log(`# ${SEQS} sequences, ${n} operations in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    assert.deepEqual(await fsp.readdir(exact.mnt), [], 'every sequence cleaned up');
  });

  // With the cache on, a change made through one name of a hard-linked file reaches the kernel's
  // view of its other names only when their cached attributes expire (libfuse 2's path API gives
  // each name its own kernel inode; see docs/fuse.md), so these sequences use no hard links.
  test(`${Math.ceil(SEQS / 10)} sequences with the default 1 s cache (no hard links): outcomes and trees identical`, async () => {
    const plain = join(cached.dir, 'plain');
    mkdirSync(plain);
    await runSequences(cached.mnt, plain, Math.ceil(SEQS / 10), SEED + 1, false);
  });
});

describe('differential: single POSIX calls, mount vs plain directory', { skip: fuseMissing }, () => {
  let exact: MountFixture;
  let cached: MountFixture;
  before(async () => {
    exact = await mountFixture({ vault: 'probe', extraArgs: ['--cache-ms', '0'] });
    cached = await mountFixture({ vault: 'probec' });
  });
  after(async () => {
    await exact?.cleanup();
    await cached?.cleanup();
  });

  const probe = async (dir: string): Promise<Record<string, unknown>> => {
    await fsp.mkdir(dir, { recursive: true });
    return JSON.parse(await bash(`python3 ${join(__dirname, 'posixProbe.py')}`, dir)) as Record<string, unknown>;
  };

  for (const which of ['caching off', 'default 1 s cache'] as const) {
    test(`times through open descriptors and utimensat, set-group-ID directories, FIFOs, sockets, long names, deep paths (${which})`, async () => {
      const f = which === 'caching off' ? exact : cached;
      const plain = await probe(join(f.dir, 'plain-probe'));
      const mount = await probe(join(f.mnt, 'probe'));
      // The probe really ran: the plain directory shows what Linux does.
      assert.deepEqual(plain['futimens after writes survives close'], ['1262304000123456789', '1577836800987654321', 300000]);
      assert.deepEqual(plain['times before 1970'], ['-1234567890123456789', '-1', '-1234567890123456789', '-1234567890123456789']);
      assert.deepEqual(plain['mkfifo: type, mode, and bytes through it'], [true, '0o640', 0, ['through the pipe'], 1]);
      assert.equal((plain['name of 255 bytes works; longer names give ENAMETOOLONG for every call taking a path'] as Record<string, string[]>)['256']![0], 'ENAMETOOLONG');
      for (const key of Object.keys(plain)) assert.deepEqual(mount[key], plain[key], `${key}: mount differs from a plain directory`);
      assert.deepEqual(Object.keys(mount).sort(), Object.keys(plain).sort());
    });
  }
});
