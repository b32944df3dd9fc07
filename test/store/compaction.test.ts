import assert from 'node:assert/strict';
import { statSync, writeFileSync } from 'node:fs';
import { after, test } from 'node:test';
import { AvfsHome } from '../../host/store/home';
import { Vfs } from '../../host/vfs/vfs';
import { tempDir } from '../helpers';

// A compaction swap's marker (host/store/lmdbSwap.ts) left by a process that died. These vaults
// are LMDB ones whatever AVFS_TEST_BACKEND says.

// (The tests of LMDB's compaction after gc, with writers in other processes, went with it: it is off,
// host/store/gc.ts; they are in git history at 3c77edb.)

test('LMDB: a compaction swap left by a process that died does not block the vault', () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  home.create('v', {}, 'lmdb').close();
  const file = home.vaultFile('v');
  // A pid that is not running: the swapper was killed mid-swap.
  writeFileSync(`${file}-swap`, '999999999');
  const started = performance.now();
  const v = home.open('v');
  try {
    assert.ok(performance.now() - started < 5000);
    new Vfs(v).writeFile('/x', Buffer.from('x'));
  } finally {
    v.close();
  }
  assert.throws(() => statSync(`${file}-swap`), /ENOENT/, 'the dead swapper’s file is removed');
});
