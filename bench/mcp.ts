/**
 * MCP server benchmark: what an agent connected to `avfs mcp` waits for.
 *
 *   npm run bench -- mcp [--n N]
 *
 * A real `avfs host` on its socket and a real `avfs mcp` driven by the SDK's Client over stdio (the
 * server goes through the host), side by side in one run:
 * - `read_file` of a small file: the MCP round trip, client → server → host → server → client
 *   (target: median ≤ 2 ms), next to the same read (`fs/readText`) through the CLI's host client
 *   on the same host, interleaved: what the MCP layer adds over the host's own round trip;
 * - `exec` of `true` (argv, the mount kept) against `avfs proxy exec --keep-mount -- true` run as a
 *   process, as an agent's shell tool runs it (both through the host, the mount kept up by the first
 *   call): the MCP call's overhead over the CLI's (target: ≤ +10 ms).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectHost } from '../host/daemon/client';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'avfs.js');
const args = process.argv.slice(2);
const nAt = args.indexOf('--n');
const N = nAt >= 0 ? Math.max(5, Number(args[nAt + 1]) || 30) : 30;
const home = mkdtempSync(join(tmpdir(), 'avfs-bench-mcp-'));
const env = { ...process.env, AVFS_HOME: home } as Record<string, string>;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (x: number) => (Math.abs(x) < 1 ? x.toFixed(3) : x.toFixed(2));

function avfs(a: string[]): void {
  const r = spawnSync(process.execPath, [CLI, ...a], { env });
  if (r.status !== 0) throw new Error(`avfs ${a.join(' ')}: ${r.stderr}`);
}

async function main(): Promise<void> {
  avfs(['vault', 'create', 'bench']);
  avfs(['--vault', 'bench', 'write', '/hello.txt', 'hello\n']);
  const host = spawn(process.execPath, [CLI, 'host'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  host.stderr.on('data', (d: Buffer) => (log += d.toString()));
  for (let i = 0; i < 400 && !log.includes(' serving '); i++) await new Promise((r) => setTimeout(r, 50));
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, '--vault', 'bench', 'mcp'], env, stderr: 'ignore' }));
  const direct = await connectHost({ dir: home }, { name: 'bench (host client)', kind: 'cli' });
  if (!direct) throw new Error('the host did not answer');
  try {
    for (let i = 0; i < 20; i++) {
      await client.callTool({ name: 'read_file', arguments: { path: '/hello.txt' } });
      await direct.call('fs/readText', { vault: 'bench', path: '/hello.txt' });
    }
    const reads: number[] = [];
    const hostReads: number[] = [];
    const load0 = loadavg()[0]!;
    for (let i = 0; i < N * 10; i++) {
      let t0 = performance.now();
      await client.callTool({ name: 'read_file', arguments: { path: '/hello.txt' } });
      reads.push(performance.now() - t0);
      t0 = performance.now();
      await direct.call('fs/readText', { vault: 'bench', path: '/hello.txt' });
      hostReads.push(performance.now() - t0);
    }
    const readLoad = (load0 + loadavg()[0]!) / 2;
    // The first exec makes the kept mount; then each run reuses it.
    await client.callTool({ name: 'exec', arguments: { argv: ['true'] } });
    const mcp: number[] = [];
    const cli: number[] = [];
    for (let i = 0; i < N; i++) {
      let t0 = performance.now();
      await client.callTool({ name: 'exec', arguments: { argv: ['true'] } });
      mcp.push(performance.now() - t0);
      t0 = performance.now();
      avfs(['--vault', 'bench', 'proxy', 'exec', '--keep-mount', '--', 'true']);
      cli.push(performance.now() - t0);
    }
    const over = median(mcp) - median(cli);
    console.log(
      `read_file round trip (MCP → host): median ${fmt(median(reads))} ms over ${reads.length} calls (target ≤ 2 ms); ` +
        `the same fs/readText through the CLI's host client: ${fmt(median(hostReads))} ms; MCP's own part: +${fmt(median(reads) - median(hostReads))} ms (load average ${readLoad.toFixed(1)} on ${cpus().length} cores)`,
    );
    console.log(`exec of true, kept mount: MCP ${fmt(median(mcp))} ms, avfs proxy exec --keep-mount -- true ${fmt(median(cli))} ms (median of ${N}); MCP over the CLI: ${over >= 0 ? '+' : ''}${fmt(over)} ms (target ≤ +10 ms)`);
  } finally {
    direct.close();
    await client.close();
    host.kill('SIGTERM');
    await new Promise((r) => host.once('exit', r));
    rmSync(home, { recursive: true, force: true });
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
