/**
 * The CLI goes through a running host: the same command, routed through a real `avfs host` or run
 * in-process (AVFS_NO_HOST=1), prints the same bytes and ends with the same exit code, errors
 * included, and the host's log shows the routed call arriving.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { runCli, runJson, tempDir } from '../helpers';
import { waitFor } from '../fuse/helpers';
import { type HostProcess, hostRunning, startHost } from './helpers';

/** Pids of the command runners (host/proxy/runnerProcess.ts) started for this avfs home. */
function runnersOf(home: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('avfs-runner.js') && readFileSync(`/proc/${p}/environ`, 'utf8').split('\0').includes(`AVFS_HOME=${home}`);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Fields that hold a time (or a name made from one): the only bytes two runs of one command may differ in. */
const TIMES = new Set(['created_at', 'timestamp', 'duration_ms', 'undo_checkpoint']);

function maskTimes(stdout: string): string {
  const mask = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(mask) : v && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, TIMES.has(k) ? '<time>' : mask(x)])) : v;
  return JSON.stringify(mask(JSON.parse(stdout)), null, 2);
}

describe('CLI calls routed through a running host', () => {
  const t = tempDir('avfs-routing-');
  const home = t.dir;
  let host: HostProcess;
  const routed = (args: string[]) => runCli(['--json', '--vault', 'r', ...args], { home });
  const local = (args: string[]) => runCli(['--json', '--vault', 'r', ...args], { home, env: { AVFS_NO_HOST: '1' } });
  const calls = (method: string) => host.log().split('\n').filter((l) => l.includes(` call ${method} from avfs `)).length;

  /** Runs `args` through the host, then in-process, and checks both print the same and end the same. */
  async function same(args: string[], method: string, opts: { masked?: boolean; between?: (routedStdout: string) => Promise<unknown> } = {}) {
    const before = calls(method);
    const a = await routed(args);
    assert.equal(calls(method), before + 1, `the host logged one ${method} call for avfs ${args.join(' ')}:\n${host.log()}`);
    await opts.between?.(a.stdout);
    const mid = calls(method);
    const b = await local(args);
    assert.equal(calls(method), mid, 'the in-process run did not reach the host');
    assert.equal(a.code, b.code, `exit code of avfs ${args.join(' ')}`);
    if (opts.masked) assert.equal(maskTimes(a.stdout), maskTimes(b.stdout), `avfs ${args.join(' ')}`);
    else assert.equal(a.stdout, b.stdout, `avfs ${args.join(' ')}`);
    assert.equal(a.stderr, b.stderr);
    return a;
  }

  before(async () => {
    const j = (args: string[]) => runJson(args, { home });
    await j(['vault', 'create', 'r']);
    await j(['--vault', 'r', 'write', '/src/app.py', 'print(1)', '-p']);
    await runJson(['--vault', 'r', 'write', '/bin.dat'], { home, input: Buffer.from([0xff, 0xfe, 0x00, 0x41]) });
    await j(['--vault', 'r', 'checkpoint', 'save', 'base']);
    await j(['--vault', 'r', 'write', '/src/app.py', 'print(2)']);
    host = await startHost(home, ['--verbose']);
  });
  after(async () => {
    await host.stop();
    t.cleanup();
  });

  test('reads: the same bytes, routed or not', async () => {
    await same(['ls', '-l', '/src'], 'fs/readDirectory');
    await same(['stat', '/src/app.py'], 'fs/stat');
    await same(['cat', '/src/app.py'], 'fs/readText');
    await same(['cat', '/bin.dat'], 'fs/readText');
    await same(['checkpoint', 'list'], 'checkpoint/list');
    await same(['checkpoint', 'diff', 'base', '--patch'], 'checkpoint/diff');
    await same(['vault', 'list'], 'vault/list');
    await same(['vault', 'info'], 'vault/info');
    await same(['quota'], 'quota/get');
  });

  test('writes: the same result, recorded as the CLI\'s in the audit trail', async () => {
    const undo = () => runJson(['--vault', 'r', 'rm', '/w.txt'], { home });
    await same(['write', '/w.txt', 'hello'], 'fs/writeFile', { between: undo });
    await same(['quota', 'set', 'max_files', '1000'], 'quota/set');
    const dropCp = () => runJson(['--vault', 'r', 'checkpoint', 'delete', 'cp1'], { home });
    await same(['checkpoint', 'save', 'cp1', '-m', 'one'], 'checkpoint/save', { masked: true, between: dropCp });
    // Undone in between, so both runs restore from the same tree.
    const undoRestore = (out: string) => runJson(['--vault', 'r', 'checkpoint', 'restore', JSON.parse(out).undo_checkpoint as string], { home });
    await same(['checkpoint', 'restore', 'base'], 'checkpoint/restore', { masked: true, between: undoRestore });
    const dropFork = () => runJson(['vault', 'delete', 'f', '--yes'], { home });
    await same(['vault', 'fork', 'r', 'f'], 'vault/fork', { masked: true, between: dropFork });
    const reFork = () => runJson(['vault', 'fork', 'r', 'f'], { home });
    await same(['vault', 'delete', 'f', '--yes'], 'vault/delete', { between: reFork });
    const audit = await same(['audit', '-n', '30'], 'audit/list');
    const entries = (JSON.parse(audit.stdout) as { entries: Array<{ operation: string; path: string | null; surface: string }> }).entries;
    assert.deepEqual(
      entries.filter((e) => e.path === '/w.txt').map((e) => [e.operation, e.surface]),
      [['create', 'cli'], ['unlink', 'cli'], ['create', 'cli']],
      'a routed write is the CLI\'s, as an in-process one is',
    );
  });

  test('errors: the same error document and exit code, routed or not', async () => {
    await same(['stat', '/missing'], 'fs/stat');
    await same(['cat', '/src'], 'fs/readText');
    await same(['checkpoint', 'info', 'nope'], 'checkpoint/info');
    await same(['vault', 'info', 'nope'], 'vault/info');
    await same(['checkpoint', 'save', 'bad name'], 'checkpoint/save');
    await runJson(['--vault', 'r', 'quota', 'set', 'max_files', '3'], { home });
    const full = await same(['write', '/over.txt', 'x'], 'fs/writeFile');
    assert.equal(JSON.parse(full.stdout).error, 'QuotaExceeded');
    await runJson(['--vault', 'r', 'quota', 'clear', 'max_files'], { home });
    const noVault = await runCli(['--json', '--vault', 'ghost', 'ls'], { home });
    const noVaultLocal = await runCli(['--json', '--vault', 'ghost', 'ls'], { home, env: { AVFS_NO_HOST: '1' } });
    assert.deepEqual([noVault.code, noVault.stdout], [noVaultLocal.code, noVaultLocal.stdout]);
  });

  test('a host that accepts but does not answer (stopped): the CLI works in-process after a short wait', async () => {
    host.child.kill('SIGSTOP');
    try {
      const r = await runCli(['--json', '--vault', 'r', 'stat', '/src/app.py'], { home });
      assert.equal(r.code, 0, r.stdout);
      assert.equal(JSON.parse(r.stdout).path, '/src/app.py');
    } finally {
      host.child.kill('SIGCONT');
    }
    assert.equal((await routed(['stat', '/src/app.py'])).code, 0, 'and the host answers again once it runs');
  });

  test('a host killed with SIGKILL: the next CLI call works in-process and clears the record; its command runner goes too', async () => {
    assert.equal(runnersOf(home).length, 1, 'the host started its command runner');
    host.child.kill('SIGKILL');
    await host.stop();
    assert.equal(hostRunning(home), true);
    assert.ok(await waitFor(() => runnersOf(home).length === 0, 5000), 'the runner left with its host');
    const r = await runCli(['--json', '--vault', 'r', 'stat', '/src/app.py'], { home });
    assert.equal(r.code, 0, r.stdout);
    assert.equal(hostRunning(home), false, 'the stale record is gone');
    host = await startHost(home, ['--verbose']);
  });
});
