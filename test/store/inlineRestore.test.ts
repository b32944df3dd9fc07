/**
 * Where inline small content (schema 6) meets the rest of the SQLite store: each inline extent row
 * is its own copy of its piece, so a check of one copy says nothing of another with the same hash;
 * and a restore's parked undo tree, restored and undone twice, gives back the same bytes and the
 * same accounting. Real vault files, a second connection editing the file as damage would.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { descendantRefs, forkVault } from '../../host/store/forks';
import { collectGarbage } from '../../host/store/gc';
import { AvfsHome } from '../../host/store/home';
import { CheckpointTree } from '../../host/store/checkpointTree';
import { Vfs } from '../../host/vfs/vfs';
import { ROOT, runCli, runJson, tempDir, tempVault, treeState } from '../helpers';

test('two inline copies of the same bytes are each checked: a damaged one is refused after the other read clean', (t) => {
  const v = tempVault('inline-twins', 'sqlite');
  t.after(v.cleanup);
  const same = Buffer.from('the same small content in two files\n');
  v.vfs.writeFile('/a.txt', same);
  v.vfs.writeFile('/b.txt', same);
  const b = v.vfs.stat('/b.txt').ino;
  const side = new Database(v.vault.store.file);
  side.prepare('UPDATE extents SET data = ? WHERE ino = ?').run(Buffer.from('the SAME small content in two files\n'), b);
  side.close();
  assert.deepEqual(v.vfs.readFile('/a.txt'), same);
  assert.throws(() => v.vfs.readFile('/b.txt'), { kind: 'StorageError', message: /does not match its SHA-256/ });
  assert.deepEqual(v.vfs.readFile('/a.txt'), same, 'the clean copy reads on');
});

test('a chunk-table copy of a piece is checked even when an inline copy of it read clean', (t) => {
  const v = tempVault('inline-chunk-twin', 'sqlite');
  t.after(v.cleanup);
  const same = Buffer.from('kept in a checkpoint and inline\n');
  v.vfs.writeFile('/a.txt', same);
  v.vault.checkpoints.save({ name: 'one' }); // moves a.txt's piece into chunks
  v.vfs.writeFile('/b.txt', same); // a new inline copy of the same hash
  const side = new Database(v.vault.store.file);
  side.prepare('UPDATE chunks SET data = ?').run(Buffer.from('KEPT in a checkpoint and inline\n'));
  side.close();
  assert.deepEqual(v.vfs.readFile('/b.txt'), same);
  const cp = v.vault.checkpoints.get('one');
  const tree = new CheckpointTree(v.vault.store, v.vault.inodes.chunks, cp);
  assert.throws(() => tree.read(tree.lookup(['a.txt'], true)), { kind: 'StorageError', message: /does not match its SHA-256/ });
});

test('inline files through checkpoint, edit, restore and its undo, twice, then gc: same bytes, stats, links and accounting', (t) => {
  const v = tempVault('inline-park', 'sqlite');
  t.after(v.cleanup);
  const { vfs } = v;
  const cps = v.vault.checkpoints;
  const inlineRows = () => (v.vault.db.prepare('SELECT COUNT(data) AS n FROM extents').get() as { n: number }).n;
  vfs.mkdir('/d');
  for (let i = 0; i < 30; i++) vfs.writeFile(`/d/s${i}.txt`, Buffer.from(`small ${i}\n`.repeat(i + 1)));
  vfs.writeFile('/edge.bin', Buffer.alloc(4096, 7)); // exactly INLINE_MAX
  vfs.link('/d/s3.txt', '/hard.txt');
  cps.save({ name: 'base' });
  const base = treeState(vfs);
  const baseStats = v.vault.store.chunkStats();

  // Edits after the checkpoint: new inline pieces, a write through the hard link, growth past and back under INLINE_MAX.
  vfs.writeFile('/hard.txt', Buffer.from('written through the link\n'));
  vfs.writeFile('/d/s5.txt', Buffer.alloc(10_000, 1));
  vfs.writeFile('/d/s6.txt', Buffer.from('shorter'));
  vfs.rm('/d/s7.txt');
  vfs.writeFile('/new.txt', Buffer.from('only after base\n'));
  assert.ok(inlineRows() > 0);
  const edited = treeState(vfs);

  for (let round = 0; round < 2; round++) {
    const { undo } = cps.restore('base');
    assert.deepEqual(treeState(vfs), base, `round ${round}: the restored tree is base`);
    assert.equal(vfs.stat('/hard.txt').ino, vfs.stat('/d/s3.txt').ino, 'the hard link is one inode again');
    assert.equal(vfs.stat('/hard.txt').nlink, 2);
    assert.equal(inlineRows(), 0, 'a restored tree names chunks only');
    // Writes into the restored tree go inline again, and through the link reach both names.
    vfs.writeFile('/hard.txt', Buffer.from('written through the link\n'));
    assert.equal(vfs.readFile('/d/s3.txt').toString(), 'written through the link\n');
    assert.equal(v.vault.store.check(), 'ok');

    cps.restore(undo.name);
    assert.deepEqual(treeState(vfs), edited, `round ${round}: undoing the restore brings the edits back`);
    assert.equal(vfs.readFile('/d/s3.txt').toString(), 'written through the link\n');
    assert.equal(v.vault.store.check(), 'ok');
  }

  // gc keeps all the checkpoints hold while they exist.
  const alone = cps.aloneBytes()!;
  const baseRow = cps.get('base');
  // The undo points of the undos hold base with s3.txt rewritten: only base holds the first s3.txt.
  assert.equal(alone.get(baseRow.id), 'small 3\n'.length * 4);
  const before = v.vault.store.chunkStats();
  assert.equal(collectGarbage(v.vault.store).bytes_freed, 0, 'nothing is garbage while checkpoints name it');
  assert.deepEqual(v.vault.store.chunkStats(), before);
  assert.deepEqual(treeState(vfs), edited);

  // Back to base, every other checkpoint deleted, gc: what only they held goes; the stats are base's.
  cps.restore('base');
  for (const c of cps.list()) if (c.name !== 'base') cps.delete(c.name);
  collectGarbage(v.vault.store);
  assert.deepEqual(treeState(vfs), base);
  assert.deepEqual(v.vault.store.chunkStats(), baseStats, 'the stored pieces are base\'s again, each counted once');
  assert.equal(v.vault.store.check(), 'ok');
  // The live counters kept through it all are what counting the tree afresh gives.
  const kept = v.vault.store.counters()!;
  v.vault.store.recount();
  assert.deepEqual(v.vault.store.counters(), kept);
});

test('a fork of a vault holding a parked undo point and inline files reads them; the parent restores its undo and collects garbage without losing the fork\'s bytes', (t) => {
  const v = tempVault('inline-fork-src', 'sqlite');
  t.after(v.cleanup);
  const cps = v.vault.checkpoints;
  v.vfs.writeFile('/kept.txt', Buffer.from('in base\n'));
  cps.save({ name: 'base' });
  v.vfs.writeFile('/undo-only.txt', Buffer.from('only the undo point holds this\n'));
  const { undo } = cps.restore('base'); // parked
  v.vfs.writeFile('/live.txt', Buffer.from('inline after the restore\n'));
  const fork = new Vfs(forkVault(v.home, 'inline-fork-src', 'inline-fork'));
  t.after(() => fork.vault.close());
  assert.equal(fork.readFile('/live.txt').toString(), 'inline after the restore\n');
  assert.equal(fork.readFile('/kept.txt').toString(), 'in base\n');
  assert.equal(fork.vault.store.check(), 'ok');
  // The parent moves on: its live files change, its undo point is restored, the rest is collected.
  v.vfs.writeFile('/live.txt', Buffer.from('changed in the parent\n'));
  cps.restore(undo.name);
  assert.equal(v.vfs.readFile('/undo-only.txt').toString(), 'only the undo point holds this\n');
  for (const c of cps.list()) cps.delete(c.name);
  collectGarbage(v.vault.store, { extraRefs: () => descendantRefs(v.home, 'inline-fork-src') });
  assert.equal(fork.readFile('/live.txt').toString(), 'inline after the restore\n', 'the fork keeps the bytes it forked');
  assert.equal(fork.readFile('/kept.txt').toString(), 'in base\n');
  assert.equal(v.vault.store.check(), 'ok');
});

test('the CLI in other processes reads the live tree and diffs a checkpoint while another process restores again and again', async (t) => {
  const d = tempDir();
  t.after(d.cleanup);
  const home = new AvfsHome(d.dir);
  const vfs = new Vfs(home.create('busy', {}, 'sqlite'));
  for (let i = 0; i < 200; i++) vfs.writeFile(`/f${i}.txt`, Buffer.from(`A${i}\n`));
  vfs.vault.checkpoints.save({ name: 'A' });
  for (let i = 0; i < 200; i += 2) vfs.writeFile(`/f${i}.txt`, Buffer.from(`B${i}\n`));
  vfs.writeFile('/only-b.txt', Buffer.from('B\n'));
  vfs.vault.checkpoints.save({ name: 'B' });
  vfs.vault.close();
  const loop = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/fixtures/restoreLoop.ts'), d.dir, 'busy'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ended = new Promise((resolve) => loop.on('close', resolve));
  t.after(async () => {
    loop.kill('SIGKILL');
    await ended;
  });
  let restores = 0;
  loop.stdout.setEncoding('utf8').on('data', (s: string) => (restores += s.split('\n').filter(Boolean).length));
  while (restores < 2) await new Promise((r) => setTimeout(r, 20));
  for (let round = 0; round < 4; round++) {
    const cat = await runCli(['--vault', 'busy', 'cat', '/f0.txt'], { home: d.dir });
    assert.equal(cat.code, 0, cat.stderr);
    assert.ok(['A0\n', 'B0\n'].includes(cat.stdout), `cat gives A's or B's bytes: ${JSON.stringify(cat.stdout)}`);
    const diff = await runJson(['--vault', 'busy', 'checkpoint', 'diff', 'A'], { home: d.dir });
    assert.equal(diff.code, 0, diff.stderr);
    const modified = (diff.json.modified as Array<{ path: string }>).length;
    const added = (diff.json.added as Array<{ path: string }>).map((e) => e.path);
    assert.ok((modified === 0 && added.length === 0) || (modified === 100 && added.join() === '/only-b.txt'), `the live tree is A or B: ${modified} modified, ${added.join()} added`);
  }
  const seen = restores;
  loop.kill('SIGKILL');
  await ended;
  assert.ok(seen > 2, `restores went on meanwhile (${seen})`);
  const v = home.open('busy');
  try {
    assert.equal(v.store.check(), 'ok');
  } finally {
    v.close();
  }
});
