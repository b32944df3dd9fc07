/**
 * Exec benchmark: what `avfs proxy exec` costs on top of running the command directly.
 *
 *   npm run bench -- exec [--runs N]
 *
 * Side by side, interleaved round by round (so machine noise hits every line alike), each in a
 * fresh process: `true` run directly; `node -e 0`; a cold `avfs --version`; a cold
 * `avfs proxy exec -- true` (no mount up: policy, baseline, mount, run, barrier, unmount,
 * summary); the same call while a kept mount of the vault is up (`--keep-mount` made it); and
 * that call again in another avfs home where a vault host runs (the CLI hands the run to the host,
 * whose policy engine is warm: see docs/architecture.md; its CPU column counts the CLI alone);
 * and the cold and kept calls again with `--shell true`, whose shell text needs the bash parser
 * (an argv of plain words is judged without it). A kept-mount call is run by the mount's server
 * (docs/exec.md); the CPU column counts the CLI alone there too. Every call above runs in the
 * sandbox (the default); the cold and kept calls with `--sandbox none` show what it costs (each
 * runs right after its sandboxed twin; the cost is the median of the rounds' differences).
 * Then a kept-mount call's phases from its envelope (`result.timings`), sandboxed and not, the
 * cost of the run's sandbox plan, and the start of a sandboxed command built up step by step.
 * Targets: cold ≤ 2 × `avfs --version`; kept mount ≤ 1.3 × `avfs --version`; `avfs --version`
 * ≤ 1.5 × `node -e 0`. CPU time (user + system of each process and what it waited for, from
 * this process's children counters) is shown beside the wall time: it is what a loaded machine
 * cannot hide.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { START_IN_DIR, START_SANDBOXED } from '../host/proxy/runner';
import { bwrapArgv, bwrapSizesTmpfs } from '../host/sandbox/bwrap';
import { makeRunCgroups } from '../host/sandbox/limits';
import { loadSandboxSettings, planSandbox } from '../host/sandbox/plan';
import { PLAN_CACHE_FILE, planCacheUse } from '../host/sandbox/planCache';
import { sandboxSupport } from '../host/sandbox/probe';

const ROOT = join(__dirname, '..');
const CLI = join(ROOT, 'dist', 'avfs.js');
const args = process.argv.slice(2);
const runsAt = args.indexOf('--runs');
const RUNS = runsAt >= 0 ? Math.max(1, Number(args[runsAt + 1]) || 15) : 15;

const home = mkdtempSync(join(tmpdir(), 'avfs-bench-exec-'));
const env = { ...process.env, AVFS_HOME: home };
const hostHome = mkdtempSync(join(tmpdir(), 'avfs-bench-exec-host-'));
const hostEnv = { ...process.env, AVFS_HOME: hostHome };

/** CPU time of the children this process has waited for, in ms (user + system; 10 ms ticks). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  // After the command name: state is field 3, cutime field 16, cstime field 17.
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

let cpuOfLast = 0;
function timed(cmd: string, argv: string[], inHome = env): number {
  const c0 = childrenCpuMs();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, argv, { env: inHome, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  cpuOfLast = childrenCpuMs() - c0;
  if (r.status !== 0) throw new Error(`${cmd} ${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
  return ms;
}

const avfs = (...a: string[]) => timed(process.execPath, [CLI, ...a]);
const hosted = (...a: string[]) => timed(process.execPath, [CLI, ...a], hostEnv);

/** A vault host for `hostHome`, ready when this returns. */
function startHost(): ChildProcess {
  const child = spawn(process.execPath, [CLI, 'host'], { env: hostEnv, stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    const s = spawnSync(process.execPath, [CLI, '--json', 'host', 'status'], { env: hostEnv, encoding: 'utf8' });
    if (s.status === 0 && (JSON.parse(s.stdout) as { running: boolean }).running) return child;
    spawnSync('sleep', ['0.1']);
  }
  child.kill();
  throw new Error('the host did not start');
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function main(): void {
  avfs('vault', 'create', 'cold');
  avfs('vault', 'create', 'kept');
  avfs('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--', 'true');
  hosted('vault', 'create', 'kept');
  hosted('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--', 'true');
  const lines: Array<[string, () => number]> = [
    ['true (directly)', () => timed('true', [])],
    ['node -e 0', () => timed(process.execPath, ['-e', '0'])],
    ['avfs --version (cold)', () => avfs('--version')],
    ['avfs proxy exec -- true (cold: no mount up)', () => avfs('--vault', 'cold', 'proxy', 'exec', '--', 'true')],
    ['avfs proxy exec -- true (kept mount)', () => avfs('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--', 'true')],
    ['avfs proxy exec -- true (kept mount, through a running host)', () => hosted('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--', 'true')],
    // Shell text needs the bash parser (the argv lines above are judged word by word without it).
    ['avfs proxy exec --shell true (cold: no mount up)', () => avfs('--vault', 'cold', 'proxy', 'exec', '--shell', 'true')],
    ['avfs proxy exec --shell true (kept mount)', () => avfs('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--shell', 'true')],
    // The lines above run in the sandbox (the default): these say what it costs.
    ['avfs proxy exec --sandbox none -- true (cold: no mount up)', () => avfs('--vault', 'cold', 'proxy', 'exec', '--sandbox', 'none', '--', 'true')],
    ['avfs proxy exec --sandbox none -- true (kept mount)', () => avfs('--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--sandbox', 'none', '--', 'true')],
  ];
  const samples = lines.map(() => [] as number[]);
  const cpu = lines.map(() => 0);
  // Each sandboxed call runs right before its --sandbox none twin, so the two meet the same moment's load.
  const order = [0, 1, 2, 3, 8, 4, 9, 5, 6, 7];
  for (let r = 0; r < RUNS; r++)
    for (const i of order) {
      samples[i]!.push(lines[i]![1]());
      cpu[i]! += cpuOfLast;
    }
  const med = samples.map(median);
  const cpuMean = cpu.map((c) => c / RUNS);
  const version = med[2]!;
  console.log(`npm run bench -- exec --runs ${RUNS}   (${new Date().toISOString().slice(0, 10)}, medians of ${RUNS} interleaved runs)\n`);
  console.log('| what | median ms | CPU ms (mean) | × avfs --version | target |');
  console.log('|---|---|---|---|---|');
  const targets = ['', '', '', '≤ 2×', '≤ 1.3×', '', '', '', '', ''];
  lines.forEach(([name], i) => console.log(`| ${name} | ${med[i]!.toFixed(1)} | ${cpuMean[i]!.toFixed(1)} | ${(med[i]! / version).toFixed(2)} | ${targets[i]} |`));
  console.log(`\nproxy overhead over running true directly: cold ${(med[3]! - med[0]!).toFixed(1)} ms, kept mount ${(med[4]! - med[0]!).toFixed(1)} ms`);
  // The sandbox's cost: each round runs both twins, so the median of the rounds' differences is
  // the figure (a difference of two medians takes the noise of both); the latter is shown beside it.
  const paired = (a: number, b: number) => median(samples[a]!.map((x, r) => x - samples[b]![r]!));
  console.log(
    `the sandbox's cost (workspace − none, median of the ${RUNS} rounds' differences): cold ${paired(3, 8).toFixed(1)} ms, kept mount ${paired(4, 9).toFixed(1)} ms (target ≤ +15 ms); ` +
      `difference of the medians: cold ${(med[3]! - med[8]!).toFixed(1)} ms, kept mount ${(med[4]! - med[9]!).toFixed(1)} ms; CPU: cold ${(cpuMean[3]! - cpuMean[8]!).toFixed(1)} ms, kept mount ${(cpuMean[4]! - cpuMean[9]!).toFixed(1)} ms`,
  );
  const quartiles = (a: number, b: number) => {
    const d = samples[a]!.map((x, r) => x - samples[b]![r]!).sort((x, y) => x - y);
    return [0.25, 0.5, 0.75].map((q) => d[Math.min(d.length - 1, Math.floor(q * d.length))]!.toFixed(1)).join(' / ');
  };
  console.log(`the rounds' differences, quartiles (25 / 50 / 75 %): cold ${quartiles(3, 8)} ms, kept mount ${quartiles(4, 9)} ms`);
  console.log(`avfs --version against bare node: ${(version / med[1]!).toFixed(2)}× wall, ${(cpuMean[2]! / cpuMean[1]!).toFixed(2)}× CPU (target ≤ 1.5×)`);
}

/**
 * Where the sandbox's time goes: the start of a run's command built up step by step, each line a
 * fresh spawn measured as above (interleaved, medians), with what it adds over the line before.
 * The last lines are the start exactly as the runner makes it (host/sandbox/bwrap.ts, runner.ts)
 * and the run's cgroups made and removed in this process.
 */
async function breakdown(): Promise<void> {
  const s = await sandboxSupport();
  if (!s.ok) {
    console.log(`\nno sandbox breakdown: ${s.reason}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'avfs-bench-sbx-'));
  let runCg: ReturnType<typeof makeRunCgroups> | undefined;
  try {
    const spec = planSandbox({ bwrap: s.bwrap, userns: s.userns, avfsHome: home, home: homedir(), mountpoint: dir, readonly: false, network: false, settings: loadSandboxSettings(home), env: process.env, pidMax: s.pidMax, tmpfsSize: bwrapSizesTmpfs(s.version) });
    // The run's cgroups, kept for the whole breakdown: each spawn below joins them (and has left
    // them when it exits), as the runner's start shell does; the cost measured is the joining.
    runCg = makeRunCgroups(spec.processes, spec.memoryBytes, spec.pidMax);
    const by = runCg.by;
    // How the start shell joined them before: its pid into each cgroup.procs (the whole process,
    // under the kernel's global threadgroup lock: an RCU grace period).
    const byPid = runCg.join.map((f) => join(dirname(f), 'cgroup.procs'));
    const START_BY_PID = START_SANDBOXED.replace('echo 0 >', () => 'echo $$ >');
    const full = bwrapArgv(spec, dir, ['true'], by);
    const bare = full.slice(0, full.indexOf('--chdir') + 3);
    const ns = [...(s.userns ? ['--unshare-user'] : [])];
    const sys = ['--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev'];
    const steps: Array<[string, string[]]> = [
      ['true (spawned directly)', ['true']],
      ['the unsandboxed start shell: sh -c \'cd && exec\' true', [...START_IN_DIR, dir, 'true']],
      ['bwrap: a mount namespace, / read-only', [s.bwrap, ...ns, '--ro-bind', '/', '/', '/bin/true']],
      ['+ its own /proc and /dev', [s.bwrap, ...ns, ...sys, '/bin/true']],
      ['+ a pid namespace', [s.bwrap, ...ns, '--unshare-pid', ...sys, '/bin/true']],
      ['+ a network namespace', [s.bwrap, ...ns, '--unshare-pid', '--unshare-net', ...sys, '/bin/true']],
      ['+ an ipc namespace, --die-with-parent, --cap-drop ALL', [s.bwrap, ...ns, '--unshare-pid', '--unshare-ipc', '--die-with-parent', '--unshare-net', '--cap-drop', 'ALL', ...sys, '/bin/true']],
      [`+ the run's ${bare.filter((a) => a === '--tmpfs' || a.endsWith('bind')).length - 1} tmpfs and bind mounts (hidden homes, secrets, the mount)`, [...bare, '/bin/true']],
      ['+ prlimit where used, sh -c exec (bwrapArgv, as a run)', full],
      [`+ the start shell, joining ${byPid.length} cgroup(s) by pid into cgroup.procs (before)`, ['/bin/sh', '-c', START_BY_PID, 'avfs-sandbox', ...byPid, '--', ...full]],
      [`+ the start shell, joining them by its own thread (${runCg.join.map((f) => basename(f)).join(', ') || 'none'}: as the runner starts it now)`, ['/bin/sh', '-c', START_SANDBOXED, 'avfs-sandbox', ...runCg.join, '--', ...full]],
    ];
    // Wall time only: bwrap's init is reaped by bwrap's own processes or init, not by this one,
    // so this process's children CPU counters miss most of a sandboxed start.
    const samples = steps.map(() => [] as number[]);
    const cg: number[] = [];
    for (let r = 0; r < RUNS * 2; r++) {
      steps.forEach(([, argv], i) => samples[i]!.push(timed(argv[0]!, argv.slice(1))));
      const t0 = performance.now();
      const c = makeRunCgroups(spec.processes, spec.memoryBytes, spec.pidMax);
      // The start shell joins them in the runner; here the cgroups are only made and removed.
      await c.remove();
      cg.push(performance.now() - t0);
    }
    const med = samples.map(median);
    console.log(`\nwhere the sandbox's time goes (${RUNS * 2} interleaved spawns each, medians; limits: processes by ${by.processes}, memory by ${by.memory})\n`);
    const last = steps.length - 1;
    // Both start-shell lines add to the bwrapArgv line (they are the before and after of one step).
    const over = (i: number) => (i === 2 ? 0 : i === last ? i - 2 : i - 1);
    const delta = (i: number) => (i < 2 ? '' : (med[i]! - med[over(i)]!).toFixed(1));
    console.log('| start | median ms | + ms over the line before |');
    console.log('|---|---|---|');
    steps.forEach(([name], i) => console.log(`| ${name} | ${med[i]!.toFixed(1)} | ${delta(i)} |`));
    console.log(`| the run's cgroups made and removed (in the runner's process) | ${median(cg).toFixed(2)} | |`);
    // The joins alone, timed inside the process that joins (a python3 moving itself, alternately by
    // pid into cgroup.procs and by its thread into the runner's files, 250 ms apart so each pays
    // the lock afresh): the spawns above are too noisy on a loaded machine to show a 10 ms step.
    const JOINS = `import os, sys, time, statistics
procs, own = sys.argv[1], sys.argv[2]
a, b = [], []
for i in range(${RUNS * 2}):
    time.sleep(0.25); t = time.perf_counter(); open(procs, 'w').write(str(os.getpid())); a.append((time.perf_counter() - t) * 1000)
    time.sleep(0.25); t = time.perf_counter(); open(own, 'w').write('0'); b.append((time.perf_counter() - t) * 1000)
print('%.2f %.3f' % (statistics.median(a), statistics.median(b)))`;
    const first = runCg.join[0];
    if (first) {
      const r = spawnSync('python3', ['-c', JOINS, join(dirname(first), 'cgroup.procs'), first], { encoding: 'utf8' });
      const [byPidMs, ownMs] = r.stdout.trim().split(' ');
      console.log(`| joining the first cgroup, timed in the joining process: by pid into cgroup.procs (before) | ${byPidMs ?? r.stderr} | |`);
      console.log(`| … by its own thread into ${basename(first)} (now) | ${ownMs ?? ''} | |`);
    }
    const start = (i: number) => (med[i]! - med[1]! + median(cg)).toFixed(1);
    console.log(`\nthe runner's start of a sandboxed command − the unsandboxed one: ${start(last)} ms (joining the cgroups by pid, as before: ${start(last - 1)} ms)`);
  } finally {
    await runCg?.remove();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Where a kept-mount call's time goes inside the mount's server: each call's envelope says how
 * long each of its phases took (`result.timings`), sandboxed and with `--sandbox none`, interleaved
 * (medians). What the sandbox adds there is in `executing` (the runner's start shell, bwrap's
 * namespaces, mounts and execs, the command, bwrap's exit and its init's); the plan of the run's
 * sandbox, made before `executing`, is timed apart in this process (planCost).
 */
function keptPhases(): void {
  const call = (mode: string) => {
    const r = spawnSync(process.execPath, [CLI, '--json', '--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--sandbox', mode, '--', 'true'], { env, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`a kept-mount call (--sandbox ${mode}) exited ${r.status}: ${r.stderr}`);
    return (JSON.parse(r.stdout) as { result: { timings: Record<string, number> } }).result.timings;
  };
  const modes = ['workspace', 'none'] as const;
  const seen = { workspace: [] as Record<string, number>[], none: [] as Record<string, number>[] };
  for (let r = 0; r < RUNS * 2; r++) for (const m of modes) seen[m].push(call(m));
  const phases = Object.keys(seen.workspace[0] ?? {}).filter((k) => k !== 'completed');
  const med = (m: (typeof modes)[number], k: string) => median(seen[m].map((t) => t[k] ?? 0));
  const sum = (m: (typeof modes)[number]) => phases.reduce((a, k) => a + med(m, k), 0);
  console.log(`\na kept-mount call's phases in the mount's server, from the envelopes (${RUNS * 2} interleaved calls each, medians)\n`);
  console.log('| phase | sandboxed ms | --sandbox none ms | + ms |');
  console.log('|---|---|---|---|');
  for (const k of phases) console.log(`| ${k} | ${med('workspace', k).toFixed(1)} | ${med('none', k).toFixed(1)} | ${(med('workspace', k) - med('none', k)).toFixed(1)} |`);
  console.log(`| all phases | ${sum('workspace').toFixed(1)} | ${sum('none').toFixed(1)} | ${(sum('workspace') - sum('none')).toFixed(1)} |`);
}

/**
 * The plan of a run's sandbox (planSandbox: the paths to hide and show, each resolved), as a run
 * makes it: afresh (the plan cache's file removed before each) and as a later run gets it, kept
 * (host/sandbox/planCache.ts), alternately.
 */
async function planCost(): Promise<void> {
  const s = await sandboxSupport();
  if (!s.ok) return;
  const input = { bwrap: s.bwrap, userns: s.userns, avfsHome: home, home: homedir(), mountpoint: join(home, 'mnt', 'kept'), readonly: false, network: false, settings: loadSandboxSettings(home), env: process.env, pidMax: s.pidMax, tmpfsSize: bwrapSizesTmpfs(s.version) };
  const fresh: number[] = [];
  const kept: number[] = [];
  for (let r = 0; r < RUNS * 20; r++) {
    rmSync(join(home, PLAN_CACHE_FILE), { force: true });
    let t0 = performance.now();
    planSandbox(input);
    fresh.push(performance.now() - t0);
    t0 = performance.now();
    planSandbox(input);
    kept.push(performance.now() - t0);
  }
  console.log(`the run's sandbox plan (planSandbox, ${RUNS * 20} times each in this process, alternately): ${median(fresh).toFixed(3)} ms made afresh, ${median(kept).toFixed(3)} ms kept from an earlier run (planCacheUse: ${JSON.stringify(planCacheUse)})`);
}

const host = startHost();
void (async () => {
  try {
    main();
    keptPhases();
    await planCost();
    await breakdown();
  } finally {
    spawnSync(process.execPath, [CLI, 'unmount', join(home, 'mnt', 'kept')], { env });
    // The host unmounts what it mounted when it stops.
    spawnSync(process.execPath, [CLI, 'host', 'stop'], { env: hostEnv });
    const deadline = Date.now() + 15_000;
    while (host.exitCode === null && host.signalCode === null && Date.now() < deadline) spawnSync('sleep', ['0.1']);
    rmSync(home, { recursive: true, force: true });
    rmSync(hostHome, { recursive: true, force: true });
  }
})();
