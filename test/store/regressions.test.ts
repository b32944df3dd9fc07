/** Bugs found in review, each with the reproduction that showed it. */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { descendantRefs, forkVault } from '../../host/store/forks';
import { collectGarbage } from '../../host/store/gc';
import { AvfsHome } from '../../host/store/home';
import { exportTree, importTree } from '../../host/vfs/transfer';
import { Vfs } from '../../host/vfs/vfs';
import { tempDir, tempVault, errorKind as kindOf } from '../helpers';


describe('path API', () => {
  const t = tempVault();
  const { vfs } = t;
  after(t.cleanup);

  test('mv through a symlink cannot move a directory into itself', () => {
    vfs.mkdir('/d');
    vfs.writeFile('/d/important', Buffer.from('x'));
    vfs.symlink('/d', '/link');
    assert.equal(kindOf(() => vfs.rename('/d', '/link/sub')), 'InvalidInput');
    assert.equal(vfs.readFile('/d/important').toString(), 'x');
    assert.equal(kindOf(() => vfs.copy('/d', '/link/copy', { recursive: true })), 'InvalidInput');
  });

  test('cp of a file onto itself or onto a hard link of itself is refused, content intact', () => {
    vfs.writeFile('/a', Buffer.from('hello world'));
    vfs.link('/a', '/b');
    assert.equal(kindOf(() => vfs.copy('/a', '/a')), 'InvalidInput');
    assert.equal(kindOf(() => vfs.copy('/a', '/b')), 'InvalidInput');
    assert.equal(vfs.readFile('/a').toString(), 'hello world');
  });

  test('writing through a dangling link reached via a symlinked directory creates the target next to the link', () => {
    vfs.mkdir('/real/deep', { parents: true });
    vfs.symlink('../x', '/real/deep/dang');
    vfs.symlink('/real/deep', '/dlink');
    vfs.writeFile('/dlink/dang', Buffer.from('hi'));
    assert.equal(vfs.readFile('/real/x').toString(), 'hi');
    assert.equal(vfs.exists('/x'), false);
  });
});

describe('import and export', () => {
  const t = tempDir();
  after(t.cleanup);

  test('a link that climbs out through another link is refused on export and on import', () => {
    const v = new AvfsHome(join(t.dir, 'h1')).create('e');
    const vfs = new Vfs(v);
    try {
      vfs.mkdir('/x');
      vfs.symlink('.', '/x/s');
      vfs.symlink('s/..', '/x/esc');
      assert.equal(kindOf(() => exportTree(vfs, '/x', join(t.dir, 'out1'))), 'UnsafeSymlink');
      assert.equal(fs.existsSync(join(t.dir, 'out1')), false);
      vfs.rm('/x/esc');
      vfs.mkdir('/x/a/b', { parents: true });
      vfs.symlink('../..', '/x/a/b/up');
      vfs.symlink('up/../../../etc', '/x/a/b/far');
      assert.equal(kindOf(() => exportTree(vfs, '/x', join(t.dir, 'out2'))), 'UnsafeSymlink');
    } finally {
      v.close();
    }
    const host = join(t.dir, 'hosttree');
    fs.mkdirSync(host);
    fs.symlinkSync('.', join(host, 's'));
    fs.symlinkSync('s/..', join(host, 'esc'));
    const v2 = new AvfsHome(join(t.dir, 'h2')).create('i');
    try {
      assert.equal(kindOf(() => importTree(new Vfs(v2), host, '/in')), 'UnsafeSymlink');
    } finally {
      v2.close();
    }
  });

  test('export never writes through a symlink already in the host directory', () => {
    const v = new AvfsHome(join(t.dir, 'h3')).create('w');
    const vfs = new Vfs(v);
    try {
      vfs.mkdir('/tree/sub', { parents: true });
      vfs.writeFile('/tree/sub/pwned', Buffer.from('x'));
      const out = join(t.dir, 'out3');
      const victim = join(t.dir, 'victim');
      fs.mkdirSync(out);
      fs.mkdirSync(victim);
      fs.symlinkSync(victim, join(out, 'sub'));
      assert.equal(kindOf(() => exportTree(vfs, '/tree', out, { force: true })), 'UnsafeSymlink');
      assert.deepEqual(fs.readdirSync(victim), []);
      vfs.writeFile('/one', Buffer.from('1'));
      fs.symlinkSync(join(victim, 'dangling'), join(t.dir, 'one-link'));
      assert.equal(kindOf(() => exportTree(vfs, '/one', join(t.dir, 'one-link'))), 'AlreadyExists');
      assert.equal(fs.existsSync(join(victim, 'dangling')), false);
    } finally {
      v.close();
    }
  });
});

