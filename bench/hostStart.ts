/**
 * The vault host's cold start as the extension sees it: from the first request of a fresh host
 * client to its answer, on a fresh avfs home, which covers the runtime check (a Node run that loads
 * better-sqlite3), spawning `avfs host --stdio`, loading the bundle, and the hello.
 *
 *   npm run bench -- hostStart <extension folder> [--node <node>] [--n N]
 *
 * <extension folder>: an installed (or unpacked) VSIX, or the checkout. --node: avfs.nodePath;
 * without it, what the extension picks there (its own runtime/bin/node, else `node` from PATH).
 * Prints each start and the median.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HostClient, type Logger } from '../extension/client/hostClient';
import { hostNode } from '../extension/client/runtime';

const args = process.argv.slice(2);
const option = (name: string) => {
  const at = args.indexOf(name);
  return at >= 0 ? args.splice(at, 2)[1] : undefined;
};
const setting = option('--node') ?? '';
const n = Number(option('--n') ?? 7);
const folder = args[0];
if (!folder || !Number.isInteger(n) || n < 1) {
  console.error('usage: npm run bench -- hostStart <extension folder> [--node <node>] [--n N]');
  process.exit(2);
}

const quiet: Logger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: (m) => console.error(m) };

async function once(): Promise<number> {
  const home = mkdtempSync(join(tmpdir(), 'avfs-bench-start-'));
  const client = new HostClient({
    settings: () => ({ nodePath: setting, home, requestTimeoutMs: 30_000 }),
    hostScript: join(folder!, 'dist', 'avfs.js'),
    clientName: 'bench',
    log: quiet,
  });
  try {
    const started = performance.now();
    await client.hostRequest('host/status', {});
    return performance.now() - started;
  } finally {
    await client.dispose();
    rmSync(home, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const node = hostNode(setting, folder!);
  console.log(`host cold start: ${folder} on ${node.nodePath} (${node.source}), ${n} starts`);
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const ms = await once();
    times.push(ms);
    console.log(`  start ${i + 1}: ${ms.toFixed(0)} ms`);
  }
  times.sort((a, b) => a - b);
  console.log(`median ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms (min ${times[0]!.toFixed(0)}, max ${times[times.length - 1]!.toFixed(0)})`);
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
