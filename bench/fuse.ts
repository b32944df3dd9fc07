/**
 * `npm run bench -- fuse [--runs N] [--no-docs] [--counts]`: real workloads, side by side in one run, on
 *   - a vault mount (`avfs mount`, the real CLI and server),
 *   - the same with the kernel caching names and attributes for 60 s instead of 1 s (`--cache-ms`),
 *   - a tiny in-memory FUSE file system on the same binding and options (bench/_memfs.ts: the
 *     ceiling of Node FUSE here),
 *   - tmpfs (/dev/shm) and a plain directory (the temp dir's file system).
 * Prints a table with ratios (target: vault within 2× of the in-memory ceiling on every line), and
 * how long a CLI write takes to show through a mount that has the file cached (against the 1 s
 * kernel cache time), and writes both into the "FUSE" section of docs/performance.md.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AvfsHome } from '../host/store/home';
import { localPackages } from './_packages';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'avfs.js');
const args = process.argv.slice(2);
const runsArg = args.indexOf('--runs');
const RUNS = runsArg >= 0 ? Math.max(1, Number(args[runsArg + 1] ?? 1)) : 1;
const WRITE_DOCS = !args.includes('--no-docs');
/** The second vault mount's kernel cache time: what longer entry and attribute caching would gain. */
const LONG_CACHE_MS = 60_000;
/** Only the request counts (a few seconds; no timing, no docs). */
const COUNTS_ONLY = args.includes('--counts');

function sh(cmd: string, argv: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn(cmd, argv, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.stderr.on('data', (d: Buffer) => (err += d.toString()));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

async function bash(script: string, cwd: string, env: Record<string, string> = {}): Promise<void> {
  const r = await sh('bash', ['-euo', 'pipefail', '-c', script], { cwd, env });
  if (r.code !== 0) throw new Error(`failed in ${cwd}: ${script}\n${r.err}`);
}

async function timed(script: string, cwd: string, env: Record<string, string> = {}): Promise<number> {
  const t0 = process.hrtime.bigint();
  await bash(script, cwd, env);
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

interface Target {
  name: string;
  dir: string;
  /** The avfs home, for a vault mount. */
  home?: string;
  stop: () => Promise<void>;
}

const scratch = mkdtempSync(join(tmpdir(), 'avfs-bench-fuse-'));
const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', HOME: join(scratch, 'home'), GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@b', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@b' };
const NPM_CACHE = join(scratch, 'npm-cache');
const NPM_ENV = { npm_config_cache: NPM_CACHE, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', npm_config_offline: 'true' };

let targetSeq = 0;

/** A vault mount; `cacheMs`: the kernel's entry and attribute cache time (`avfs mount --cache-ms`; default 1 s). */
async function vaultTarget(cacheMs?: number): Promise<Target> {
  const n = ++targetSeq;
  const home = join(scratch, `avfs-home-${n}`);
  new AvfsHome(home).create('bench').close();
  const mnt = join(scratch, `vault-mnt-${n}`);
  mkdirSync(mnt);
  const r = await sh(process.execPath, [CLI, 'mount', 'bench', mnt, ...(cacheMs !== undefined ? ['--cache-ms', String(cacheMs)] : [])], { env: { AVFS_HOME: home } });
  if (r.code !== 0) throw new Error(`avfs mount failed: ${r.err}`);
  return {
    name: cacheMs !== undefined ? `vault-${cacheMs / 1000}s` : 'vault',
    dir: mnt,
    home,
    stop: async () => {
      await sh(process.execPath, [CLI, 'unmount', mnt], { env: { AVFS_HOME: home } });
    },
  };
}

async function memfsTarget(): Promise<Target> {
  const mnt = join(scratch, `memfs-mnt-${++targetSeq}`);
  mkdirSync(mnt);
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '_memfs.ts'), mnt], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
    child.on('exit', (code) => reject(new Error(`memfs exited with ${code}`)));
  });
  return {
    name: 'memfs',
    dir: mnt,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await sh('fusermount', ['-uz', mnt]);
    },
  };
}

