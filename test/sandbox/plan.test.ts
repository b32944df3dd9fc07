/**
 * The sandbox plan's path decisions (host/sandbox/plan.ts, toolFolders.ts) on a real file system:
 * the spellings a home or a PATH comes in (a trailing slash, `..`, a link), and look-alike names.
 * What a run then sees is tested with real bubblewrap in sandbox.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { AvfsError } from '../../host/protocol/errors';
import { homeReadOnly, loadSandboxSettings, planSandbox, type PlanInput } from '../../host/sandbox/plan';
import { within } from '../../host/sandbox/secrets';

const base = realpathSync(mkdtempSync('/var/tmp/avfs-plan-'));
const home = join(base, 'home');
const avfs = join(base, 'avfs');
for (const d of [join(home, '.ssh'), join(home, '.tool', 'bin'), join(home, '.toolkit', 'bin'), join(home, '.cargo', 'bin'), avfs]) mkdirSync(d, { recursive: true });
writeFileSync(join(home, '.cargo', 'credentials.toml'), 'token');
writeFileSync(join(home, '.gitconfig'), '');
symlinkSync(home, join(base, 'home-link'));

const input = (over: Partial<PlanInput>): PlanInput => ({
  bwrap: '/usr/bin/bwrap', userns: false, avfsHome: avfs, home, mountpoint: join(avfs, 'mnt', 'x'), readonly: false, network: false,
  settings: loadSandboxSettings(avfs), env: { PATH: '/usr/bin:/bin' }, pidMax: false, ...over,
});

describe('sandbox plan: paths', () => {
  after(() => rmSync(base, { recursive: true, force: true }));

  test('a folder is within another by whole names: /x/.toolkit is not under /x/.tool', () => {
    assert.equal(within(join(home, '.toolkit'), join(home, '.tool')), false);
    assert.equal(within(join(home, '.tool', 'bin'), join(home, '.tool')), true);
    assert.equal(within(join(home, '.tool'), join(home, '.tool')), true);
    assert.equal(within('/anything', '/'), true);
  });

  test('a home written with a trailing slash, or reached through a link, plans the same tool folders and hides the same secrets', () => {
    const path = `${join(home, '.tool', 'bin')}:${join(home, '.cargo', 'bin')}:relative/bin:${join(home, '.toolkit', 'bin', '..', 'bin')}:/usr/bin`;
    const plain = planSandbox(input({ env: { PATH: path } }));
    // .cargo is a known manager's (shown whole, its token hidden again); the others show their bin alone.
    assert.deepEqual(plain.pathReadOnly, [join(home, '.cargo'), join(home, '.tool', 'bin'), join(home, '.toolkit', 'bin')]);
    assert.deepEqual(plain.hiddenAgain, [{ path: join(home, '.cargo', 'credentials.toml'), dir: false }]);
    for (const h of [`${home}/`, join(base, 'home-link')]) {
      const p = planSandbox(input({ home: h, env: { PATH: path } }));
      assert.deepEqual([p.pathReadOnly, p.hiddenAgain], [plain.pathReadOnly, plain.hiddenAgain], h);
    }
  });

  test('an editor server\'s CLI on PATH shows that folder alone, not the server\'s data and extensions beside it', () => {
    const cli = join(home, '.vscode-server', 'bin', 'abc123', 'bin', 'remote-cli');
    mkdirSync(cli, { recursive: true });
    mkdirSync(join(home, '.vscode-server', 'data', 'User'), { recursive: true });
    const p = planSandbox(input({ env: { PATH: `${cli}:/usr/bin` } }));
    assert.deepEqual(p.pathReadOnly, [cli]);
  });

  test('a shown tool folder\'s config that holds a registry token (cargo\'s config.toml) is hidden again; one without a token stays in sight', () => {
    const config = join(home, '.cargo', 'config.toml');
    const env = { PATH: `${join(home, '.cargo', 'bin')}:/usr/bin` };
    try {
      writeFileSync(config, '[build]\njobs = 2\n');
      assert.deepEqual(planSandbox(input({ env })).hiddenAgain.map((h) => h.path), [join(home, '.cargo', 'credentials.toml')]);
      writeFileSync(config, '[build]\njobs = 2\n[registry]\n  token = "cio-secret"\n');
      assert.deepEqual(planSandbox(input({ env })).hiddenAgain, [{ path: join(home, '.cargo', 'credentials.toml'), dir: false }, { path: config, dir: false }]);
    } finally {
      rmSync(config, { force: true });
    }
  });

  test('a PATH folder named through a link in the home is linked again inside, whether its target is shown or in sight already', () => {
    const outside = join(base, 'opt', 'tools', 'bin');
    mkdirSync(outside, { recursive: true });
    symlinkSync(outside, join(home, 'tools-bin'));
    symlinkSync(join(home, '.tool', 'bin'), join(home, 'tool-bin'));
    const p = planSandbox(input({ env: { PATH: `${join(home, 'tools-bin')}:${join(home, 'tool-bin')}:/usr/bin` } }));
    assert.deepEqual(p.pathReadOnly, [join(home, '.tool', 'bin')]);
    assert.deepEqual(p.pathLinks, [{ path: join(home, 'tool-bin'), target: join(home, '.tool', 'bin') }, { path: join(home, 'tools-bin'), target: outside }]);
  });

  test('home_read_only refuses a secret in every spelling: ~/, relative, absolute with .., a trailing slash on the home', () => {
    for (const entry of ['~/.ssh', '.ssh', '.config/../.ssh', join(home, 'x', '..', '.ssh'), `${home}/.ssh/`]) {
      for (const h of [home, `${home}/`]) {
        assert.throws(() => homeReadOnly({ ...loadSandboxSettings(avfs), home_read_only: [entry] }, h, avfs), (e: unknown) => e instanceof AvfsError && e.kind === 'InvalidInput' && /never shown/.test(e.message), `${entry} with home ${h}`);
      }
    }
    assert.deepEqual(homeReadOnly(loadSandboxSettings(avfs), `${home}/`, avfs), [join(home, '.gitconfig')]);
  });
  test('no sandbox.json gives the settings an empty one does (the defaults are not parsed afresh each call)', () => {
    const dir = mkdtempSync(join(base, 'settings-'));
    const none = loadSandboxSettings(dir);
    writeFileSync(join(dir, 'sandbox.json'), '{}');
    assert.deepEqual(none, loadSandboxSettings(dir));
    none.home_read_only.push('.x');
    rmSync(join(dir, 'sandbox.json'));
    assert.deepEqual(loadSandboxSettings(dir).home_read_only, ['.gitconfig', '.config/git']);
  });
  test('a mount under a linked folder is avoided by its real path too: a PATH folder inside it, named by that path, is not a tool folder to show', () => {
    const work = join(home, 'real-work');
    mkdirSync(join(work, 'mnt', 'bin'), { recursive: true });
    symlinkSync(work, join(home, 'work'));
    const env = { PATH: `${join(work, 'mnt', 'bin')}:/usr/bin` };
    const p = planSandbox(input({ mountpoint: join(home, 'work', 'mnt'), env }));
    assert.equal(p.mountAt, join(work, 'mnt'));
    assert.deepEqual(p.pathReadOnly, []);
    // Elsewhere it is one.
    assert.deepEqual(planSandbox(input({ env })).pathReadOnly, [join(work, 'mnt', 'bin')]);
  });
});
