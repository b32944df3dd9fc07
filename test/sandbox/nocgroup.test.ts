/**
 * The process limit of a sandboxed run as root where no cgroup can be made (docs/exec.md, "Limits
 * on processes and memory"): RLIMIT_NPROC does not bind root, so the run gets a pid namespace of
 * its own whose pid_max bounds it. The CLI and a host run in a mount namespace where
 * /sys/fs/cgroup is an empty tmpfs (as in a container without a writable cgroup hierarchy); the
 * attacker is a script inside the run. The bounded fork loop runs first: only once it has shown
 * that the limit holds does the real fork bomb run (on a machine others share). Then the same
 * with /proc/sys read-only too, so no pid namespace's pid_max can be set (as on a kernel before
 * 6.14): the runner's count ends the run at its limit.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { release } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExecutionEnvelope } from '../../host/protocol/exec';
import { CLI, type CliResult } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';

/**
 * `sh -c SCRIPT args…` in a new mount namespace whose /sys/fs/cgroup is empty; `oldKernel`: and
 * whose /proc/sys is read-only, so a pid namespace's pid_max cannot be set, as on a kernel before
 * 6.14 (Debian 12's 6.1).
 */
const noCgroup = (oldKernel: boolean) => [
  'unshare', '--mount', '--propagation', 'private', '/bin/sh', '-c',
  `mount -t tmpfs avfs-no-cgroup /sys/fs/cgroup${oldKernel ? ' && mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys' : ''} && exec "$@"`,
  'avfs-no-cgroup',
];

function spawnNoCgroup(args: string[], env: NodeJS.ProcessEnv, oldKernel = false): ChildProcess {
  const prefix = noCgroup(oldKernel);
  return spawn(prefix[0]!, [...prefix.slice(1), process.execPath, CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

function runNoCgroup(args: string[], env: NodeJS.ProcessEnv, input = '', oldKernel = false): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnNoCgroup(args, env, oldKernel);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      const stdoutBytes = Buffer.concat(out);
      resolve({ code: code ?? -1, stdout: stdoutBytes.toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), stdoutBytes });
    });
    child.stdin!.end(input);
  });
}

const marker = `avfs-nocg-${process.pid}`;
/** Up to 1500 processes (each a sleep under a name of this test's): how many the run could start. */
const FORKS = `import os\nn = 0\nfor i in range(1500):\n    try:\n        pid = os.fork()\n    except OSError:\n        break\n    if pid == 0:\n        os.execv('/bin/sleep', ['${marker}', '30'])\n    n += 1\nprint(n)\n`;
const BOMB = 'b() { b | b & }\nb\nsleep 60\n';
const bombFile = `bomb-${process.pid}.sh`;

/** No process of this test's runs is left anywhere on the machine. */
async function noStrays(): Promise<void> {
  const gone = await waitFor(async () => (await sh('pgrep', ['-f', `${marker}|bash ${bombFile}`])).stdout === '', 10_000);
  assert.ok(gone, `stray processes: ${(await sh('pgrep', ['-af', `${marker}|bash ${bombFile}`])).stdout}`);
}

/** An avfs home with a vault holding the fork script and the bomb, made as the tests' CLI sees it. */
async function setUp(prefix: string, oldKernel: boolean): Promise<{ base: string; env: NodeJS.ProcessEnv }> {
  const base = mkdtempSync(join('/var/tmp', prefix));
  const home = join(base, 'avfs');
  mkdirSync(home);
  const env = { ...process.env, AVFS_HOME: home, AVFS_NO_HOST: '1' };
  assert.equal((await runNoCgroup(['vault', 'create', 'main'], env, '', oldKernel)).code, 0);
  assert.equal((await runNoCgroup(['--vault', 'main', 'write', '/forks.py'], env, FORKS, oldKernel)).code, 0);
  assert.equal((await runNoCgroup(['--vault', 'main', 'write', `/${bombFile}`], env, BOMB, oldKernel)).code, 0);
  return { base, env };
}

