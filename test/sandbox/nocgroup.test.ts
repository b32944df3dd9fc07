/**
 * The process limit of a sandboxed run as root where no cgroup can be made (docs/exec.md, "Limits
 * on processes and memory"): RLIMIT_NPROC does not bind root, so the run gets a pid namespace of
 * its own whose pid_max bounds it. The CLI and a host run in a mount namespace where
 * /sys/fs/cgroup is an empty tmpfs (as in a container without a writable cgroup hierarchy); the
 * attacker is a script inside the run. The bounded fork loop runs first: only once it has shown
 * that the limit holds does the real fork bomb run (on a machine others share).
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

/** `sh -c SCRIPT args…` in a new mount namespace whose /sys/fs/cgroup is empty. */
const NO_CGROUP = ['unshare', '--mount', '--propagation', 'private', '/bin/sh', '-c', 'mount -t tmpfs avfs-no-cgroup /sys/fs/cgroup && exec "$@"', 'avfs-no-cgroup'];

function spawnNoCgroup(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(NO_CGROUP[0]!, [...NO_CGROUP.slice(1), process.execPath, CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
}

function runNoCgroup(args: string[], env: NodeJS.ProcessEnv, input = ''): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnNoCgroup(args, env);
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
    t.skip(`this kernel (${release()}) gives pid namespaces no pid_max of their own: as root without a cgroup runs have no process limit, as avfs doctor says`);
    return true;
  };
  let home: string;
  let env: NodeJS.ProcessEnv;
  const exec = async (args: string[], e = env) => {
    const r = await runNoCgroup(['--json', '--vault', 'main', 'proxy', 'exec', ...args], e);
    return { code: r.code, env: ExecutionEnvelope.parse(JSON.parse(r.stdout)), stderr: r.stderr };
  };

  before(async () => {
    supported = await pidMaxPerNamespace();
    base = mkdtempSync(join('/var/tmp', 'avfs-nocg-'));
    home = join(base, 'avfs');
    mkdirSync(home);
    env = { ...process.env, AVFS_HOME: home, AVFS_NO_HOST: '1' };
    assert.equal((await runNoCgroup(['vault', 'create', 'main'], env)).code, 0);
    assert.equal((await runNoCgroup(['--vault', 'main', 'write', '/forks.py'], env, FORKS)).code, 0);
    assert.equal((await runNoCgroup(['--vault', 'main', 'write', `/${bombFile}`], env, BOMB)).code, 0);
  });
  after(async () => {
    // Nothing should be left (the tests say so); whatever is, by pid.
    for (const pid of (await sh('pgrep', ['-f', `${marker}|bash ${bombFile}`])).stdout.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    rmSync(base, { recursive: true, force: true });
  });

  test('avfs doctor says how: a pid namespace for processes, rlimits for memory', async () => {
    const r = await runNoCgroup(['--json', 'doctor'], env);
    const d = JSON.parse(r.stdout).sandbox;
    assert.equal(d.ok, true, r.stdout);
    assert.deepEqual([d.limits.processes_by, d.limits.memory_by], [supported ? 'pid_namespace' : null, 'rlimit']);
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
