/**
 * What a one-shot `avfs proxy exec` (no host: the CLI runs the command itself) leaves behind, tried
 * from the attacker's side: the command double-forks a process into a session of its own with an
 * empty environment (no AVFS_EXEC_ID) and exits. In the sandbox that process ends with the run's
 * pid namespace: it is gone when the call returns, so nothing of the run is left to answer an
 * approval later. With `--sandbox none` it outlives the call, re-parented away from the run and
 * with nothing that marks it as the run's (docs/exec.md says so): the case that shows the probe
 * finds such a process.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { runCli, runJson, tempDir } from '../helpers';
import { fuseMissing } from '../fuse/helpers';

/** The pids of processes whose command line is exactly `argv`. */
function processesRunning(argv: string[]): number[] {
  const want = `${argv.join('\0')}\0`;
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'latin1') === want) found.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return found;
}

const bwrap = (() => {
  try {
    readFileSync('/usr/bin/bwrap');
    return true;
  } catch {
    return false;
  }
})();

describe('a process a one-shot run leaves behind', { skip: fuseMissing || (!bwrap && 'no bubblewrap') }, () => {
  const t = tempDir('avfs-left-behind-');
  const home = t.dir;
  const leftover: number[] = [];

  before(async () => {
    await runJson(['vault', 'create', 'v'], { home });
  });
  after(() => {
    for (const pid of leftover) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    t.cleanup();
  });

  /** Runs the double-forking command in a one-shot call; the orphan is `sleep <marker>`, started once it wrote `up-<marker>` in the vault. */
  async function leave(sandbox: 'workspace' | 'none') {
    const marker = `${randomInt(100, 999)}.${randomInt(100_000, 999_999)}`;
    const command = `(setsid env -i /bin/sh -c 'echo up > up-${marker}; exec sleep ${marker}' </dev/null >/dev/null 2>&1 &); for i in $(seq 100); do [ -e up-${marker} ] && break; sleep 0.05; done; echo left`;
    const r = await runCli(['--json', '--vault', 'v', 'proxy', 'exec', '--sandbox', sandbox, '--shell', command], { home, env: { AVFS_NO_HOST: '1' } });
    assert.equal(r.code, 0, `${r.stdout}${r.stderr}`);
    const envelope = JSON.parse(r.stdout) as { result: { state: string; stdout: string; changed_files: string[] } };
    assert.deepEqual([envelope.result.state, envelope.result.stdout], ['completed', 'left\n']);
    assert.ok(envelope.result.changed_files.includes(`/up-${marker}`), `the left-behind process ran inside the run: ${r.stdout}`);
    return ['sleep', marker];
  }

  test('in the sandbox it ends with the run (its pid namespace): nothing of it is left when the call returns', async () => {
    const argv = await leave('workspace');
    let found = processesRunning(argv);
    // The namespace's processes are killed as its first process exits; reaping them takes a moment.
    for (const end = Date.now() + 5000; found.length > 0 && Date.now() < end; found = processesRunning(argv)) await new Promise((r) => setTimeout(r, 50));
    leftover.push(...found);
    assert.deepEqual(found, [], `a process of the sandboxed run outlived it: ${argv.join(' ')}`);
  });

  test('with --sandbox none it outlives the call, re-parented and with an environment that does not mark it as the run\'s', async () => {
    const argv = await leave('none');
    const found = processesRunning(argv);
    leftover.push(...found);
    assert.equal(found.length, 1, `the probe finds the left-behind process (${argv.join(' ')})`);
    const environ = readFileSync(`/proc/${found[0]}/environ`, 'latin1');
    assert.doesNotMatch(environ, /AVFS_EXEC_ID/);
  });
});
