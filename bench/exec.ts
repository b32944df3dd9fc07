/**
 * Exec benchmark: what `avfs proxy exec` costs on top of running the command directly.
 *
 *   npm run bench -- exec [--runs N]
 *
 * Side by side, interleaved round by round (so machine noise hits every line alike), each in a
 * fresh process: `true` run directly; `node -e 0`; a cold `avfs --version`; a cold
 * `avfs proxy exec -- true` (no mount up: policy, baseline, mount, run, barrier, unmount,
 * summary); the same call while a kept mount of the vault is up (`--keep-mount` made it).
 * Targets: cold ≤ 2 × `avfs --version`; kept mount ≤ 1.3 × `avfs --version`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'avfs.js');
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Math.max(1, Number(args[runsAt + 1]) || 15) : 15;

const home = mkdtempSync(join(tmpdir(), 'avfs-bench-exec-'));
const env = { ...process.env, AVFS_HOME: home };

function timed(cmd: string, argv: string[]): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const avfs = (...a: string[]) => timed(process.execPath, [CLI, ...a]);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function main(): void {
  avfs('vault', 'create', 'cold');
  avfs('vault', 'create', 'kept');
  avfs('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--', 'true');
  const lines: Array<[string, () => number]> = [
    ['true (directly)', () => timed('true', [])],
    ['node -e 0', () => timed(process.execPath, ['-e', '0'])],
    ['avfs --version (cold)', () => avfs('--version')],
    ['avfs proxy exec -- true (cold: no mount up)', () => avfs('--vault', 'cold', 'proxy', 'exec', '--', 'true')],
    ['avfs proxy exec -- true (kept mount)', () => avfs('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--', 'true')],
  ];
  const samples = lines.map(() => [] as number[]);
  for (let r = 0; r < RUNS; r++) lines.forEach(([, fn], i) => samples[i]!.push(fn()));
  const med = samples.map(median);
  const version = med[2]!;
  console.log(`npm run bench -- exec --runs ${RUNS}   (${new Date().toISOString().slice(0, 10)}, medians of ${RUNS} interleaved runs)\n`);
  console.log('| what | median ms | × avfs --version | target |');
  console.log('|---|---|---|---|');
  const targets = ['', '', '', '≤ 2×', '≤ 1.3×'];
  lines.forEach(([name], i) => console.log(`| ${name} | ${med[i]!.toFixed(1)} | ${(med[i]! / version).toFixed(2)} | ${targets[i]} |`));
  console.log(`\nproxy overhead over running true directly: cold ${(med[3]! - med[0]!).toFixed(1)} ms, kept mount ${(med[4]! - med[0]!).toFixed(1)} ms`);
  console.log(`avfs --version against bare node: ${(version / med[1]!).toFixed(2)}× (target ≤ 1.5×)`);
}

try {
  main();
} finally {
  spawnSync(process.execPath, [CLI, 'unmount', join(home, 'mnt', 'kept')], { env });
  rmSync(home, { recursive: true, force: true });
}
