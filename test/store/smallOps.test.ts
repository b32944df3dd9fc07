/**
 * The short paths of small operations (host/vfs/vfs.ts's walk, InodeStore.createFile, the joined
 * extent read): what they skip must not change what a caller sees. Real vault files, on the
 * backend the run tests (AVFS_TEST_BACKEND).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { convertVault } from '../../host/store/convert';
import { diffTrees } from '../../host/store/diff';
import { forkVault } from '../../host/store/forks';
import { collectGarbage } from '../../host/store/gc';
import { AvfsHome } from '../../host/store/home';
import { InodeStore } from '../../host/store/inodes';
import { CHUNK_SIZE, INLINE_MAX, INLINE_PIECES_SCHEMA, MIGRATIONS } from '../../host/store/schema';
import { SqliteMeta } from '../../host/store/sqlite';
import { FileIo } from '../../host/vfs/handles';
import { Vfs } from '../../host/vfs/vfs';
import { tempDir, tempVault } from '../helpers';

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

test('a whole-file read that joins the first piece to its lookup reads as a read of the entry and its pieces apart', (t) => {
  const v = tempVault('joined');
  t.after(v.cleanup);
  const apart = (path: string): Buffer => {
    const r = v.vfs.resolve(path);
    return v.vault.store.read(() => v.vault.inodes.readAll(r.ino, r.attr.size));
  };
  v.vfs.mkdir('/d/e', { parents: true });
  v.vfs.writeFile('/d/empty', Buffer.alloc(0));
  v.vfs.writeFile('/d/inline', Buffer.from('inline bytes'));
  v.vfs.writeFile('/d/chunk', randomBytes(INLINE_MAX + 1)); // one piece, in the chunk table
  v.vfs.writeFile('/d/two', randomBytes(CHUNK_SIZE + 100)); // piece 0 full, piece 1 short
  // A hole where piece 0 would be: only piece 1 is written.
  const sparse = v.vfs.writeFile('/d/sparse', Buffer.alloc(0));
  v.vault.inodes.write(sparse.ino, CHUNK_SIZE + 5, Buffer.from('tail'), '/d/sparse');
  v.vfs.symlink('/d/inline', '/d/link');
  v.vfs.symlink('e/../inline', '/d/rel');
  for (const p of ['/d/empty', '/d/inline', '/d/chunk', '/d/two', '/d/sparse', '/d/link', '/d/rel', '/d/e/../inline', '/d//inline']) {
    assert.deepEqual(v.vfs.readFile(p), apart(p), p);
  }
  const sparseBytes = v.vfs.readFile('/d/sparse');
  assert.equal(sparseBytes.length, CHUNK_SIZE + 9);
  assert.ok(sparseBytes.subarray(0, CHUNK_SIZE + 5).every((b) => b === 0));
  assert.equal(sparseBytes.subarray(CHUNK_SIZE + 5).toString(), 'tail');
  assert.throws(() => v.vfs.readFile('/d'), { kind: 'IsADirectory' });
  assert.throws(() => v.vfs.readFile('/d/e/..'), { kind: 'IsADirectory' });
  assert.throws(() => v.vfs.readFile('/'), { kind: 'IsADirectory' });
  assert.throws(() => v.vfs.readFile('/d/missing'), { kind: 'NotFound', message: /\/d\/missing/ });
  assert.throws(() => v.vfs.readFile('/d/inline/x'), { kind: 'NotADirectory' });
  v.vfs.symlink('/d/nowhere', '/d/dangling');
  assert.throws(() => v.vfs.readFile('/d/dangling'), { kind: 'NotFound' });
  v.vfs.mknod('/d/fifo', 0o010644);
  assert.throws(() => v.vfs.readFile('/d/fifo'), { kind: 'InvalidInput' });
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

// ---- small content kept in its extent row (SQLite, schema 6: INLINE_MAX) ----

/** On SQLite: how many of inode `ino`'s extent rows hold their bytes themselves, and how many chunks the file holds. */
function layout(v: ReturnType<typeof tempVault>, path: string): { inline: number; extents: number } | undefined {
  if (v.vault.backend !== 'sqlite') return undefined;
  const ino = v.vfs.stat(path).ino;
  return v.vault.db.prepare('SELECT COUNT(data) AS inline, COUNT(*) AS extents FROM extents WHERE ino = ?').get(ino) as { inline: number; extents: number };
}