/** The in-memory file system with a given kernel cache time, and a way to read how many requests it has answered since the last read. */
async function countingMemfs(cacheSeconds: number): Promise<{ dir: string; take: () => Promise<Record<string, number>>; stop: () => Promise<void> }> {
  const mnt = join(scratch, `memfs-count-${++targetSeq}`);
  mkdirSync(mnt);
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, '_memfs.ts'), mnt, String(cacheSeconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let waiting: ((line: string) => void) | undefined;
  let buf = '';
  child.stdout.on('data', (d: Buffer) => {
    buf += d.toString();
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (waiting) {
        const w = waiting;
        waiting = undefined;
        w(line);
      } else lines.push(line);
    }
  });
  const next = (): Promise<string> => (lines.length ? Promise.resolve(lines.shift()!) : new Promise((r) => (waiting = r)));
  if ((await next()) !== 'ready') throw new Error('memfs did not start');
  return {
    dir: mnt,
    take: async () => {
      child.kill('SIGUSR2');
      return JSON.parse(await next()) as Record<string, number>;
    },
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      await sh('fusermount', ['-uz', mnt]);
    },
  };
}

/**
 * How many requests the small-file workloads send to a FUSE server with the kernel caching names
 * and attributes for 1 s and for LONG_CACHE_MS: the round trips a longer cache saves, counted (not
 * timed, so a loaded machine does not blur them), on the in-memory file system.
 */
