// What the executions view shows of a run, from real envelopes: the real CLI runs commands in a
// real vault (no host: in-process), and the view's rows and details are built from what it printed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ExecutionEnvelope } from '../../host/protocol/exec';
import type { ExecRun } from '../../host/protocol/host';
import { isChangedPath, runDetail, runSummary } from '../../extension/executions/runModel';
import { runCli, runJson, tempDir } from '../helpers';

describe('the executions view model', () => {
  const t = tempDir('avfs-runmodel-');
  const home = t.dir;
  const exec = async (...args: string[]): Promise<ExecRun> => {
    const r = await runCli(['--json', '--vault', 'v', 'proxy', 'exec', '--no-prompt', ...args], { home });
    const envelope = ExecutionEnvelope.parse(JSON.parse(r.stdout));
    return { id: envelope.id, vault: 'v', command: envelope.request.command, surface: 'cli', started_at: new Date().toISOString(), state: envelope.result.state, stdout: '', stderr: '', output_truncated: false, envelope };
  };

  before(async () => {
    await runJson(['vault', 'create', 'v'], { home });
    await runJson(['--vault', 'v', 'write', '/app.py', 'print("one")\n'], { home });
  });
  after(() => t.cleanup());

  test('a run that took a checkpoint: its changes listed, and it can be restored to before it', async () => {
    const run = await exec('--shell', 'sed -i s/one/two/ app.py && echo hi > new.txt && echo done');
    const s = runSummary(run);
    assert.deepEqual([s.command, s.vault, s.decision, s.state, s.exit_code, s.running, s.changed], ['sed -i s/one/two/ app.py && echo hi > new.txt && echo done', 'v', 'allow_with_checkpoint', 'completed', 0, false, 2]);
    const d = runDetail(run);
    assert.deepEqual(
      d.changes.map((c) => [c.kind, c.path, c.size]),
      [
        ['modified', '/app.py', '13 B → 13 B'],
        ['added', '/new.txt', '3 B'],
      ],
    );
    assert.equal(d.stdout.text, 'done\n');
    assert.equal(d.stdout.truncated, false);
    assert.ok(d.checkpoint?.startsWith('exec-'));
    assert.equal(d.restore.enabled, true);
    assert.match(d.restore.reason, new RegExp(`checkpoint ${d.checkpoint}, taken just before the command ran`));
    assert.equal(d.decision?.action, 'allow_with_checkpoint');
  });

  test('a run the policy allowed without a checkpoint cannot be restored, and says why and what to do', async () => {
    const d = runDetail(await exec('--', 'cat', 'app.py'));
    assert.equal(d.checkpoint, null);
    assert.deepEqual(d.restore, {
      enabled: false,
      reason: 'This run took no checkpoint (the policy let it run without one (allow)), so the tree before it was not kept. Run commands with --checkpoint always to be able to undo any run.',
    });
    // Skipping the policy's checkpoint takes the user's own rules (docs/policy.md).
    await runCli(['policy', 'set-user-rules', '-'], { home, input: JSON.stringify({ allow_checkpoint_never: true, rules: [] }) });
    const never = runDetail(await exec('--checkpoint', 'never', '--shell', 'echo x > y.txt'));
    await runCli(['policy', 'set-user-rules', '--clear'], { home });
    assert.match(never.restore.reason, /it was run with --checkpoint never/);
  });

  test('a denied run never ran: nothing to undo; its output is shown truncated when it was', async () => {
    const denied = runDetail(await exec('--shell', 'python3 -c "import socket"'));
    assert.equal(denied.summary.state, 'denied');
    assert.equal(denied.summary.exit_code, null);
    assert.deepEqual(denied.restore, { enabled: false, reason: 'The command never ran: there is nothing to undo.' });
    assert.equal(denied.approval, 'Denied: no approver was connected');
    const big = runDetail(await exec('--max-output', '1024', '--shell', 'seq 1 2000'));
    assert.equal(big.stdout.truncated, true);
    assert.equal(big.stdout.bytes, 8893);
  });

  test('a run lost with its host is shown as lost, not running, and cannot be restored', () => {
    const live: ExecRun = { id: 'r-lost', vault: 'v', command: 'sleep 60', surface: 'rpc', started_at: new Date().toISOString(), state: 'executing', stdout: 'so far\n', stderr: '', output_truncated: false, envelope: null };
    assert.equal(runSummary(live).running, true, 'while its host lives it is going');
    const s = runSummary(live, true);
    assert.deepEqual([s.state, s.running, s.exit_code], ['lost', false, null]);
    const d = runDetail(live, true);
    assert.equal(d.summary.state, 'lost');
    assert.equal(d.stdout.text, 'so far\n', 'what it printed is kept');
    assert.deepEqual(d.states, ['executing', 'lost']);
    assert.equal(d.restore.enabled, false);
    assert.match(d.restore.reason, /vault host stopped while this run was going/);
  });

  test('Open Diff opens only a file the run changed', async () => {
    const run = await exec('--shell', 'echo a > one.txt && mv one.txt two.txt && echo b > three.txt');
    for (const p of ['/two.txt', '/three.txt']) assert.equal(isChangedPath(run, p), true, p);
    for (const p of ['/app.py', '/etc/passwd', '../two.txt', '']) assert.equal(isChangedPath(run, p), false, p);
    assert.equal(isChangedPath(undefined, '/two.txt'), false);
  });
});
