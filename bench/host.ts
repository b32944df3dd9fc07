/**
 * Vault host benchmark: what a client of a running host waits for.
 *
 *   npm run bench -- host [--n N]
 *
 * A real `avfs host` process on its Unix socket, a client connected as the editor connects, side
 * by side in one run:
 * - `fs/stat` round trip, N sequential calls in 10 blocks (target: median ≤ 0.2 ms); beside it the
 *   round trip of a host method that does no work (`approval/list`): the transport's own floor.
 *   On a shared machine the blocks' medians show how much of the spread is other processes;
 * - `fs/readFile` of a 1 MiB file;
 * - change events: from a write's completion to the `vault/changed` notice at a subscribed client,
 *   for a write made as the CLI makes it (`fs/writeFile` through the host) and for a write through
 *   a mount (a file written and closed in a kept mount, served by its own process); the writes are
 *   100 ms apart, as an editor's saves are (a burst is gathered: at most one notice per 25 ms);
 * - `exec/run` of `true` through the host with a kept mount, against running `true` directly
 *   (target: ≤ 20 ms over it).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectHost, type HostClient } from '../host/daemon/client';
import { AvfsHome } from '../host/store/home';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'avfs.js');
const args = process.argv.slice(2);
const nAt = args.indexOf('--n');
const N = nAt >= 0 ? Math.max(10, Number(args[nAt + 1]) || 2000) : 2000;

const home = mkdtempSync(join(tmpdir(), 'avfs-bench-host-'));
const env = { ...process.env, AVFS_HOME: home };

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}
const fmt = (x: number) => (x < 1 ? x.toFixed(3) : x.toFixed(2));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function avfs(a: string[], input?: Buffer): void {
  const r = spawnSync(process.execPath, [CLI, ...a], { env, input: input ?? Buffer.alloc(0) });
  if (r.status !== 0) throw new Error(`avfs ${a.join(' ')}: ${r.stderr}`);
}

async function timeMany(n: number, fn: () => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

/** Resolves with the time a `vault/changed` notice naming `path` arrives. */
function changeOf(waiters: Map<string, (t: number) => void>, path: string): Promise<number> {
  return new Promise((resolve) => waiters.set(path, resolve));
}

async function main(): Promise<void> {
  avfs(['vault', 'create', 'b']);
  avfs(['--vault', 'b', 'write', '/small.txt', 'hello']);
  avfs(['--vault', 'b', 'write', '/dir/1mib.bin', '-p'], Buffer.alloc(1024 * 1024, 0x78));

  const host = spawn(process.execPath, [CLI, 'host'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  host.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 20_000;
  while (!log.includes(' serving ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

  const waiters = new Map<string, (t: number) => void>();
  let client: HostClient | undefined;
  try {
    client = await connectHost(new AvfsHome(home), {
      name: 'bench',
      kind: 'vscode',
      setup: (conn) =>
        conn.onNotification('vault/changed', (n: { changes: Array<{ path: string | null }> }) => {
          const now = performance.now();
          for (const c of n.changes) {
            const w = c.path !== null ? waiters.get(c.path) : undefined;
            if (w) {
              waiters.delete(c.path!);
              w(now);
            }
          }
        }),
    });
    if (!client) throw new Error(`the host did not start:\n${log}`);
    const c = client;

    // Round trips.
    // Warm: the host is long-lived, so its code is optimised by the time an editor stats files.
    await timeMany(2000, () => c.call('fs/stat', { vault: 'b', path: '/small.txt' }));
    await timeMany(2000, () => c.callHost('approval/list', {}));
    const stat: number[] = [];
    const floor: number[] = [];
    const blocks: number[] = [];
    for (let b = 0; b < 10; b++) {
      const block = await timeMany(N / 10, () => c.call('fs/stat', { vault: 'b', path: '/small.txt' }));
      stat.push(...block);
      blocks.push(quantile(block, 0.5));
      floor.push(...(await timeMany(N / 10, () => c.callHost('approval/list', {}))));
    }
    await timeMany(5, () => c.call('fs/readFile', { vault: 'b', path: '/dir/1mib.bin' }));
    const read = await timeMany(Math.max(20, N / 20), () => c.call('fs/readFile', { vault: 'b', path: '/dir/1mib.bin' }));

    // Change events: a write as the CLI makes it (through the host), then one through a kept mount.
    const EVENTS = 30;
    const viaHost: number[] = [];
    for (let i = 0; i < EVENTS; i++) {
      await sleep(100);
      const path = `/events/cli-${i}.txt`;
      const seen = changeOf(waiters, path);
      await c.call('fs/writeFile', { vault: 'b', path, data: Buffer.from('x').toString('base64'), parents: true });
      const written = performance.now();
      viaHost.push((await seen) - written);
    }
    const mount = await c.call('mount/mount', { vault: 'b' });
    const viaMount: number[] = [];
    for (let i = 0; i < EVENTS; i++) {
      await sleep(100);
      const name = `mount-${i}.txt`;
      const seen = changeOf(waiters, `/${name}`);
      await writeFile(join(mount.mountpoint, name), 'x');
      const written = performance.now();
      viaMount.push((await seen) - written);
    }

    // exec/run of `true` with a kept mount, against `true` directly, interleaved.
    await c.call('exec/run', { vault: 'b', command: { argv: ['true'] }, keep_mount: true });
    const RUNS = 30;
    const direct: number[] = [];
    const exec: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now();
      spawnSync('true');
      direct.push(performance.now() - t0);
      exec.push((await timeMany(1, () => c.call('exec/run', { vault: 'b', command: { argv: ['true'] }, keep_mount: true })))[0]!);
    }
    await c.call('mount/unmount', { mountpoint: mount.mountpoint });

    const row = (what: string, xs: number[], target = '') => console.log(`| ${what} | ${fmt(quantile(xs, 0.5))} | ${fmt(quantile(xs, 0.9))} | ${target} |`);
    console.log(`npm run bench -- host --n ${N}   (${new Date().toISOString().slice(0, 10)}, one host process, one client on its Unix socket)\n`);
    console.log('| what | median ms | p90 ms | target |');
    console.log('|---|---|---|---|');
    row(`fs/stat round trip (${N} calls)`, stat, '≤ 0.2 ms median');
    row(`approval/list round trip: no work, the transport's floor (${N} calls)`, floor);
    row(`fs/readFile of 1 MiB (${read.length} calls)`, read);
    row(`change event after a write through the host (fs/writeFile, as the CLI) (${EVENTS})`, viaHost);
    row(`change event after a write through a kept mount (${EVENTS})`, viaMount);
    row(`true, run directly (${RUNS})`, direct);
    row(`exec/run of true with a kept mount (${RUNS})`, exec, '≤ direct + 20 ms');
    const over = quantile(exec, 0.5) - quantile(direct, 0.5);
    console.log(`\nexec/run over running true directly: ${fmt(over)} ms (target ≤ 20 ms): ${over <= 20 ? 'PASS' : 'FAIL'}`);
    console.log(`fs/stat median ${fmt(quantile(stat, 0.5))} ms (target ≤ 0.2 ms): ${quantile(stat, 0.5) <= 0.2 ? 'PASS' : 'FAIL'}`);
    console.log(`fs/stat medians of the 10 blocks: ${blocks.map(fmt).join(' ')} ms`);
  } finally {
    client?.close();
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    rmSync(home, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
