/**
 * The short paths of small operations (host/vfs/vfs.ts's walk, InodeStore.createFile, the joined
 * extent read): what they skip must not change what a caller sees. Real vault files, on the
 * backend the run tests (AVFS_TEST_BACKEND).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forkVault } from '../../host/store/forks';
import { Vfs } from '../../host/vfs/vfs';
import { tempVault } from '../helpers';

test('a file created in a set-group-ID directory deep in the tree takes its group; one in the root does not', (t) => {
  const v = tempVault('gid');
  t.after(v.cleanup);
  v.vfs.mkdir('/a/shared', { parents: true });
  v.vfs.setattr('/a/shared', { mode: 0o2775, gid: 4242 });
  v.vfs.writeFile('/a/shared/f.txt', Buffer.from('x'));
  assert.equal(v.vfs.stat('/a/shared/f.txt').gid, 4242);
  v.vfs.writeFile('/top.txt', Buffer.from('y'));
  assert.equal(v.vfs.stat('/top.txt').gid, v.vfs.stat('/').gid);
});

test('paths that climb back with .. end at the full attributes of where they land', (t) => {
  const v = tempVault('dots');
  t.after(v.cleanup);
  v.vfs.mkdir('/a/b', { parents: true });
  v.vfs.writeFile('/a/f.txt', Buffer.from('hello'));
  const viaDots = v.vfs.stat('/a/b/..');
  const direct = v.vfs.stat('/a');
  assert.deepEqual(viaDots, { ...direct, path: viaDots.path });
  assert.equal(v.vfs.stat('/a/b/../f.txt').size, 5);
  assert.equal(v.vfs.stat('/a/b/../..').type, 'directory');
  assert.equal(v.vfs.stat('/a/b/../..').ino, v.vfs.stat('/').ino);
});

test('creating through a symlinked directory, and under a file, behave as before', (t) => {
  const v = tempVault('links');
  t.after(v.cleanup);
  v.vfs.mkdir('/real');
  v.vfs.symlink('/real', '/link');
  v.vfs.writeFile('/link/new.txt', Buffer.from('via link'));
  assert.equal(v.vfs.readFile('/real/new.txt').toString(), 'via link');
  v.vfs.writeFile('/file', Buffer.from('f'));
  assert.throws(() => v.vfs.writeFile('/file/x', Buffer.from('x')), { kind: 'NotADirectory' });
  assert.throws(() => v.vfs.writeFile('/missing/x', Buffer.from('x')), { kind: 'NotFound' });
  assert.throws(() => v.vfs.writeFile('/real/new.txt', Buffer.from('x'), { exclusive: true }), { kind: 'AlreadyExists' });
  const journal = v.vault.journal.pathsSince(0) ?? [];
  assert.ok(journal.includes('/real/new.txt') || journal.includes('/link/new.txt'), 'the create is journaled');
});

test('reads of one-chunk files, partial reads and a fork reading its parent\'s chunks give the same bytes', (t) => {
  const v = tempVault('reads');
  t.after(v.cleanup);
  const small = Buffer.from('0123456789abcdef');
  v.vfs.writeFile('/s.txt', small);
  assert.deepEqual(v.vfs.readFile('/s.txt'), small);
  assert.deepEqual(v.vfs.read('/s.txt', 0, 4), small.subarray(0, 4));
  assert.deepEqual(v.vfs.read('/s.txt', 3, 100), small.subarray(3));
  // Two reads of the same file are two buffers: a caller that changes one does not change the other.
  const a = v.vfs.readFile('/s.txt');
  a[0] = 0x58;
  assert.deepEqual(v.vfs.readFile('/s.txt'), small);
  v.vfs.truncate('/s.txt', 5);
  assert.deepEqual(v.vfs.readFile('/s.txt'), small.subarray(0, 5));
  const big = Buffer.alloc(200_000, 7);
  v.vfs.writeFile('/big.bin', big);
  assert.deepEqual(v.vfs.readFile('/big.bin'), big);

  const fork = new Vfs(forkVault(v.home, 'reads', 'reads-fork'));
  t.after(() => fork.vault.close());
  assert.deepEqual(fork.readFile('/s.txt'), small.subarray(0, 5));
  assert.deepEqual(fork.readFile('/big.bin'), big);
  assert.equal(fork.stat('/big.bin').size, big.length);
});

test('a create in a full vault is refused by max_files, and the name stays free', (t) => {
  const v = tempVault('quota');
  t.after(v.cleanup);
  v.vfs.mkdir('/d');
  const used = v.vault.inodes.counters().liveInodes;
  v.vault.inodes.quotas.set('max_files', used);
  assert.throws(() => v.vfs.writeFile('/d/f', Buffer.from('x')), { kind: 'QuotaExceeded' });
  assert.equal(v.vfs.exists('/d/f'), false);
  assert.equal(v.vault.inodes.counters().liveInodes, used, 'nothing was counted');
});
