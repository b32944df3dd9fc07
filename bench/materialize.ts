/**
 * `npm run bench -- materialize [--runs N]`: heavy commands end to end through `avfs proxy exec`,
 * side by side in one run, interleaved round by round:
 *
 *   - `fuse`: `avfs proxy exec -- bash work.sh` (a one-shot mount of the vault, the default);
 *   - `materialize`: `avfs proxy exec --materialize -- bash work.sh` (a working copy, committed back);
 *   - `tmpfs`: `bash work.sh` in a directory of /dev/shm, no avfs at all;
 *   - `ext4`: the same in a directory of the file system the working copies live on (the avfs home's).
 *
 * Each avfs line is a fresh process (CLI start, policy, checkpoint, mount or working copy, run,
 * barrier or commit-back, summary) in a fresh vault holding only the script, with `--sandbox none`
 * (the lines then differ only in where the files live, as the tmpfs and ext4 lines run bare; and
 * `npm install` reads its cache and packages from the temp dir, private in the sandbox; what the
 * sandbox costs is bench/exec.ts's). Workloads: a script that makes 2,000 small files and
 * commits them to a new git repository; making the 2,000 files alone; `npm install` of 10 local
 * packages (1,000 files, from a warm local cache). Then a warm line: the same vault again, after a
 * CLI write, so the working copy is brought up to date from the journal. Prints a table with ratios
 * (of medians), each round's ratio for the git workload and the target judged on their median
 * (the git workload through --materialize ≤ 2× tmpfs), and the machine's load.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { workRootOf } from '../host/proxy/workingCopy';
import { localPackages } from './_packages';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'avfs.js');
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Math.max(1, Number(args[runsAt + 1]) || 3) : 3;

const scratch = mkdtempSync(join(tmpdir(), 'avfs-bench-mat-'));
const home = join(scratch, 'home');
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
const NPM_CACHE = join(scratch, 'npm-cache');
const NPM_ENV = { npm_config_cache: NPM_CACHE, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', npm_config_offline: 'true' };
const env = { ...process.env, AVFS_HOME: home, ...GIT_ENV, ...NPM_ENV };

function run(cmd: string, argv: string[], cwd = scratch): number {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} exited ${r.status}:\n${r.stdout.toString().slice(0, 2000)}\n${r.stderr.toString().slice(0, 2000)}`);
  return s;
}
const avfs = (...a: string[]) => run(process.execPath, [CLI, ...a]);

/** Local npm packages and a project depending on them (as bench/fuse.ts): `npm install` reads only the local cache. */
function preparePackages(): string {
  const deps = localPackages(scratch, env);
  const pkg = JSON.stringify({ name: 'bench-project', version: '1.0.0', dependencies: deps });
  const warm = join(scratch, 'warm');
  mkdirSync(warm);
  writeFileSync(join(warm, 'package.json'), pkg);
  run('npm', ['install', '--silent'], warm);
  return pkg;
}

interface Workload {
  name: string;
  /** The script (work.sh) and the files it starts from. */
  files: Record<string, string>;
}

function workloads(pkg: string): Workload[] {
  const make = 'mkdir small && for i in $(seq 2000); do echo "file $i" > small/f$i.txt; done';
  return [
    { name: 'git: 2,000 files made, git init, add -A, commit', files: { 'work.sh': `set -e\n${make}\ncd small && git init -q && git add -A && git commit -qm bench\n` } },
    { name: 'create 2,000 small files', files: { 'work.sh': `set -e\n${make}\n` } },
    { name: 'npm install (10 local packages, 1,000 files)', files: { 'work.sh': 'set -e\nnpm install --silent\n', 'package.json': pkg } },
  ];
}

let vaults = 0;
/** A fresh vault holding the workload's files. */
function vaultWith(w: Workload): string {
  const name = `v${++vaults}`;
  avfs('vault', 'create', name);
  for (const [p, content] of Object.entries(w.files)) avfs('--vault', name, 'write', `/${p}`, content);
  return name;
}