test('a small file is one extent row holding its bytes; growing past INLINE_MAX moves it to chunks, truncating back inlines it again', (t) => {
  const v = tempVault('inline');
  t.after(v.cleanup);
  const small = randomBytes(1024);
  v.vfs.writeFile('/s.bin', small);
  if (v.vault.backend === 'sqlite') {
    assert.deepEqual(layout(v, '/s.bin'), { inline: 1, extents: 1 });
    assert.equal(v.vault.store.chunkStats().count, 1, 'the inline piece is counted as stored content');
    assert.equal((v.vault.db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number }).n, 0, 'and the chunk table holds nothing');
  }
  assert.deepEqual(v.vfs.readFile('/s.bin'), small);
  // Writes at offsets inside the inline piece, and past its end.
  const io = new FileIo(v.vfs);
  const ino = io.open('/s.bin', true).ino;
  io.writeAt(ino, 100, Buffer.from('XYZ'), '/s.bin');
  const grown = Buffer.concat([small, Buffer.alloc(INLINE_MAX)]);
  grown.write('XYZ', 100);
  grown.write('tail', INLINE_MAX + 1000);
  io.writeAt(ino, INLINE_MAX + 1000, Buffer.from('tail'), '/s.bin');
  const expect = grown.subarray(0, INLINE_MAX + 1004);
  assert.deepEqual(v.vfs.readFile('/s.bin'), expect);
  assert.deepEqual(v.vfs.read('/s.bin', 98, 8), expect.subarray(98, 106));
  const into = Buffer.alloc(8);
  assert.equal(io.readInto(ino, 98, 8, into), 8);
  assert.deepEqual(into, expect.subarray(98, 106), 'a mount\'s read at an offset');
  assert.deepEqual(layout(v, '/s.bin') ?? { inline: 0, extents: 1 }, { inline: 0, extents: 1 }, 'past INLINE_MAX the piece is a chunk');
  v.vfs.truncate('/s.bin', 10);
  assert.deepEqual(v.vfs.readFile('/s.bin'), expect.subarray(0, 10));
  if (v.vault.backend === 'sqlite') assert.deepEqual(layout(v, '/s.bin'), { inline: 1, extents: 1 });
  v.vfs.truncate('/s.bin', 20);
  assert.deepEqual(v.vfs.readFile('/s.bin'), Buffer.concat([expect.subarray(0, 10), Buffer.alloc(10)]), 'growing again reads zeros');
  // A file across chunks: its short last piece is inline, the full ones are chunks.
  const two = randomBytes(CHUNK_SIZE + 500);
  v.vfs.writeFile('/two.bin', two);
  assert.deepEqual(v.vfs.readFile('/two.bin'), two);
  assert.deepEqual(v.vfs.read('/two.bin', CHUNK_SIZE - 5, 10), two.subarray(CHUNK_SIZE - 5, CHUNK_SIZE + 5));
  if (v.vault.backend === 'sqlite') assert.deepEqual(layout(v, '/two.bin'), { inline: 1, extents: 2 });
  // Hard links share the row; a copy gets its own.
  v.vfs.link('/two.bin', '/hard.bin');
  v.vfs.writeFile('/hard.bin', Buffer.from('through the link'));
  assert.equal(v.vfs.readFile('/two.bin').toString(), 'through the link');
  v.vfs.copy('/two.bin', '/copy.bin');
  v.vfs.writeFile('/two.bin', Buffer.from('changed'));
  assert.equal(v.vfs.readFile('/copy.bin').toString(), 'through the link');
  assert.equal(v.vfs.readFile('/hard.bin').toString(), 'changed');
  assert.equal(v.vault.store.check(), 'ok');
});

