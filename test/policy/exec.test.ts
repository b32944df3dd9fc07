/**
 * The rules a person sets, against real runs (`avfs proxy exec`, a real FUSE mount): a run cannot
 * skip the policy's checkpoint unless the user's own rules allow it, and a run cannot drive avfs
 * (approve, set rules …) from inside.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EXEC_EXIT, ExecutionEnvelope } from '../../host/protocol/exec';
import { CLI, runCli, runJson, tempDir } from '../helpers';

describe('policy rules in real runs', () => {
  const t = tempDir('avfs-policy-exec-');
  const home = t.dir;
  const json = (args: string[]) => runJson(args, { home });
  async function exec(args: string[]): Promise<{ env: ExecutionEnvelope; code: number }> {
    const r = await runCli(['--json', '--vault', 'pe', 'proxy', 'exec', '--no-prompt', ...args], { home });
    return { env: ExecutionEnvelope.parse(JSON.parse(r.stdout)), code: r.code };
  }

  before(async () => {
    assert.equal((await json(['vault', 'create', 'pe'])).code, 0);
    await json(['--vault', 'pe', 'write', '/important.txt', 'keep me\n']);
  });
  after(() => t.cleanup());

  test('--checkpoint never is refused where the policy takes a checkpoint, unless the user allows it', async () => {
    const refused = await exec(['--checkpoint', 'never', '--', 'rm', '-f', 'important.txt']);
    assert.equal(refused.env.result.state, 'denied');
    assert.equal(refused.code, EXEC_EXIT.denied);
    assert.equal(refused.env.result.error?.error, 'PolicyDenied');
    assert.match(refused.env.result.error?.message ?? '', /--checkpoint never/);
    assert.equal((await runCli(['--vault', 'pe', 'cat', '/important.txt'], { home })).stdout, 'keep me\n', 'nothing ran');
    // A read-only command takes no checkpoint anyway: never is fine.
    const read = await exec(['--checkpoint', 'never', '--', 'cat', 'important.txt']);
    assert.equal(read.env.result.state, 'completed');

    // A vault's rules cannot grant it.
    const vaultRules = join(home, 'vault-rules.json');
    writeFileSync(vaultRules, JSON.stringify({ allow_checkpoint_never: true, rules: [] }));
    assert.equal((await json(['--vault', 'pe', 'policy', 'set-vault-rules', vaultRules])).code, 0);
    assert.equal((await exec(['--checkpoint', 'never', '--', 'touch', 'x'])).env.result.state, 'denied');
    // Nor a user file changed outside `avfs policy`.
    writeFileSync(join(home, 'policy.json'), JSON.stringify({ allow_checkpoint_never: true, rules: [] }));
    assert.equal((await exec(['--checkpoint', 'never', '--', 'touch', 'x'])).env.result.state, 'denied');

    // The user's own rules, set by a person.
    assert.equal((await json(['policy', 'set-user-rules', join(home, 'policy.json')])).code, 0);
    const honoured = await exec(['--checkpoint', 'never', '--', 'rm', '-f', 'important.txt']);
    assert.equal(honoured.env.result.state, 'completed');
    assert.equal(honoured.env.result.checkpoint, null);
    assert.equal((await json(['policy', 'set-user-rules', '--clear'])).code, 0);
    assert.equal((await json(['--vault', 'pe', 'policy', 'set-vault-rules', '--clear'])).code, 0);
  });

  test('avfs itself is denied from inside a run: approve, policy, rules, quota, host, mount', async () => {
    const rules = join(home, 'loose.json');
    writeFileSync(rules, JSON.stringify({ rules: [{ prefix: ['docker'], action: 'allow' }] }));
    for (const line of [
      'avfs approve 1',
      `avfs --vault pe policy set-vault-rules ${rules}`,
      `avfs policy set-user-rules ${rules}`,
      'echo ok && avfs deny 2',
      `node ${CLI} approve 1`,
      'sh -c "avfs host stop"',
      'avfs mount pe /workspace/m',
      'AVFS_HOME=. avfs vault list',
      'xargs avfs rm < list.txt',
    ]) {
      const r = await exec(['--shell', line]);
      assert.equal(r.env.result.state, 'denied', line);
      assert.equal(r.env.result.error?.error, 'PolicyDenied', line);
    }
    // Nothing changed: no user rules, no vault rules.
    const report = (await json(['--vault', 'pe', 'policy', 'rules'])).json as { files: { source: string; present: boolean }[] };
    assert.deepEqual(report.files.filter((f) => f.source !== 'builtin').map((f) => f.present), [false, false]);
    // Its version is harmless.
    assert.equal((await exec(['--', 'avfs', '--version'])).env.result.decision?.action, 'allow');
  });
});