function dirWith(base: string, w: Workload): string {
  const d = mkdtempSync(join(base, 'avfs-bench-mat-'));
  for (const [p, content] of Object.entries(w.files)) writeFileSync(join(d, p), content);
  return d;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const fmt = (s: number) => (s < 1 ? `${(s * 1000).toFixed(0)} ms` : `${s.toFixed(2)} s`);

function main(): void {
  const load0 = loadavg();
  // Unsandboxed, a script the policy does not read needs approval: the user's rules let these run (with a checkpoint, as in the sandbox).
  const rules = join(scratch, 'rules.json');
  writeFileSync(rules, JSON.stringify({ version: 1, rules: [{ id: 'bench', regex: '^bash (work|warm)\\.sh$', action: 'allow_with_checkpoint' }] }));
  avfs('policy', 'set-user-rules', rules);
  const wl = workloads(preparePackages());
  const columns = ['fuse', 'materialize', 'tmpfs', 'ext4'] as const;
  const results = wl.map(() => columns.map(() => [] as number[]));
  const warm: number[] = [];
  let gitVault = '';
  for (let r = 0; r < RUNS; r++) {
    wl.forEach((w, wi) => {
      const lines: Record<(typeof columns)[number], () => number> = {
        fuse: () => avfs('--vault', vaultWith(w), 'proxy', 'exec', '--sandbox', 'none', '--', 'bash', 'work.sh'),
        materialize: () => {
          const v = vaultWith(w);
          if (wi === 0) gitVault = v;
          return avfs('--vault', v, 'proxy', 'exec', '--materialize', '--sandbox', 'none', '--', 'bash', 'work.sh');
        },
        tmpfs: () => {
          const d = dirWith('/dev/shm', w);
          try {
            return run('bash', ['work.sh'], d);
          } finally {
            rmSync(d, { recursive: true, force: true });
          }
        },
        ext4: () => {
          const d = dirWith(scratch, w);
          try {
            return run('bash', ['work.sh'], d);
          } finally {
            rmSync(d, { recursive: true, force: true });
          }
        },
      };
      columns.forEach((c, ci) => {
        const s = lines[c]();
        results[wi]![ci]!.push(s);
        process.stderr.write(`  ${c.padEnd(11)} ${w.name}: ${fmt(s)}\n`);
      });
    });
    // Warm: the git workload's vault again, after a CLI write: the copy is synced from the journal.
    const v = gitVault;
    avfs('--vault', v, 'write', '/small/f1.txt', `changed ${r}\n`);
    avfs('--vault', v, 'write', '/warm.sh', 'set -e\ncd small && git add -A && git commit -qm again\n');
    const s = avfs('--vault', v, 'proxy', 'exec', '--materialize', '--sandbox', 'none', '--', 'bash', 'warm.sh');
    warm.push(s);
    process.stderr.write(`  warm        git add -A && commit of one changed file: ${fmt(s)}\n`);
  }
  const load1 = loadavg();
  console.log(`npm run bench -- materialize --runs ${RUNS}   (${new Date().toISOString().slice(0, 10)}; medians of ${RUNS} interleaved rounds; load average ${load0[0]!.toFixed(1)} at the start, ${load1[0]!.toFixed(1)} at the end, on ${readFileSync('/proc/cpuinfo', 'utf8').split('\nprocessor').length} cores)\n`);
  console.log('| workload | FUSE (proxy exec) | --materialize | tmpfs | ext4 | FUSE ÷ tmpfs | --materialize ÷ tmpfs |');
  console.log('|---|---|---|---|---|---|---|');
  wl.forEach((w, wi) => {
    const [f, m, t, e] = results[wi]!.map(median) as [number, number, number, number];
    console.log(`| ${w.name} | ${fmt(f)} | ${fmt(m)} | ${fmt(t)} | ${fmt(e)} | ${(f / t).toFixed(1)}× | ${(m / t).toFixed(2)}× |`);
  });
  console.log(`\nwarm: --materialize of \`git add -A && git commit\` after one CLI write, in the git workload's vault: ${fmt(median(warm))}`);
  // Within a round the two lines run one after the other, at about the same load: the ratio of
  // each round's pair says more on a loaded machine than the ratio of medians taken across rounds.
  const rounds = results[0]![1]!.map((m, r) => m / results[0]![2]![r]!);
  const ratio = median(rounds);
  console.log(`per round, git workload --materialize ÷ tmpfs: ${rounds.map((x) => `${x.toFixed(2)}×`).join(', ')}`);
  console.log(`target: the git workload through --materialize ≤ 2× tmpfs (median of the rounds' ratios): ${ratio.toFixed(2)}× (${ratio <= 2 ? 'met' : 'missed'})`);
}

try {
  main();
} finally {
  rmSync(workRootOf(home), { recursive: true, force: true });
  rmSync(scratch, { recursive: true, force: true });
}