test('checkpoints, restore, diff, alone sizes and gc see inline content as they see chunks', (t) => {
  const v = tempVault('inline-cp');
  t.after(v.cleanup);
  const a = randomBytes(700);
  v.vfs.writeFile('/a.txt', Buffer.from('first version\n'));
  v.vfs.writeFile('/b.bin', a);
  v.vault.checkpoints.save({ name: 'one' });
  // A checkpoint tree names chunks only: the live pieces moved into the chunk table when it was saved.
  if (v.vault.backend === 'sqlite') assert.deepEqual(layout(v, '/b.bin'), { inline: 0, extents: 1 });
  v.vfs.writeFile('/a.txt', Buffer.from('second version\n'));
  v.vfs.rm('/b.bin');
  v.vfs.writeFile('/c.txt', Buffer.from('new after one'));
  if (v.vault.backend === 'sqlite') assert.deepEqual(layout(v, '/a.txt'), { inline: 1, extents: 1 });
  const one = v.vault.checkpoints.list().find((c) => c.name === 'one')!;
  const summary = diffTrees(v.vault.store, v.vault.inodes.chunks, { kind: 'checkpoint', id: one.id, name: 'one' }, { kind: 'live' }, { patch: true });
  assert.deepEqual(summary.modified.map((m) => m.path), ['/a.txt']);
  assert.deepEqual(summary.deleted.map((m) => m.path), ['/b.bin']);
  assert.deepEqual(summary.added.map((m) => m.path), ['/c.txt']);
  assert.match(summary.patch ?? '', /-first version\n\+second version/, 'the patch reads the live inline bytes');
  // What checkpoint one holds alone: the old a.txt and b.bin (the live tree no longer has them).
  const alone = v.vault.checkpoints.aloneBytes();
  assert.equal(alone?.get(one.id), 'first version\n'.length + a.length);
  v.vault.checkpoints.restore('one');
  assert.equal(v.vfs.readFile('/a.txt').toString(), 'first version\n');
  assert.deepEqual(v.vfs.readFile('/b.bin'), a);
  assert.equal(v.vfs.exists('/c.txt'), false);
  // Restore kept an undo checkpoint with the inline files of before: going back there brings them back.
  const undo = v.vault.checkpoints.list().find((c) => c.name.startsWith('before-restore'))!;
  v.vault.checkpoints.restore(undo.name);
  assert.equal(v.vfs.readFile('/c.txt').toString(), 'new after one');
  assert.equal(v.vfs.readFile('/a.txt').toString(), 'second version\n');
  // Deleting every checkpoint and collecting garbage frees the old versions and keeps the live bytes.
  for (const c of v.vault.checkpoints.list()) v.vault.checkpoints.delete(c.name);
  const gc = collectGarbage(v.vault.store);
  assert.ok(gc.bytes_freed >= a.length, `gc freed ${gc.bytes_freed}`);
  assert.equal(v.vfs.readFile('/a.txt').toString(), 'second version\n');
  assert.equal(v.vfs.readFile('/c.txt').toString(), 'new after one');
  assert.equal(v.vault.store.check(), 'ok');
});

test('inline bytes changed on disk are refused as a damaged chunk is', (t) => {
  const v = tempVault('inline-damage', 'sqlite');
  t.after(v.cleanup);
  v.vfs.writeFile('/x.txt', Buffer.from('the original bytes'));
  v.vfs.writeFile('/y.txt', Buffer.from('another file'));
  const ino = v.vfs.stat('/x.txt').ino;
  const side = new Database(v.vault.store.file);
  side.prepare('UPDATE extents SET data = ? WHERE ino = ?').run(Buffer.from('the changed  bytes'), ino);
  side.close();
  assert.throws(() => v.vfs.readFile('/x.txt'), { kind: 'StorageError', message: /does not match its SHA-256/ });
  assert.equal(v.vfs.readFile('/y.txt').toString(), 'another file', 'other files read on');
});

