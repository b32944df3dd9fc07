/**
 * Policy benchmark: how long one decision takes on the test corpus once warm, and what a cold
 * start costs.
 *
 *   npm run bench -- policy [--reps N] [--runs N]
 *
 * Cold start, side by side in fresh processes, runs interleaved: `node -e 0` (Node itself),
 * `avfs --version`, and `avfs policy check` of a one-word and of a longer command line; medians
 * and the ratio to `--version` (target: policy check ≤ 1.5 × --version). Then the parser alone
 * (tree-sitter's native runtime and the bash grammar loaded, one parse of the long line, exit).
 * Warm figures: the corpus is decided three times to warm up, then every command is decided
 * `--reps` times; the table shows the median and p95 over commands of each one's median time.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { PolicyCommand, RuleSet } from '../host/protocol/policy';

const ROOT = join(__dirname, '..');
const args = process.argv.slice(2);
const repsAt = args.indexOf('--reps');
const REPS = repsAt >= 0 ? Math.max(1, Number(args[repsAt + 1]) || 20) : 20;
const runsAt = args.indexOf('--runs');
const CLI_RUNS = runsAt >= 0 ? Math.max(1, Number(args[runsAt + 1]) || 9) : 9;
/** A command line of the kind agents send, long enough for V8 to start optimising the parser. */
const LONG_LINE = 'cd src && npm test -- --coverage 2>&1 | tee test.log && git add -A && git commit -m "fix: parser" && git push origin HEAD';

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}
const median = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);
const ms = (x: number) => (x < 1 ? x.toFixed(3) : x.toFixed(2));