/** Nothing should be left (the tests say so); whatever is, by pid. */
async function tearDown(base: string): Promise<void> {
  for (const pid of (await sh('pgrep', ['-f', `${marker}|bash ${bombFile}`])).stdout.split('\n').filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  rmSync(base, { recursive: true, force: true });
}

function assertLimitedByPidNamespace(env: ExecutionEnvelope): void {
  const s = env.result.sandbox!;
  assert.equal(s.mode, 'workspace');
  assert.deepEqual([s.limits.processes, s.limits.processes_by], [1024, 'pid_namespace']);
  assert.equal(s.limits.memory_by, 'rlimit');
}

/** Whether this kernel gives a pid namespace its own pid_max (Linux 6.14): else no limit binds root without a cgroup. */
async function pidMaxPerNamespace(): Promise<boolean> {
  return (await sh('unshare', ['--pid', '--fork', '/bin/sh', '-c', 'echo 400 > /proc/sys/kernel/pid_max && [ "$(cat /proc/sys/kernel/pid_max)" = 400 ]'])).code === 0;
}

describe('sandbox: as root where no cgroup can be made, a pid namespace limits a run\'s processes', () => {
  let base: string;
  let supported = false;
  /** Never a fork bomb without a limit (others share this machine): on an older kernel only the doctor's answer is checked. */
  const needsPidMax = (t: { skip(m: string): void }) => {
    if (supported) return false;
    t.skip(`this kernel (${release()}) gives pid namespaces no pid_max of their own: as root without a cgroup the runner's count limits a run (the tests below), as avfs doctor says`);
    return true;
  };
  let env: NodeJS.ProcessEnv;
  const exec = async (args: string[], e = env) => {
    const r = await runNoCgroup(['--json', '--vault', 'main', 'proxy', 'exec', ...args], e);
    return { code: r.code, env: ExecutionEnvelope.parse(JSON.parse(r.stdout)), stderr: r.stderr };
  };

  before(async () => {
    supported = await pidMaxPerNamespace();
    ({ base, env } = await setUp('avfs-nocg-', false));
  });
  after(() => tearDown(base));

  test('avfs doctor says how: a pid namespace for processes, rlimits for memory', async () => {
    const r = await runNoCgroup(['--json', 'doctor'], env);
    const d = JSON.parse(r.stdout).sandbox;
    assert.equal(d.ok, true, r.stdout);
    assert.deepEqual([d.limits.processes_by, d.limits.memory_by], [supported ? 'pid_namespace' : 'watcher', 'rlimit']);
  });

  test('a script starting 1500 processes gets about its limit of 1024, the overrun is recorded, and nothing of it is left', async (t) => {
    if (needsPidMax(t)) return;
    const { code, env: e } = await exec(['--', 'python3', 'forks.py']);
    assert.equal(code, 0, e.result.stderr);
    assertLimitedByPidNamespace(e);
    const started = Number(e.result.stdout.trim());
    // pid_max is 1024 + 300: at least 1024 pids are free to the run, at most 1323 (a few taken by sh, bwrap, python).
    assert.ok(started >= 1000 && started < 1324, `started ${started}`);
    assert.equal(e.result.sandbox!.violations[0]?.kind, 'process_limit', JSON.stringify(e.result.sandbox));
    assert.equal(e.result.leftover_processes, 0);
    await noStrays();
  });

  test('a fork bomb from a one-shot CLI ends timed out with an envelope and a violation; the next run is fine', async (t) => {
    if (needsPidMax(t)) return;
    const bomb = await exec(['--timeout', '4000', '--grace', '500', '--', 'bash', bombFile]);
    assert.equal(bomb.env.result.state, 'timed_out', bomb.stderr);
    assert.equal(bomb.code, 124);
    assertLimitedByPidNamespace(bomb.env);
    assert.equal(bomb.env.result.sandbox!.violations[0]?.kind, 'process_limit');
    assert.doesNotMatch(bomb.stderr, /ERR_WORKER_INIT_FAILED|uncaught/i);
    await noStrays();
    const next = await exec(['--', 'sh', '-c', 'echo alive']);
    assert.equal(next.env.result.stdout, 'alive\n');
  });

  test('a fork bomb through a host ends the same way and the host stays healthy', async (t) => {
    if (needsPidMax(t)) return;
    const { AVFS_NO_HOST: _oneShot, ...hostEnv } = env;
    const host = spawnNoCgroup(['host'], hostEnv);
    let log = '';
    host.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    host.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    try {
      assert.ok(await waitFor(() => log.includes(' serving '), 20_000), `the host did not start:\n${log}`);
      const bomb = await exec(['--timeout', '4000', '--grace', '500', '--', 'bash', bombFile], hostEnv);
      assert.equal(bomb.env.result.state, 'timed_out', bomb.stderr);
      assertLimitedByPidNamespace(bomb.env);
      assert.equal(bomb.env.result.sandbox!.violations[0]?.kind, 'process_limit');
      await noStrays();
      assert.equal(host.exitCode, null, `the host is alive:\n${log}`);
      const next = await exec(['--', 'sh', '-c', 'echo alive'], hostEnv);
      assert.equal(next.env.result.stdout, 'alive\n');
      // The host ran it: a one-shot mount is named after the process that serves it.
      assert.match(bomb.env.result.mountpoint ?? '', new RegExp(`\\.exec-${host.pid}-`));
      assert.equal((await runNoCgroup(['host', 'status'], hostEnv)).code, 0);
      assert.doesNotMatch(log, /ERR_WORKER_INIT_FAILED|uncaught/i);
    } finally {
      host.kill('SIGTERM');
      await waitFor(() => host.exitCode !== null || host.signalCode !== null, 15_000);
    }
  });
});

describe('sandbox: as root where no cgroup can be made and a pid namespace has no pid_max of its own (kernels before 6.14), the runner\'s count ends a run at its limit', () => {
  let base: string;
  let env: NodeJS.ProcessEnv;
  const run = (args: string[], e = env, input = '') => runNoCgroup(args, e, input, true);
  const exec = async (args: string[], e = env) => {
    const r = await run(['--json', '--vault', 'main', 'proxy', 'exec', ...args], e);
    return { code: r.code, env: ExecutionEnvelope.parse(JSON.parse(r.stdout)), stderr: r.stderr };
  };
  /** Ended at the limit by the runner's count (killed, as the kernel ends a run at its memory limit; not timed out), the violation says so, nothing left. */
  const assertEndedAtLimit = async (t: { diagnostic(m: string): void }, e: ExecutionEnvelope, started: number) => {
    const s = e.result.sandbox!;
    t.diagnostic(s.violations[0]?.message ?? 'no violation');
    assert.deepEqual([s.limits.processes, s.limits.processes_by, s.limits.memory_by], [1024, 'watcher', 'rlimit']);
    assert.deepEqual([e.result.state, e.success, e.result.exit_code, e.result.signal], ['completed', false, 137, 'SIGKILL'], e.result.stderr);
    assert.ok(Date.now() - started < 20_000, 'ended at the limit, not by the time limit');
    assert.equal(s.violations[0]?.kind, 'process_limit', JSON.stringify(s));
    assert.match(s.violations[0]!.message, /limit of 1024 processes \(\d+ seen at once\): the run was ended/);
    assert.equal(e.result.leftover_processes, 0);
    await noStrays();
  };

  before(async () => {
    ({ base, env } = await setUp('avfs-nocg-old-', true));
  });
  after(() => tearDown(base));

  test('avfs doctor says how, and why no kernel limit binds root here', async () => {
    const r = await run(['--json', 'doctor']);
    const d = JSON.parse(r.stdout).sandbox;
    assert.equal(d.ok, true, r.stdout);
    assert.deepEqual([d.limits.processes_by, d.limits.memory_by], ['watcher', 'rlimit']);
    assert.match(d.limits.processes_how, /RLIMIT_NPROC exempts uid 0.*counts the run's processes every 20 ms and ends the run/);
    assert.match((await run(['doctor'])).stdout, /process limit 1024: watcher;.*\n {2}processes: as root with no cgroup/);
  });

  test('a script starting 1500 processes is ended near its limit of 1024, with the overrun recorded and nothing left', async (t) => {
    const t0 = Date.now();
    const { env: e } = await exec(['--timeout', '60000', '--', 'python3', 'forks.py']);
    await assertEndedAtLimit(t, e, t0);
    const seen = Number(/\((\d+) seen at once\)/.exec(e.result.sandbox!.violations[0]!.message)![1]);
    assert.ok(seen >= 1024 && seen < 1500, `seen ${seen}`);
  });

  test('a fork bomb from a one-shot CLI is ended at its limit with an envelope; the next run is fine', async (t) => {
    const t0 = Date.now();
    const bomb = await exec(['--timeout', '30000', '--grace', '500', '--', 'bash', bombFile]);
    assert.doesNotMatch(bomb.stderr, /ERR_WORKER_INIT_FAILED|uncaught/i);
    await assertEndedAtLimit(t, bomb.env, t0);
    const next = await exec(['--', 'sh', '-c', 'echo alive']);
    assert.equal(next.env.result.stdout, 'alive\n');
  });

  test('a fork bomb through a host is ended the same way and the host stays healthy', async (t) => {
    const { AVFS_NO_HOST: _oneShot, ...hostEnv } = env;
    const host = spawnNoCgroup(['host'], hostEnv, true);
    let log = '';
    host.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    host.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    try {
      assert.ok(await waitFor(() => log.includes(' serving '), 20_000), `the host did not start:\n${log}`);
      const t0 = Date.now();
      const bomb = await exec(['--timeout', '30000', '--grace', '500', '--', 'bash', bombFile], hostEnv);
      await assertEndedAtLimit(t, bomb.env, t0);
      assert.match(bomb.env.result.mountpoint ?? '', new RegExp(`\\.exec-${host.pid}-`));
      assert.equal(host.exitCode, null, `the host is alive:\n${log}`);
      const next = await exec(['--', 'sh', '-c', 'echo alive'], hostEnv);
      assert.equal(next.env.result.stdout, 'alive\n');
      assert.equal((await run(['host', 'status'], hostEnv)).code, 0);
      assert.doesNotMatch(log, /ERR_WORKER_INIT_FAILED|uncaught/i);
    } finally {
      host.kill('SIGTERM');
      await waitFor(() => host.exitCode !== null || host.signalCode !== null, 15_000);
    }
  });
});
