import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { LIVE } from '../../host/store/backend';
import { AvfsError } from '../../host/protocol/errors';
import { importTree } from '../../host/vfs/transfer';
import type { Vfs } from '../../host/vfs/vfs';
import { tempDir, tempVault } from '../helpers';

const MiB = 1024 * 1024;

function quotaError(fn: () => unknown): Record<string, unknown> {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof AvfsError, `expected AvfsError, got ${String(e)}`);
    assert.equal(e.kind, 'QuotaExceeded', e.message);
    return e.toJSON();
  }
  assert.fail('expected QuotaExceeded');
}

/** Everything a refused write could have left behind. */
function snapshot(vfs: Vfs): string {
  const tree = vfs.vault.store.dumpTree(LIVE);
  const sorted = <T>(rows: T[]) => rows.map((r) => JSON.stringify(r)).sort();
  return JSON.stringify([
    vfs.inodes.counters(),
    sorted(tree.inodes.map((i) => [i.ino, i.size, i.nlink])),
    sorted(tree.dentries),
    sorted(tree.extents.map(([ino, idx, hash]) => [ino, idx, hash.toString('hex')])),
  ]);
}

describe('quotas are checked in the write transaction on every path', () => {
  const t = tempVault();
  const { vfs } = t;
  const q = vfs.inodes.quotas;
  after(t.cleanup);

  test('max_file_size_mb: write, append, truncate, cp; error carries quota, limit, current, requested', () => {
    q.set('max_file_size_mb', 1);
    vfs.writeFile('/ok', Buffer.alloc(MiB));
    const before = snapshot(vfs);
    const e = quotaError(() => vfs.writeFile('/big', Buffer.alloc(MiB + 1)));
    assert.equal(e.quota, 'max_file_size_mb');
    assert.equal(e.limit, MiB);
    assert.equal(e.requested, MiB + 1);
    assert.equal(typeof e.current, 'number');
    quotaError(() => vfs.writeFile('/ok', Buffer.alloc(1), { append: true }));
    quotaError(() => vfs.truncate('/ok', MiB + 1));
    assert.equal(snapshot(vfs), before, 'nothing was written');
    assert.equal(vfs.exists('/big'), false, 'a refused create leaves no empty file');
    vfs.truncate('/ok', 10);
    q.clear('max_file_size_mb');
  });

  test('max_size_mb: counts the live tree; overwrite is charged the difference; freed space is reusable', () => {
    q.set('max_size_mb', 2);
    vfs.writeFile('/a', Buffer.alloc(MiB));
    vfs.writeFile('/a', Buffer.alloc(MiB)); // same size again: no growth
    const before = snapshot(vfs);
    const e = quotaError(() => vfs.writeFile('/b', Buffer.alloc(MiB + 1)));
    assert.equal(e.quota, 'max_size_mb');
    assert.equal(e.limit, 2 * MiB);
    assert.equal(snapshot(vfs), before);
    quotaError(() => vfs.copy('/a', '/a-copy')); // a copy shares chunks but is charged its logical size (1 MiB + 10 B > 2 MiB)
    vfs.rm('/a');
    vfs.writeFile('/b', Buffer.alloc(MiB + 1));
    vfs.rm('/b');
    q.clear('max_size_mb');
  });

  test('max_files: create, mkdir, mkdir -p, symlink, cp -r; hard links do not count', () => {
    const used = vfs.inodes.counters().liveInodes;
    q.set('max_files', used + 2);
    vfs.writeFile('/f1', Buffer.from('1'));
    vfs.link('/f1', '/f1-link');
    vfs.mkdir('/d1');
    const before = snapshot(vfs);
    assert.equal(quotaError(() => vfs.writeFile('/f2', Buffer.from('2'))).quota, 'max_files');
    quotaError(() => vfs.mkdir('/d2'));
    quotaError(() => vfs.symlink('f1', '/s'));
    quotaError(() => vfs.mkdir('/p/q/r', { parents: true }));
    assert.equal(snapshot(vfs), before, 'mkdir -p made no partial ancestors');
    q.clear('max_files');
  });

  test('import is all-or-nothing under a quota', () => {
    const host = tempDir();
    try {
      mkdirSync(join(host.dir, 'sub'));
      for (let i = 0; i < 10; i++) writeFileSync(join(host.dir, 'sub', `f${i}`), Buffer.alloc(200 * 1024));
      q.set('max_size_mb', 1);
      const before = snapshot(vfs);
      quotaError(() => importTree(vfs, host.dir, '/imported'));
      assert.equal(snapshot(vfs), before);
      assert.equal(vfs.exists('/imported'), false);
      q.clear('max_size_mb');
      const s = importTree(vfs, host.dir, '/imported');
      assert.equal(s.files, 10);
    } finally {
      host.cleanup();
    }
  });
});
