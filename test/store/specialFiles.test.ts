/**
 * FIFOs and Unix sockets as vault inodes (what `mkfifo` and `bind()` make in a mount), and file
 * paths deeper than PATH_MAX: the store, checkpoints, diffs and copies handle them.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { diffTrees } from '../../host/store/diff';
import { S_IFIFO, S_IFSOCK } from '../../host/store/inodes';
import { fromCliPath } from '../../host/vfs/paths';
import { errorKind, tempVault } from '../helpers';

const S_IFCHR = 0o020000;

describe('FIFOs and sockets in a vault', () => {
  const t = tempVault();
  after(t.cleanup);
  const { vfs } = t;

  test('mknod keeps type, mode and times; devices are refused; the journal says mknod', () => {
    vfs.mkdir('/run');
    vfs.mknod('/run/pipe', S_IFIFO | 0o640);
    vfs.mknod('/run/sock', S_IFSOCK | 0o755);
    assert.deepEqual(
      vfs.readdir('/run').map((e) => [e.name, e.type, e.mode, e.size]),
      [
        ['pipe', 'fifo', '0640', 0],
        ['sock', 'socket', '0755', 0],
      ],
    );
    assert.equal(vfs.stat('/run/pipe').type, 'fifo');
    assert.equal(errorKind(() => vfs.mknod('/run/pipe', S_IFIFO | 0o644)), 'AlreadyExists');
    assert.equal(errorKind(() => vfs.mknod('/run/tty', S_IFCHR | 0o644)), 'NotSupported');
    assert.equal(vfs.exists('/run/tty'), false);
    assert.equal(errorKind(() => vfs.readFile('/run/pipe')), 'InvalidInput');
    const ops = vfs.vault.db.prepare("SELECT op, path FROM journal WHERE op = 'mknod' ORDER BY seq").all();
    assert.deepEqual(ops, [
      { op: 'mknod', path: '/run/pipe' },
      { op: 'mknod', path: '/run/sock' },
    ]);
  });

  test('copy makes the same kind of entry', () => {
    vfs.copy('/run', '/run2', { recursive: true });
    assert.deepEqual(
      vfs.readdir('/run2').map((e) => [e.name, e.type, e.mode]),
      [
        ['pipe', 'fifo', '0640'],
        ['sock', 'socket', '0755'],
      ],
    );
  });

  test('checkpoints keep them, diffs name their type, restore brings them back', () => {
    const cp = vfs.vault.checkpoints.save({ name: 'with-special' });
    vfs.rm('/run/pipe');
    vfs.mknod('/run/new-pipe', S_IFIFO | 0o600);
    vfs.setattr('/run/sock', { mode: 0o700 });
    const d = diffTrees(vfs.vault.store, vfs.inodes.chunks, { kind: 'checkpoint', id: cp.id, name: cp.name }, { kind: 'live' });
    assert.deepEqual(d.added, [{ path: '/run/new-pipe', type: 'fifo', size: 0 }]);
    assert.deepEqual(d.deleted, [{ path: '/run/pipe', type: 'fifo', size: 0 }]);
    assert.deepEqual(
      d.modified.map((m) => [m.path, m.type, m.content_changed, m.mode_before, m.mode_after]),
      [['/run/sock', 'socket', false, '0755', '0700']],
    );
    vfs.vault.checkpoints.restore('with-special');
    assert.deepEqual(
      vfs.readdir('/run').map((e) => [e.name, e.type, e.mode]),
      [
        ['pipe', 'fifo', '0640'],
        ['sock', 'socket', '0755'],
      ],
    );
  });
});

describe('paths deeper than PATH_MAX', () => {
  const t = tempVault();
  after(t.cleanup);

  test('the vault holds files whose full path is over 4,096 bytes; the CLI refuses such an argument', () => {
    const deep = '/sub/' + Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(250, 'd')).join('/');
    assert.ok(Buffer.byteLength(deep) > 4096);
    t.vfs.mkdir(deep, { parents: true });
    t.vfs.writeFile(deep + '/x', Buffer.from('deep'));
    assert.equal(t.vfs.readFile(deep + '/x').toString(), 'deep');
    t.vfs.rename(deep + '/x', deep + '/y');
    assert.deepEqual(t.vfs.readdirNames(deep), ['y']);
    assert.equal(errorKind(() => fromCliPath(deep + '/y')), 'NameTooLong');
    assert.equal(errorKind(() => t.vfs.writeFile('/' + 'n'.repeat(256), Buffer.from('x'))), 'NameTooLong');
  });
});