test('a vault file of the schema before (chunks only) opens migrated: old files read and change, new small files go inline', (t) => {
  const dir = tempDir();
  t.after(dir.cleanup);
  const home = new AvfsHome(dir.dir);
  home.ensure();
  const file = home.vaultFile('old');
  // The schema before inline pieces, as the previous avfs made it, with a small file stored as an extent and a chunk.
  const db = new Database(file);
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  for (let v = 0; v < INLINE_PIECES_SCHEMA - 1; v++) db.exec(MIGRATIONS[v]!);
  db.pragma(`user_version = ${INLINE_PIECES_SCHEMA - 1}`);
  const old = new InodeStore(new SqliteMeta(db));
  old.initialize();
  const f = old.create(1, 'old.txt', { mode: 0o100644, pathForErrors: '/old.txt' });
  old.writeAll(f.ino, Buffer.from('old schema: A'), '/old.txt');
  assert.equal((db.prepare('SELECT COUNT(*) AS n FROM chunks').get() as { n: number }).n, 1);
  db.close();

  // Read-only, as it is (no migration): the old layout reads.
  const ro = home.open('old', { readonly: true, olderSchemaOk: true });
  try {
    assert.equal(ro.db.pragma('user_version', { simple: true }), INLINE_PIECES_SCHEMA - 1);
    assert.equal(new Vfs(ro).readFile('/old.txt').toString(), 'old schema: A');
    assert.equal(ro.store.chunkStats().count, 1);
  } finally {
    ro.close();
  }
  const vault = home.open('old');
  t.after(() => vault.close());
  assert.equal(vault.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
  const vfs = new Vfs(vault);
  assert.equal(vfs.readFile('/old.txt').toString(), 'old schema: A');
  const io = new FileIo(vfs);
  io.writeAt(io.open('/old.txt', true).ino, 'old schema: '.length, Buffer.from('B'), '/old.txt');
  assert.equal(vfs.readFile('/old.txt').toString(), 'old schema: B');
  vfs.writeFile('/new.txt', Buffer.from('inline'));
  assert.equal((vault.db.prepare('SELECT COUNT(data) AS n FROM extents').get() as { n: number }).n, 2, 'both small files are inline now');
  vault.checkpoints.save({ name: 'after' });
  vfs.writeFile('/old.txt', Buffer.from('overwritten'));
  vault.checkpoints.restore('after');
  assert.equal(vfs.readFile('/old.txt').toString(), 'old schema: B');
  assert.equal(vfs.readFile('/new.txt').toString(), 'inline');
  assert.equal(vault.store.check(), 'ok');
});

test('converting a vault with inline files to LMDB copies their bytes, and a fork of it reads them', (t) => {
  const v = tempVault('inline-conv', 'sqlite');
  t.after(v.cleanup);
  const files = new Map<string, Buffer>();
  for (let i = 0; i < 20; i++) files.set(`/f${i}.bin`, randomBytes(i * 300));
  for (const [p, data] of files) v.vfs.writeFile(p, data);
  v.vfs.writeFile('/same1.txt', Buffer.from('same bytes'));
  v.vfs.writeFile('/same2.txt', Buffer.from('same bytes'));
  v.vault.checkpoints.save({ name: 'cp' });
  v.vfs.writeFile('/after.txt', Buffer.from('inline after the checkpoint'));
  const before = v.vault.store.chunkStats();
  const fork = new Vfs(forkVault(v.home, 'inline-conv', 'inline-conv-fork'));
  t.after(() => fork.vault.close());
  assert.equal(fork.vault.store.chunkStats().count, 0, 'the fork holds no bytes of its own');
  assert.equal(fork.readFile('/after.txt').toString(), 'inline after the checkpoint');
  for (const [p, data] of files) assert.deepEqual(fork.readFile(p), data);
  v.vault.close();
  const r = convertVault(v.home, 'inline-conv', 'lmdb');
  assert.equal(r.verified, true);
  const lm = v.home.open('inline-conv');
  try {
    assert.equal(lm.backend, 'lmdb');
    const lvfs = new Vfs(lm);
    for (const [p, data] of files) assert.deepEqual(lvfs.readFile(p), data);
    assert.equal(lvfs.readFile('/after.txt').toString(), 'inline after the checkpoint');
    assert.equal(lm.store.chunkStats().bytes, before.bytes);
  } finally {
    lm.close();
  }
  // The test's cleanup closes the vault again: give it an open one.
  (v as { vault: unknown }).vault = v.home.open('inline-conv');
});
