import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { LIVE } from '../../host/store/backend';
import { AvfsHome } from '../../host/store/home';
import { CHUNK_SIZE } from '../../host/store/schema';
import { Vfs } from '../../host/vfs/vfs';
import { tempVault, errorKind as kindOf } from '../helpers';


/** The live counters must always equal what a full scan finds. */
function assertCountersConsistent(vfs: Vfs): void {
  const inodes = vfs.vault.store.dumpTree(LIVE).inodes.filter((i) => i.ino !== 1);
  const scan = { n: inodes.length, bytes: inodes.reduce((s, i) => s + ((i.mode & 0o170000) === 0o100000 ? i.size : 0), 0) };
  const c = vfs.inodes.counters();
  assert.equal(c.liveInodes, scan.n, 'live inode counter');
  assert.equal(c.liveBytes, scan.bytes, 'live byte counter');
}

describe('file semantics on a real vault file', () => {
  const t = tempVault();
  const { vfs } = t;
  after(t.cleanup);

  test('create, overwrite, append, read back', () => {
    vfs.writeFile('/a.txt', Buffer.from('hello'));
    assert.equal(vfs.readFile('/a.txt').toString(), 'hello');
    vfs.writeFile('/a.txt', Buffer.from('bye'));
    assert.equal(vfs.readFile('/a.txt').toString(), 'bye');
    vfs.writeFile('/a.txt', Buffer.from(' now'), { append: true });
    assert.equal(vfs.readFile('/a.txt').toString(), 'bye now');
    assert.equal(vfs.stat('/a.txt').size, 7);
    assert.equal(vfs.stat('/a.txt').mode, '0644');
    assertCountersConsistent(vfs);
  });

  test('binary content spanning many chunks round-trips exactly', () => {
    const data = randomBytes(CHUNK_SIZE * 3 + 12345);
    vfs.writeFile('/bin.dat', data);
    assert.deepEqual(vfs.readFile('/bin.dat'), data);
    assert.deepEqual(vfs.read('/bin.dat', CHUNK_SIZE - 10, 20), data.subarray(CHUNK_SIZE - 10, CHUNK_SIZE + 10));
    assert.deepEqual(vfs.read('/bin.dat', data.length - 5, 100), data.subarray(data.length - 5));
    assert.equal(vfs.read('/bin.dat', data.length + 10, 10).length, 0);
  });

  test('truncate down then up reads zeros, never old bytes', () => {
    const data = Buffer.alloc(CHUNK_SIZE + 100, 0x61);
    vfs.writeFile('/t.txt', data);
    vfs.truncate('/t.txt', 10);
    assert.equal(vfs.readFile('/t.txt').toString(), 'a'.repeat(10));
    vfs.truncate('/t.txt', CHUNK_SIZE + 50);
    const back = vfs.readFile('/t.txt');
    assert.equal(back.length, CHUNK_SIZE + 50);
    assert.equal(back.subarray(0, 10).toString(), 'a'.repeat(10));
    assert.ok(back.subarray(10).every((b) => b === 0), 'bytes past the old end are zero');
    vfs.truncate('/t.txt', 0);
    assert.equal(vfs.readFile('/t.txt').length, 0);
    assertCountersConsistent(vfs);
  });

  test('writes at offsets match a byte-array model (holes, overlaps, chunk edges)', () => {
    const ino = vfs.resolve(vfs.writeFile('/model.bin', Buffer.alloc(0)) && '/model.bin').ino;
    let model = Buffer.alloc(0);
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let i = 0; i < 200; i++) {
      const op = rnd(10);
      if (op < 7) {
        const off = rnd(CHUNK_SIZE * 4);
        const len = 1 + rnd(CHUNK_SIZE + 300);
        const data = Buffer.alloc(len, rnd(256));
        vfs.inodes.write(ino, off, data, '/model.bin');
        if (off + len > model.length) model = Buffer.concat([model, Buffer.alloc(off + len - model.length)]);
        data.copy(model, off);
      } else {
        const size = rnd(CHUNK_SIZE * 4);
        vfs.inodes.truncate(ino, size, '/model.bin');
        model = size <= model.length ? model.subarray(0, size) : Buffer.concat([model, Buffer.alloc(size - model.length)]);
        model = Buffer.from(model);
      }
      assert.deepEqual(vfs.readFile('/model.bin'), model, `after step ${i}`);
    }
    assertCountersConsistent(vfs);
  });

  test('mkdir, mkdir -p, nested paths, errors for the wrong kind', () => {
    vfs.mkdir('/d');
    assert.equal(kindOf(() => vfs.mkdir('/d')), 'AlreadyExists');
    vfs.mkdir('/d/e/f', { parents: true });
    vfs.mkdir('/d/e/f', { parents: true });
    assert.equal(vfs.stat('/d/e/f').type, 'directory');
    assert.equal(vfs.stat('/d').nlink, 3, 'a directory with one subdirectory has nlink 3');
    assert.equal(kindOf(() => vfs.mkdir('/x/y')), 'NotFound');
    assert.equal(kindOf(() => vfs.writeFile('/a.txt/z', Buffer.from('x'))), 'NotADirectory');
    assert.equal(kindOf(() => vfs.readFile('/d')), 'IsADirectory');
    assert.equal(kindOf(() => vfs.readdir('/a.txt')), 'NotADirectory');
    assert.equal(kindOf(() => vfs.readFile('/missing')), 'NotFound');
  });

  test('rename over an existing file replaces it atomically; directory rules hold', () => {
    vfs.writeFile('/r1', Buffer.from('one'));
    vfs.writeFile('/r2', Buffer.from('two'));
    const ino = vfs.stat('/r1').ino;
    vfs.rename('/r1', '/r2');
    assert.equal(vfs.readFile('/r2').toString(), 'one');
    assert.equal(vfs.stat('/r2').ino, ino, 'the moved inode keeps its number');
    assert.equal(vfs.exists('/r1'), false);
    vfs.mkdir('/rd1');
    vfs.mkdir('/rd2');
    vfs.writeFile('/rd2/keep', Buffer.from('k'));
    assert.equal(kindOf(() => vfs.rename('/rd1', '/rd2')), 'NotEmpty');
    assert.equal(kindOf(() => vfs.rename('/r2', '/rd1')), 'IsADirectory');
    assert.equal(kindOf(() => vfs.rename('/rd1', '/rd1/inner')), 'InvalidInput');
    vfs.rename('/rd2', '/rd1');
    assert.equal(vfs.readFile('/rd1/keep').toString(), 'k');
    assertCountersConsistent(vfs);
  });

  test('hard links share an inode and content; unlink keeps the other name', () => {
    vfs.writeFile('/h1', Buffer.from('shared'));
    vfs.link('/h1', '/h2');
    const a = vfs.stat('/h1');
    const b = vfs.stat('/h2');
    assert.equal(a.ino, b.ino);
    assert.equal(b.nlink, 2);
    vfs.writeFile('/h2', Buffer.from('changed'));
    assert.equal(vfs.readFile('/h1').toString(), 'changed');
    vfs.rm('/h1');
    assert.equal(vfs.stat('/h2').nlink, 1);
    assert.equal(vfs.readFile('/h2').toString(), 'changed');
    assert.equal(kindOf(() => vfs.link('/d', '/dlink')), 'PermissionDenied');
    assertCountersConsistent(vfs);
  });

  test('symlinks: relative, absolute (vault-rooted), dangling, loops', () => {
    vfs.mkdir('/s/sub', { parents: true });
    vfs.writeFile('/s/target.txt', Buffer.from('T'));
    vfs.symlink('target.txt', '/s/rel');
    vfs.symlink('/s/target.txt', '/s/abs');
    vfs.symlink('../target.txt', '/s/sub/up');
    vfs.symlink('sub', '/s/dirlink');
    assert.equal(vfs.readFile('/s/rel').toString(), 'T');
    assert.equal(vfs.readFile('/s/abs').toString(), 'T');
    assert.equal(vfs.readFile('/s/sub/up').toString(), 'T');
    assert.equal(vfs.readFile('/s/dirlink/up').toString(), 'T');
    assert.equal(vfs.readlink('/s/rel'), 'target.txt');
    assert.equal(vfs.stat('/s/rel', false).type, 'symlink');
    assert.equal(vfs.stat('/s/rel', true).type, 'file');
    vfs.symlink('nowhere', '/s/dangling');
    assert.equal(kindOf(() => vfs.readFile('/s/dangling')), 'NotFound');
    vfs.writeFile('/s/dangling', Buffer.from('made'));
    assert.equal(vfs.readFile('/s/nowhere').toString(), 'made', 'writing through a dangling link creates its target');
    vfs.symlink('loop2', '/s/loop1');
    vfs.symlink('loop1', '/s/loop2');
    assert.equal(kindOf(() => vfs.readFile('/s/loop1')), 'SymlinkLoop');
    vfs.rm('/s/rel');
    assert.equal(vfs.readFile('/s/target.txt').toString(), 'T', 'removing a link leaves its target');
  });

  test('rm: files, -r trees, -f on missing, refusing the root and non-empty dirs', () => {
    vfs.mkdir('/tree/a/b', { parents: true });
    for (let i = 0; i < 20; i++) vfs.writeFile(`/tree/a/b/f${i}`, Buffer.from(String(i)));
    assert.equal(kindOf(() => vfs.rm('/tree')), 'IsADirectory');
    assert.equal(kindOf(() => vfs.rm('/tree', { dirOnly: true })), 'NotEmpty');
    const before = vfs.inodes.counters();
    assert.equal(vfs.rm('/tree', { recursive: true }).removed, 23);
    assert.equal(vfs.inodes.counters().liveInodes, before.liveInodes - 23);
    assert.equal(vfs.exists('/tree'), false);
    assert.equal(vfs.rm('/tree', { force: true }).removed, 0);
    assert.equal(kindOf(() => vfs.rm('/tree')), 'NotFound');
    assert.equal(kindOf(() => vfs.rm('/', { recursive: true })), 'InvalidPath');
    assertCountersConsistent(vfs);
  });

  test('cp shares chunks instead of copying bytes; cp -r copies trees', () => {
    const big = randomBytes(CHUNK_SIZE * 4);
    vfs.writeFile('/big', big);
    const chunksBefore = vfs.vault.store.chunkStats().count;
    vfs.copy('/big', '/big2');
    const chunksAfter = vfs.vault.store.chunkStats().count;
    assert.equal(chunksAfter, chunksBefore, 'no new chunks for a copy');
    assert.deepEqual(vfs.readFile('/big2'), big);
    vfs.writeFile('/big2', Buffer.from('x'), { append: true });
    assert.deepEqual(vfs.readFile('/big'), big, 'the source is untouched by a write to the copy');
    vfs.mkdir('/cpsrc/in', { parents: true });
    vfs.writeFile('/cpsrc/in/f', Buffer.from('f'));
    vfs.symlink('in/f', '/cpsrc/l');
    vfs.copy('/cpsrc', '/cpdst', { recursive: true });
    assert.equal(vfs.readFile('/cpdst/in/f').toString(), 'f');
    assert.equal(vfs.readlink('/cpdst/l'), 'in/f');
    assert.equal(kindOf(() => vfs.copy('/cpsrc', '/cpx')), 'IsADirectory');
    assert.equal(kindOf(() => vfs.copy('/cpsrc', '/cpsrc/in', { recursive: true })), 'InvalidInput');
    assertCountersConsistent(vfs);
  });

  test('times are nanoseconds, mtime moves on write, utimes sets exact values', () => {
    vfs.writeFile('/time', Buffer.from('1'));
    const m1 = BigInt(vfs.stat('/time').mtime_ns);
    vfs.writeFile('/time', Buffer.from('2'));
    const m2 = BigInt(vfs.stat('/time').mtime_ns);
    assert.ok(m2 > m1, 'mtime advances');
    const exact = 1_600_000_000_123_456_789n;
    vfs.setattr('/time', { mtime: exact, mode: 0o600 });
    const st = vfs.stat('/time');
    assert.equal(st.mtime_ns, exact.toString());
    assert.equal(st.mode, '0600');
  });

  test('bad paths are typed errors and write nothing', () => {
    const before = vfs.inodes.counters();
    assert.equal(kindOf(() => vfs.writeFile('relative', Buffer.from('x'))), 'InvalidPath');
    assert.equal(kindOf(() => vfs.writeFile('/../escape', Buffer.from('x'))), 'InvalidPath');
    assert.equal(kindOf(() => vfs.writeFile('/a/../../escape', Buffer.from('x'))), 'InvalidPath');
    assert.equal(kindOf(() => vfs.writeFile('/nul\0byte', Buffer.from('x'))), 'InvalidPath');
    assert.equal(kindOf(() => vfs.writeFile('/' + 'n'.repeat(256), Buffer.from('x'))), 'NameTooLong');
    assert.equal(kindOf(() => vfs.symlink('', '/emptylink')), 'InvalidInput');
    assert.deepEqual(vfs.inodes.counters(), before);
  });

  test('a read-only vault refuses every mutation with ReadOnly', () => {
    const ro = new Vfs(new AvfsHome(t.dir).open('test', { readonly: true }));
    try {
      assert.equal(kindOf(() => ro.writeFile('/a.txt', Buffer.from('x'))), 'ReadOnly');
      assert.equal(kindOf(() => ro.mkdir('/new')), 'ReadOnly');
      assert.equal(kindOf(() => ro.rm('/a.txt')), 'ReadOnly');
      assert.equal(kindOf(() => ro.rename('/a.txt', '/b.txt')), 'ReadOnly');
      assert.equal(ro.readFile('/a.txt').toString(), 'bye now');
    } finally {
      ro.vault.close();
    }
  });

  test('every mutation lands in the journal with its surface', () => {
    const rows = vfs.vault.journal.after(0).map(({ op, path, surface }) => ({ op, path, surface }));
    const ops = new Set(rows.map((r) => r.op));
    for (const op of ['create', 'write', 'append', 'truncate', 'mkdir', 'rename', 'link', 'symlink', 'unlink', 'rmdir', 'copy', 'setattr']) {
      assert.ok(ops.has(op), `journal has ${op}`);
    }
    assert.ok(rows.every((r) => r.surface === 'cli'));
    assert.equal(vfs.vault.store.check(), 'ok');
  });
});