describe('checkpoints and forks', () => {
  const t = tempDir();
  after(t.cleanup);

  test('a file unlinked but still open (nlink 0) is not saved into a checkpoint', () => {
    const v = new AvfsHome(join(t.dir, 'c')).create('c');
    const vfs = new Vfs(v);
    try {
      vfs.writeFile('/open', Buffer.alloc(100_000, 1));
      const p = vfs.parentOf('/open');
      v.inodes.unlink(p.parent, p.name, { keepOrphan: true });
      const cp = v.checkpoints.save({ name: 'c1' });
      assert.equal(cp.file_count, 0);
      assert.equal(cp.total_bytes, 0);
      v.checkpoints.restore('c1');
      assert.deepEqual(v.inodes.counters(), { liveBytes: 0, liveInodes: 0 });
      assert.equal(v.store.orphans().length, 0);
    } finally {
      v.close();
    }
  });

  test('gc on a parent fails closed when a fork cannot be read, instead of freeing its chunks', () => {
    const home = new AvfsHome(join(t.dir, 'f'));
    const p = new Vfs(home.create('p'));
    p.writeFile('/blob', Buffer.alloc(200_000, 7));
    forkVault(home, 'p', 'f').close();
    p.rm('/blob');
    fs.writeFileSync(home.vaultFile('f'), 'not a database any more');
    const extraRefs = () => descendantRefs(home, 'p');
    assert.equal(kindOf(() => collectGarbage(p.vault.store, { extraRefs })), 'StorageError');
    assert.ok(p.vault.store.chunkStats().count > 0, 'no chunk was freed');
    p.vault.close();
  });
});

describe('read-only and writable handles of one vault in one process', () => {
  const t = tempDir();
  after(t.cleanup);

  // The vault host keeps a read-only handle of each vault it watches for events, and opens the
  // vault writable for a command: on LMDB the second open shared the first one's read-only
  // environment and could begin no write ("No transaction to renew").
  test('a writable open after a read-only one writes, and the read-only handle reads what it wrote', () => {
    const home = new AvfsHome(t.dir);
    home.create('v').close();
    const ro = new Vfs(home.open('v', { readonly: true }));
    try {
      assert.equal(ro.exists('/a.txt'), false);
      const rw = new Vfs(home.open('v'));
      try {
        rw.writeFile('/a.txt', Buffer.from('written'));
        assert.equal(rw.readFile('/a.txt').toString(), 'written');
      } finally {
        rw.vault.close();
      }
      assert.equal(ro.readFile('/a.txt').toString(), 'written');
      assert.equal(kindOf(() => ro.writeFile('/b.txt', Buffer.from('x'))), 'ReadOnly');
    } finally {
      ro.vault.close();
    }
    const again = new Vfs(home.open('v'));
    try {
      again.writeFile('/b.txt', Buffer.from('again'));
      assert.deepEqual(again.readdir('/').map((e) => e.name).sort(), ['a.txt', 'b.txt']);
    } finally {
      again.vault.close();
    }
  });

  test('a read-only open inside a write of the same vault reads its last commit (and does not wait on the write)', () => {
    const home = new AvfsHome(t.dir);
    const rw = new Vfs(home.open('v'));
    try {
      rw.writeFile('/c.txt', Buffer.from('committed'));
      rw.vault.store.write(() => {
        rw.writeFile('/c.txt', Buffer.from('in the write'));
        const ro = new Vfs(home.open('v', { readonly: true }));
        try {
          assert.equal(ro.readFile('/c.txt').toString(), 'committed');
        } finally {
          ro.vault.close();
        }
      });
      assert.equal(rw.readFile('/c.txt').toString(), 'in the write');
    } finally {
      rw.vault.close();
    }
  });
});