async function requestCounts(wl: Workload[]): Promise<string> {
  const picked = wl.filter((w) => /small|git/.test(w.name));
  const per: Array<Array<Record<string, number>>> = [];
  for (const cache of [1, LONG_CACHE_MS / 1000]) {
    const m = await countingMemfs(cache);
    const rows: Array<Record<string, number>> = [];
    try {
      await m.take();
      for (const w of picked) {
        await w.run(m.dir);
        rows.push(await m.take());
      }
    } finally {
      await m.stop();
    }
    per.push(rows);
  }
  const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
  const top = (c: Record<string, number>) =>
    Object.entries(c)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  const head = ['workload', 'requests, cache 1 s', `requests, cache ${LONG_CACHE_MS / 1000} s`, 'saved', 'most frequent (1 s)', `most frequent (${LONG_CACHE_MS / 1000} s)`];
  const rows = picked.map((w, i) => {
    const a = per[0]![i]!;
    const b = per[1]![i]!;
    return [w.name, String(total(a)), String(total(b)), `${(100 * (1 - total(b) / total(a))).toFixed(0)} %`, top(a), top(b)];
  });
  return [`| ${head.join(' | ')} |`, `| ${head.map((h, i) => (i === 0 || i >= 4 ? '-'.repeat(h.length) : '-'.repeat(h.length - 1) + ':')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

function plainTarget(name: string, base: string): Target {
  const dir = mkdtempSync(join(base, 'avfs-bench-'));
  return { name, dir, stop: async () => rmSync(dir, { recursive: true, force: true }) };
}

/** Local npm packages (tarballs) and a project depending on them: `npm install` reads only the local cache. */
async function preparePackages(): Promise<{ project: string }> {
  const deps = localPackages(scratch, NPM_ENV);
  const project = join(scratch, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'bench-project', version: '1.0.0', dependencies: deps }, null, 2));
  // Warm the cache once so every measured install is served from it.
  const warm = join(scratch, 'warm');
  await bash(`cp -r ${project} ${warm} && cd ${warm} && npm install --silent`, scratch, NPM_ENV);
  return { project };
}

interface Workload {
  name: string;
  run: (dir: string) => Promise<number>;
}

function workloads(project: string): Workload[] {
  return [
    { name: 'dd write 100 MiB', run: (d) => timed('dd if=/dev/zero of=big bs=1M count=100 status=none', d) },
    { name: 'dd read 100 MiB', run: (d) => timed('dd if=big of=/dev/null bs=1M status=none', d) },
    {
      name: 'create 2,000 small files',
      run: async (d) => {
        await bash('rm -f big && rm -rf small && mkdir small', d);
        return timed('for i in $(seq 2000); do echo "file $i" > small/f$i.txt; done', d);
      },
    },
    {
      name: 'read 2,000 small files, twice',
      run: (d) => timed('cat small/* > /dev/null && cat small/* > /dev/null', d),
    },
    {
      name: 'git add -A && commit (2,000 files)',
      run: async (d) => {
        await bash('rm -rf .git && git init -q .', join(d, 'small'), GIT_ENV);
        return timed('git add -A && git commit -qm bench', join(d, 'small'), GIT_ENV);
      },
    },
    {
      name: 'git status, twice (2,000 files)',
      run: (d) => timed('git status --porcelain > /dev/null && git status --porcelain > /dev/null', join(d, 'small'), GIT_ENV),
    },
    {
      name: 'npm install (10 local packages)',
      run: async (d) => {
        await bash(`rm -rf small proj && cp -r ${project} proj`, d);
        return timed('npm install --silent', join(d, 'proj'), NPM_ENV);
      },
    },
  ];
}

/**
 * CLI → mount visibility: the mount reads a file (so the kernel caches its attributes and pages),
 * `avfs write` replaces it, and we time until the new bytes read back through the mount.
 */
async function visibilityLags(t: Target, writes = 5): Promise<number[]> {
  const file = join(t.dir, 'from-cli.txt');
  const lags: number[] = [];
  for (let i = 0; i < writes; i++) {
    await readFile(file).catch(() => undefined);
    const content = `version ${i} ${'x'.repeat(i * 10)}\n`;
    const w = await sh(process.execPath, [CLI, '--vault', 'bench', 'write', '/from-cli.txt', content], { env: { AVFS_HOME: t.home! } });
    if (w.code !== 0) throw new Error(`avfs write failed: ${w.err}`);
    const t0 = process.hrtime.bigint();
    while ((await readFile(file, 'utf8').catch(() => '')) !== content) {
      if (Number(process.hrtime.bigint() - t0) > 30e9) throw new Error('a CLI write did not show in the mount within 30 s');
      await new Promise((r) => setTimeout(r, 5));
    }
    lags.push(Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return lags;
}

const fmt = (s: number) => (s < 1 ? `${(s * 1000).toFixed(0)} ms` : `${s.toFixed(2)} s`);

const loadNow = (): string => loadavg().map((x) => x.toFixed(1)).join(' / ');

async function main(): Promise<void> {
  const loadStart = loadNow();
  const { project } = await preparePackages();
  const wl = workloads(project);
  if (COUNTS_ONLY) {
    console.log(await requestCounts(wl));
    rmSync(scratch, { recursive: true, force: true });
    return;
  }
  const names = ['vault', 'vault-long', 'memfs', 'tmpfs', 'dir'];
  const results = new Map<string, number[][]>(); // workload → per target → runs
  for (const w of wl) results.set(w.name, names.map(() => []));
  const lags: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const makers = [() => vaultTarget(), () => vaultTarget(LONG_CACHE_MS), memfsTarget, () => plainTarget('tmpfs', '/dev/shm'), () => plainTarget('dir', scratch)];
    for (const [ti, make] of makers.entries()) {
      const t = await make();
      try {
        for (const w of wl) {
          const s = await w.run(t.dir);
          results.get(w.name)![ti]!.push(s);
          process.stderr.write(`  ${t.name.padEnd(6)} ${w.name}: ${fmt(s)}\n`);
        }
        // A long cache without invalidation shows a CLI write only when it runs out: not measured.
        if (t.home && t.name === 'vault') lags.push(...(await visibilityLags(t)));
      } finally {
        await t.stop();
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  const long = `vault, cache ${LONG_CACHE_MS / 1000} s`;
  const rows: string[][] = [['workload', 'vault', long, 'memfs (ceiling)', 'tmpfs', 'plain dir', 'vault / memfs', 'vault / tmpfs', `${long} / vault`]];
  let worst = 0;
  for (const w of wl) {
    const m = results.get(w.name)!.map(median);
    const [v, vl, mem, tmp, dir] = m as [number, number, number, number, number];
    worst = Math.max(worst, v / mem);
    rows.push([w.name, fmt(v), fmt(vl), fmt(mem), fmt(tmp), fmt(dir), `${(v / mem).toFixed(2)}×`, `${(v / tmp).toFixed(1)}×`, `${(vl / v).toFixed(2)}×`]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const md = [
    `| ${rows[0]!.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`,
    `| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : '-'.repeat(w - 1) + ':')).join(' | ')} |`,
    ...rows.slice(1).map((r) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`),
  ].join('\n');
  const command = `npm run bench -- fuse${RUNS > 1 ? ` --runs ${RUNS}` : ''}`;
  const sorted = [...lags].sort((a, b) => a - b);
  const visibility = `CLI → mount visibility (\`avfs write\` of a file the mount has cached, ${sorted.length} writes): median ${fmt(median(sorted))}, max ${fmt(sorted[sorted.length - 1] ?? NaN)}, against a kernel cache time of 1 s`;
  const verdict = worst <= 2 ? `every line within 2× of the in-memory ceiling (worst ${worst.toFixed(2)}×)` : `worst line ${worst.toFixed(2)}× the in-memory ceiling (target 2×)`;
  const counts = await requestCounts(wl);
  const load = `load average (1 / 5 / 15 min) ${loadStart} at the start, ${loadNow()} at the end`;
  console.log(`\n$ ${command}   (median of ${RUNS} run${RUNS > 1 ? 's' : ''}; ${load})\n\n${md}\n\n${verdict}\n${visibility}\n\nRequests to the in-memory file system:\n\n${counts}`);
  if (WRITE_DOCS) writeDocs(command, md, verdict, visibility, load, counts);
  rmSync(scratch, { recursive: true, force: true });
}