async function main(): Promise<void> {
  const corpus = readFileSync(join(ROOT, 'test', 'policy', 'corpus.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { cmd?: string; argv?: string[]; cwd?: string });
  const commands: { cmd: PolicyCommand; cwd: string; label: string }[] = corpus.map((c) => ({
    cmd: c.cmd !== undefined ? { shell: c.cmd } : { argv: c.argv! },
    cwd: c.cwd ?? '/workspace',
    label: c.cmd ?? JSON.stringify(c.argv),
  }));

  // Cold start in this process: module load, parser init, grammar load, first decision.
  const t0 = performance.now();
  const { createPolicyEngine } = await import('../host/policy/engine');
  const t1 = performance.now();
  const engine = await createPolicyEngine();
  const t2 = performance.now();
  const rules: RuleSet[] = [];
  const ctx = (cwd: string) => ({ mountpoint: '/workspace', cwd, home: '/home/user', rules });
  engine.decide({ shell: 'ls -la && git status' }, ctx('/workspace'));
  const t3 = performance.now();

  for (let w = 0; w < 3; w++) for (const c of commands) engine.decide(c.cmd, ctx(c.cwd));

  const perCommand: { label: string; median: number }[] = [];
  const all: number[] = [];
  const start = performance.now();
  for (const c of commands) {
    const times: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const a = performance.now();
      engine.decide(c.cmd, ctx(c.cwd));
      times.push(performance.now() - a);
    }
    all.push(...times);
    perCommand.push({ label: c.label, median: median(times) });
  }
  const elapsed = performance.now() - start;
  const medians = perCommand.map((p) => p.median).sort((a, b) => a - b);
  const allSorted = all.sort((a, b) => a - b);
  const slowest = [...perCommand].sort((a, b) => b.median - a.median).slice(0, 3);

  // Cold starts in fresh processes, interleaved so that machine load hits every variant alike.
  const bin = join(ROOT, 'dist', 'avfs.js');
  // The parser alone: the two native modules loaded, one parse of the long line, exit.
  const parserOnly = `const P=require(${JSON.stringify(require.resolve('tree-sitter'))});const p=new P();` +
    `p.setLanguage(require(${JSON.stringify(require.resolve('tree-sitter-bash'))}));p.parse(${JSON.stringify(LONG_LINE)});`;
  const variants: { label: string; args: string[]; home?: string }[] = [
    { label: 'node -e 0', args: ['-e', '0'] },
    { label: 'avfs --version', args: [bin, '--version'] },
    { label: "avfs policy check --shell 'ls'", args: [bin, '--json', 'policy', 'check', '--shell', 'ls'] },
    { label: 'avfs policy check --shell <long line>', args: [bin, '--json', 'policy', 'check', '--shell', LONG_LINE] },
    { label: 'node -e <the parser alone>', args: ['-e', parserOnly] },
  ];
  const home = mkdtempSync(join(tmpdir(), 'avfs-bench-policy-'));
  // The same call where a current vault exists: its rules are read from it (SQLite opened).
  const withVault = join(home, 'with-vault');
  const made = spawnSync(process.execPath, [bin, 'vault', 'create', 'bench'], { env: { ...process.env, AVFS_HOME: withVault, AVFS_NO_HOST: '1' } });
  if (made.status !== 0) throw new Error(`vault create failed: ${made.stderr}`);
  variants.push({ label: 'the long line, with a current vault', args: [bin, '--json', 'policy', 'check', '--shell', LONG_LINE], home: withVault });
  const cold = new Map<string, number[]>(variants.map((v) => [v.label, []]));
  try {
    for (let i = 0; i < CLI_RUNS; i++) {
      for (const variant of variants) {
        const a = performance.now();
        const r = spawnSync(process.execPath, variant.args, { env: { ...process.env, AVFS_HOME: variant.home ?? join(home, 'empty'), AVFS_NO_HOST: '1' } });
        if (r.status !== 0) throw new Error(`${variant.label} failed: ${r.stderr}`);
        cold.get(variant.label)!.push(performance.now() - a);
      }
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const coldMedian = (label: string) => median(cold.get(label)!);
  const version = coldMedian('avfs --version');
  const checkShort = coldMedian("avfs policy check --shell 'ls'");
  const checkLong = coldMedian('avfs policy check --shell <long line>');

  const rows: [string, string][] = [
    ['corpus commands', String(commands.length)],
    ['repetitions per command', String(REPS)],
    ['median of per-command medians', `${ms(quantile(medians, 0.5))} ms`],
    ['p95 of per-command medians', `${ms(quantile(medians, 0.95))} ms`],
    ['max of per-command medians', `${ms(medians[medians.length - 1]!)} ms`],
    ['p95 of all decisions', `${ms(quantile(allSorted, 0.95))} ms`],
    ['decisions per second (warm)', Math.round(all.length / (elapsed / 1000)).toLocaleString('en-US')],
    ['cold: import engine modules', `${ms(t1 - t0)} ms`],
    ['cold: parser init + grammar load', `${ms(t2 - t1)} ms`],
    ['cold: first decision', `${ms(t3 - t2)} ms`],
  ];
  const w = Math.max(...rows.map((r) => r[0].length));
  console.log('npm run bench -- policy' + (repsAt >= 0 ? ` --reps ${REPS}` : ''));
  console.log(`node ${process.version}, ${process.platform}/${process.arch}\n`);
  for (const [k, v] of rows) console.log(`${k.padEnd(w)}  ${v}`);
  console.log('\nslowest commands (median):');
  for (const s of slowest) console.log(`  ${ms(s.median)} ms  ${s.label.replace(/\n/g, '\\n').slice(0, 70)}`);
  console.log(`\ncold start, fresh processes (median of ${CLI_RUNS} interleaved runs):`);
  const cw = Math.max(...variants.map((v) => v.label.length));
  for (const variant of variants) {
    const m = coldMedian(variant.label);
    const ratio = variant.args.includes('policy') ? `  ${(m / version).toFixed(2)}× --version` : '';
    console.log(`  ${variant.label.padEnd(cw)}  ${ms(m).padStart(8)} ms${ratio}`);
  }
  const target = quantile(medians, 0.5) <= 1;
  console.log(`\ntarget median <= 1 ms per command: ${target ? 'met' : 'NOT met'}`);
  const coldTarget = checkShort <= 1.5 * version && checkLong <= 1.5 * version;
  console.log(`target cold policy check <= 1.5 × cold --version: ${coldTarget ? 'met' : 'NOT met'} (${(checkShort / version).toFixed(2)}×, long line ${(checkLong / version).toFixed(2)}×)`);
}

void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
