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
 *   (target: ≤ 20 ms over it);
 * - an output flood: `avfs proxy exec --shell 'yes | head -c 1G'` through a fresh host, with a
 *   second client that introduced itself and never reads (a hung window), against the same run
 *   with no host: the host's peak RSS (target ≤ 300 MiB) and the wall time (target ≤ 3× without
 *   a host), with --json (the envelope only) and with the output shown (to /dev/null).
 *   `--flood-only` runs this part alone.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectHost, type HostConnection } from '../host/daemon/client';
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

/** Wall time of one CLI run (stdout to /dev/null), and its exit code. */
function timedCli(a: string[], extraEnv: Record<string, string> = {}): { ms: number; code: number | null } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...a], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'ignore', 'ignore'] });
  return { ms: performance.now() - t0, code: r.status };
}

async function flood(): Promise<void> {
  const FLOOD = ['--vault', 'b', 'proxy', 'exec', '--shell', 'yes | head -c 1G'];
  const host = spawn(process.execPath, [CLI, 'host'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  host.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 20_000;
  while (!log.includes(' serving ') && Date.now() < deadline) await sleep(20);
  const socket = (JSON.parse(readFileSync(join(home, 'host.json'), 'utf8')) as { socket: string }).socket;
  // A window that hangs: introduced, sent every run's output, reads nothing.
  const hung = connect(socket);
  await new Promise((r) => hung.once('connect', r));
  const hello = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'client/hello', params: { name: 'hung window', kind: 'vscode', approver: false } });
  hung.write(`Content-Length: ${Buffer.byteLength(hello)}\r\n\r\n${hello}`);
  hung.pause();
  const peak = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${host.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  try {
    const rows: string[] = [];
    for (const [what, a] of [
      ['--json (envelope only)', ['--json', ...FLOOD]],
      ['output shown (to /dev/null)', FLOOD],
    ] as const) {
      const direct = timedCli([...a], { AVFS_NO_HOST: '1' });
      const via = timedCli([...a]);
      if (direct.code !== 0 || via.code !== 0) throw new Error(`the flood failed: exit ${direct.code} without a host, ${via.code} through it\n${log}`);
      const ratio = via.ms / direct.ms;
      rows.push(`| ${what} | ${(direct.ms / 1000).toFixed(2)} | ${(via.ms / 1000).toFixed(2)} | ${ratio.toFixed(2)}× ${ratio <= 3 ? 'PASS' : 'FAIL'} | ${peak().toFixed(0)} MiB ${peak() <= 300 ? 'PASS' : 'FAIL'} |`);
    }
    console.log(`\nOutput flood: yes | head -c 1G, one CLI and one hung window (never reads) on the host; load average ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}\n`);
    console.log('| run | without a host s | through the host s | ratio (≤ 3×) | host peak RSS so far (≤ 300 MiB) |');
    console.log('|---|---|---|---|---|');
    for (const r of rows) console.log(r);
  } finally {
    hung.destroy();
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
  }
}

async function main(): Promise<void> {
  if (args.includes('--flood-only')) {
    avfs(['vault', 'create', 'b']);
    try {
      await flood();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
    return;
  }
  avfs(['vault', 'create', 'b']);
  avfs(['--vault', 'b', 'write', '/small.txt', 'hello']);
  avfs(['--vault', 'b', 'write', '/dir/1mib.bin', '-p'], Buffer.alloc(1024 * 1024, 0x78));

  const host = spawn(process.execPath, [CLI, 'host'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  host.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const deadline = Date.now() + 20_000;
  while (!log.includes(' serving ') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

  const waiters = new Map<string, (t: number) => void>();
  let client: HostConnection | undefined;
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
  }
  try {
    await flood();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