function writeDocs(command: string, table: string, verdict: string, visibility: string, load: string, counts: string): void {
  const file = join(ROOT, 'docs', 'performance.md');
  const section = [
    '## FUSE',
    '',
    `Measured with \`${command}\` on ${new Date().toISOString().slice(0, 10)} (Debian 12, 2 cores, Node ${process.version}, avfs's FUSE binding on libfuse 2.9; ${load}):`,
    'the same workloads, one after another in one run, on a vault mount (`avfs mount`), on a tiny',
    'in-memory FUSE file system on the same binding and mount options (`bench/_memfs.ts`, the ceiling',
    'of Node FUSE here), on tmpfs (`/dev/shm`) and on a plain directory (ext4). Mount options of both',
    'FUSE file systems: `big_writes,use_ino,default_permissions,auto_cache,entry_timeout=1,attr_timeout=1`;',
    `the second vault column is the same mount with \`--cache-ms ${LONG_CACHE_MS}\` (entry and attribute timeouts of ${LONG_CACHE_MS / 1000} s).`,
    '',
    table,
    '',
    `Result: ${verdict}. The ext4 line swings widely between runs on these machines; compare with tmpfs.`,
    '',
    `${visibility}.`,
    '',
    `Requests the small-file workloads send to the in-memory file system (\`bench/_memfs.ts\`, counted by`,
    `the server, in the same run) with the kernel caching names and attributes for 1 s and for ${LONG_CACHE_MS / 1000} s:`,
    '',
    counts,
    '',
  ].join('\n');
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '# Performance\n\nFigures, each with the command that produced it.\n';
  const start = text.search(/^## FUSE\s*$/m);
  if (start >= 0) {
    const rest = text.slice(start + 1);
    const next = rest.search(/^## /m);
    text = text.slice(0, start) + section + (next >= 0 ? '\n' + rest.slice(next) : '');
  } else {
    text = text.replace(/\s*$/, '\n\n') + section;
  }
  mkdirSync(join(ROOT, 'docs'), { recursive: true });
  writeFileSync(file, text);
  console.log(`\nwrote the FUSE section of ${file}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});
