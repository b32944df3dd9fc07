/**
 * A one-shot `avfs proxy exec` killed with SIGKILL mid-run (no host, no live mount: the CLI runs
 * the pipeline and serves the mount itself). Its run's guard must end the run as a time-out
 * would: the command's whole group stopped, the one-shot mount gone with its directory and
 * record, the run's end in the audit trail, the checkpoint kept; a kept mount stays up.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CLI, runJson, tempDir } from '../helpers';
import { fuseMissing } from '../fuse/helpers';
import { assertRunEnded, assertVaultAfter, longCommand, mounted, releaseMountsOf, whenRunning } from './orphanChecks';

describe('a one-shot proxy exec killed mid-run', { skip: fuseMissing }, () => {
  const t = tempDir('avfs-orphan-cli-');
  const home = t.dir;
  const started: ChildProcess[] = [];

  /** `avfs proxy exec` in its own process, with no host to route through. */
  const proxyExec = (vault: string, marker: string, extra: string[] = []) => {
    const child = spawn(process.execPath, [CLI, '--json', '--vault', vault, 'proxy', 'exec', ...extra, '--shell', longCommand(marker)], {
      env: { ...process.env, AVFS_HOME: home, AVFS_NO_HOST: '1' },
      stdio: 'ignore',
    });
    started.push(child);
    return child;
  };

  before(async () => {
    await runJson(['vault', 'create', 'cli'], { home });
    await runJson(['vault', 'create', 'kept'], { home });
  });
  after(async () => {
    for (const c of started) c.kill('SIGKILL');
    await releaseMountsOf(home);
    t.cleanup();
  });

  test('the command is stopped, the mount released, the run recorded as failed (OwnerDied), the vault intact', async () => {
    const marker = `orphan-cli-${randomUUID()}`;
    const cli = proxyExec('cli', marker);
    const run = await whenRunning(home, 'cli', marker);
    assert.equal(run.mountPid, cli.pid, 'the CLI serves the one-shot mount itself');
    assert.ok(mounted(run.mountpoint));
    cli.kill('SIGKILL');
    await assertRunEnded(home, run, marker, { oneShot: true });
    await assertVaultAfter(home, 'cli', run, new RegExp(`avfs proxy exec \\(pid ${cli.pid}\\) died`));
  });

  test('with --keep-mount: only the command is stopped; the kept mount stays up and serves the next call', async () => {
    const marker = `orphan-cli-kept-${randomUUID()}`;
    const cli = proxyExec('kept', marker, ['--keep-mount']);
    const run = await whenRunning(home, 'kept', marker);
    assert.notEqual(run.mountPid, cli.pid, 'a kept mount has its own server');
    cli.kill('SIGKILL');
    await assertRunEnded(home, run, marker, { oneShot: false });
    await assertVaultAfter(home, 'kept', run, new RegExp(`avfs proxy exec \\(pid ${cli.pid}\\) died`));
    assert.ok(mounted(run.mountpoint), 'the kept mount is still up');
    const next = await runJson(['--vault', 'kept', 'proxy', 'exec', '--keep-mount', '--', 'cat', 's'], { home });
    const result = next.json.result as { mount_reused: boolean; stdout: string; mountpoint: string };
    assert.equal(result.mount_reused, true);
    assert.equal(result.mountpoint, run.mountpoint);
    assert.equal(result.stdout, `${run.id} ${run.mountpoint}\n`);
    assert.equal((await runJson(['unmount', run.mountpoint], { home })).code, 0);
  });
});
