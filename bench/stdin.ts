/**
 * `avfs write PATH` from standard input: peak memory and time for inputs 10× apart, side by side
 * in one run, and the refusal of a stream that passes a quota (how soon, how much it read).
 *
 *   npm run bench -- stdin [--mib N]     (the large input is N MiB, default 200; the small one N/10)
 *
 * Peak memory is the CLI process's maxRSS, reported by a preload script at exit. "Bounded"
 * means the large input's peak is about the small one's, not ten times it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'avfs.js');
const MiB = 1024 * 1024;
const args = process.argv.slice(2);
const big = Number(args[args.indexOf('--mib') + 1] ?? 200) || 200;

const work = mkdtempSync(join(tmpdir(), 'avfs-bench-stdin-'));
const preload = join(work, 'rss.cjs');
writeFileSync(preload, "process.on('exit', () => require('fs').writeFileSync(process.env.RSS_OUT, String(process.resourceUsage().maxRSS)));\n");

interface Run {
  ms: number;
  rssMiB: number;
  code: number | null;
  consumedMiB: number;
}

/** Runs `avfs ARGS` with `size` bytes on stdin (made as read), returns time, peak RSS and what it took. */
function run(home: string, cliArgs: string[], size: number): Promise<Run> {
  return new Promise((resolve, reject) => {
    const rssOut = join(work, `rss-${Date.now()}-${Math.random()}`);
    const started = performance.now();
    const child = spawn(process.execPath, ['--require', preload, CLI, ...cliArgs], {
      env: { ...process.env, AVFS_HOME: home, RSS_OUT: rssOut },
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    let made = 0;
    const source = new Readable({
      read() {
        if (made >= size) return this.push(null);
        const n = Math.min(MiB, size - made);
        // Every 64 KiB chunk differs (its offset is written into it), so nothing is deduplicated.
        const block = Buffer.alloc(n, 0x5a);
        for (let off = 0; off + 8 <= n; off += 65_536) block.writeDoubleLE(made + off, off);
        made += n;
        this.push(block);
      },
    });
    child.stdin.on('error', () => source.destroy());
    source.pipe(child.stdin);
    child.on('error', reject);
    child.on('close', (code) => {
      source.destroy();
      resolve({ ms: performance.now() - started, rssMiB: Number(readFileSync(rssOut, 'utf8')) / 1024, code, consumedMiB: made / MiB });
    });
  });
}

function cli(home: string, ...a: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...a], { env: { ...process.env, AVFS_HOME: home }, stdio: 'ignore' });
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`avfs ${a.join(' ')} exited ${code}`))));
  });
}

async function main(): Promise<void> {
  const home = join(work, 'home');
  await cli(home, 'vault', 'create', 'b');
  const small = Math.max(1, Math.round(big / 10));
  const rows: string[][] = [['case', 'input MiB', 'read MiB', 'exit', 'time ms', 'MiB/s', 'peak RSS MiB']];
  const results: Record<string, Run> = {};
  for (const [name, mib] of [['write, small', small], ['write, large', big]] as const) {
    const r = await run(home, ['write', `/in-${mib}`], mib * MiB);
    results[name] = r;
    rows.push([name, String(mib), r.consumedMiB.toFixed(1), String(r.code), r.ms.toFixed(0), (mib / (r.ms / 1000)).toFixed(0), r.rssMiB.toFixed(1)]);
  }
  await cli(home, 'quota', 'set', 'max_file_size_mb', '1');
  const q = await run(home, ['write', '/refused'], big * MiB);
  rows.push(['refused at 1 MiB quota', String(big), q.consumedMiB.toFixed(1), String(q.code), q.ms.toFixed(0), '-', q.rssMiB.toFixed(1)]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log(`npm run bench -- stdin --mib ${big}\n`);
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  '));
  const ratio = results['write, large']!.rssMiB / results['write, small']!.rssMiB;
  console.log(`\npeak RSS, large / small input (10× the bytes): ${ratio.toFixed(2)}×`);
  rmSync(work, { recursive: true, force: true });
}

main().catch((e: unknown) => {
  rmSync(work, { recursive: true, force: true });
  console.error(e);
  process.exit(1);
});
