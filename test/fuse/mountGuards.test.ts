import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { fuseMissing, mountFixture } from './helpers';

test('restoring a checkpoint or deleting a vault under a live mount is refused', { skip: fuseMissing }, async () => {
  const m = await mountFixture({ vault: 'guarded' });
  after(m.cleanup);
  assert.equal((await m.cli(['--vault', 'guarded', 'checkpoint', 'save', 'c1'])).code, 0);
  const restore = await m.cli(['--vault', 'guarded', 'checkpoint', 'restore', 'c1']);
  assert.deepEqual([restore.json.error, restore.code], ['VaultInUse', ERROR_TABLE.VaultInUse.exit]);
  assert.deepEqual(restore.json.mountpoints, [m.mnt]);
  const del = await m.cli(['vault', 'delete', 'guarded', '--yes']);
  assert.equal(del.json.error, 'VaultInUse');
  assert.equal((await m.cli(['unmount', m.mnt])).code, 0);
  assert.equal((await m.cli(['--vault', 'guarded', 'checkpoint', 'restore', 'c1'])).code, 0, 'after unmount the restore runs');
  assert.equal((await m.cli(['vault', 'delete', 'guarded', '--yes'])).code, 0);
});
