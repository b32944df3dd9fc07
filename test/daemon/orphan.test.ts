/**
 * A vault host killed with SIGKILL mid-run: the command it ran (in its runner), the one-shot
 * mount (served by a mount server of its own) and the run's record must not outlive it. The run's
 * guard ends the run as a time-out would; a kept mount stays up, only its command is stopped; a
 * client of the dead host (the CLI too) hears a typed error instead of nothing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { pidAlive } from '../../host/fuse/registry';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { CLI, runJson, tempDir } from '../helpers';
import { fuseMissing, sh } from '../fuse/helpers';
import { assertRunEnded, assertVaultAfter, longCommand, mounted, releaseMountsOf, whenRunning } from '../proxy/orphanChecks';
import { client, type HostProcess, startHost } from './helpers';

/** The host's command runner (dist/avfs-runner.js, its child). */
function runnerOf(hostPid: number): number {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === hostPid && readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('avfs-runner.js')) return Number(name);
    } catch {
      /* gone */
    }
  }
  throw new Error(`host ${hostPid} has no runner`);
}

describe('a vault host killed mid-run', { skip: fuseMissing }, () => {
  const t = tempDir('avfs-orphan-host-');
  const home = t.dir;
  let host: HostProcess | undefined;

  before(async () => {
    for (const v of ['one', 'kept', 'runner']) await runJson(['vault', 'create', v], { home });
  });
  after(async () => {
    await host?.stop();
    await releaseMountsOf(home);
    t.cleanup();
  });

  test('exec/run: the command is stopped, the one-shot mount unmounted and its server gone, the run recorded, the vault intact', async () => {
    host = await startHost(home);
    const c = await client(home);
    const marker = `orphan-host-${randomUUID()}`;
    const id = randomUUID();
    const call = c.call('exec/run', { vault: 'one', command: { shell: longCommand(marker) }, id }).then(
      () => 'answered',
      (e: unknown) => e,
    );
    const run = await whenRunning(home, 'one', marker);
    assert.equal(run.id, id);
    assert.notEqual(run.mountPid, host.pid, 'a mount server of its own serves the one-shot mount');
    assert.ok(pidAlive(run.mountPid) && mounted(run.mountpoint));
    host.child.kill('SIGKILL');
    await host.stop();
    host = undefined;
    await assertRunEnded(home, run, marker, { oneShot: true, serverPid: run.mountPid });
    await assertVaultAfter(home, 'one', run, /the vault host \(pid \d+\) died/);
    // The client is told, rather than left waiting for an answer that cannot come.
    const answer = (await call) as { kind?: string; message?: string };
    assert.equal(answer.kind, 'OwnerDied');
    c.close();
  });

  test('a kept mount stays up, only its command is stopped; the CLI that routed the run exits with OwnerDied', async () => {
    host = await startHost(home);
    const marker = `orphan-host-kept-${randomUUID()}`;
    const cli = spawn(process.execPath, [CLI, '--json', '--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--shell', longCommand(marker)], {
      env: { ...process.env, AVFS_HOME: home },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let out = '';
    cli.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((r) => cli.on('close', (code) => r(code)));
    const run = await whenRunning(home, 'kept', marker);
    host.child.kill('SIGKILL');
    await host.stop();
    host = undefined;
    await assertRunEnded(home, run, marker, { oneShot: false });
    await assertVaultAfter(home, 'kept', run, /the vault host \(pid \d+\) died/);
    assert.ok(mounted(run.mountpoint) && pidAlive(run.mountPid), 'the kept mount and its server are still up');
    const ls = await sh('ls', [run.mountpoint]);
    assert.match(ls.stdout, /^s$/m, 'and it serves the vault');
    assert.equal((await runJson(['unmount', run.mountpoint], { home })).code, 0);
    // The CLI that routed the run is told (it used to end quietly, exit 0, printing nothing).
    assert.equal(await exited, ERROR_TABLE.OwnerDied?.exit ?? 26);
    assert.equal((JSON.parse(out) as { error: string }).error, 'OwnerDied');
  });

  test('the host\'s command runner killed mid-run: the run fails, its command is stopped, its mount released', async () => {
    host = await startHost(home);
    const c = await client(home);
    const marker = `orphan-runner-${randomUUID()}`;
    const call = c.call('exec/run', { vault: 'runner', command: { shell: longCommand(marker) } });
    const run = await whenRunning(home, 'runner', marker);
    process.kill(runnerOf(host.pid), 'SIGKILL');
    const envelope = await call;
    assert.equal(envelope.result.state, 'failed');
    assert.match(envelope.result.error?.message ?? '', /runner exited/);
    await assertRunEnded(home, run, marker, { oneShot: true, serverPid: run.mountPid });
    // The host recorded the failure itself; the next run gets a new runner.
    const next = await c.call('exec/run', { vault: 'runner', command: { argv: ['cat', 's'] } });
    assert.equal(next.result.stdout, `${run.id} ${run.mountpoint}\n`);
    c.close();
  });
});
