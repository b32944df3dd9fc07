import assert from 'node:assert/strict';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { tempDir } from '../helpers';
import { sh } from './helpers';

// The FUSE binding is loaded by the first mount, not when a command starts: a binding that cannot
// load (libfuse.so.2 missing, a damaged file) makes mounts fail with a typed MountError and leaves
// every other command working.
describe('a FUSE binding that does not load', () => {
  const root = join(__dirname, '..', '..');
  // Beside the repository's node_modules, so the copied bundles find better-sqlite3 and the parser as dist/ does.
  const copy = mkdtempSync(join(root, '.tmp-binding-'));
  const t = tempDir('avfs-binding-load-');
  const home = join(t.dir, 'home');
  for (const f of readdirSync(join(root, 'dist'))) if (f.endsWith('.js')) cpSync(join(root, 'dist', f), join(copy, f));
  writeFileSync(join(copy, 'avfs_fuse.node'), 'not a shared object\n');
  const avfs = (...args: string[]) => sh(process.execPath, [join(copy, 'avfs.js'), '--json', ...args], { env: { AVFS_HOME: home } });
  after(() => {
    rmSync(copy, { recursive: true, force: true });
    t.cleanup();
  });

  test('mount and proxy exec fail with MountError naming the binding; files, checkpoints and policy still work', async () => {
    assert.equal((await avfs('vault', 'create', 'v')).code, 0);
    mkdirSync(join(t.dir, 'mnt'));
    const m = await avfs('mount', 'v', join(t.dir, 'mnt'));
    assert.equal(m.code, ERROR_TABLE.MountError.exit, m.stderr + m.stdout);
    const err = JSON.parse(m.stdout || m.stderr);
    assert.equal(err.error, 'MountError');
    assert.equal(err.reason, 'binding_unloadable');
    assert.match(err.message, /avfs_fuse\.node\) does not load: .*libfuse2/);

    const run = await avfs('proxy', 'exec', '--vault', 'v', '--', 'true');
    const env = JSON.parse(run.stdout);
    assert.equal(env.success, false);
    assert.equal(env.result.state, 'failed');
    assert.match(JSON.stringify(env), /does not load/);

    assert.equal((await avfs('write', '/a.txt', 'still here')).code, 0);
    assert.equal((await avfs('checkpoint', 'save', 'c1')).code, 0);
    const cat = await avfs('cat', '/a.txt');
    assert.equal(JSON.parse(cat.stdout).content, 'still here');
    assert.equal((await avfs('policy', 'check', '--shell', 'ls')).code, 0);
  });
});
