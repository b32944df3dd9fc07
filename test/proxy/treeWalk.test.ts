/**
 * The working copy's walk and reads (`--materialize`'s commit-back): the addon's one-call walk
 * and batched reads (host/fuse/native/tree.c) give exactly what Node's lstat and readFile give,
 * on a real directory tree with every kind of entry, and a file changed since the walk is read as
 * it is now.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, linkSync, mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadNativeAddon } from '../../host/fuse/addon';
import { readFilesIn, walkTree } from '../../host/proxy/workingCopy';
import { tempDir } from '../helpers';

describe('working copy walk and reads: addon and Node agree', () => {
  const t = tempDir('avfs-walk-');
  after(() => t.cleanup());
  const root = join(t.dir, 'tree');
  mkdirSync(join(root, 'a', 'b', 'empty'), { recursive: true });
  writeFileSync(join(root, 'zero'), '');
  writeFileSync(join(root, 'a', 'one'), 'x');
  writeFileSync(join(root, 'a', 'b', 'big'), Buffer.alloc(600 * 1024, 7));
  writeFileSync(join(root, 'a', 'héllo wörld'), 'unicode name\n');
  linkSync(join(root, 'a', 'one'), join(root, 'a', 'b', 'one-again'));
  symlinkSync('../nowhere', join(root, 'a', 'dangling'));
  symlinkSync('b', join(root, 'a', 'to-dir'));
  assert.equal(spawnSync('mkfifo', [join(root, 'a', 'fifo')]).status, 0);
  mkdirSync(join(root, 'many'));
  for (let i = 0; i < 700; i++) writeFileSync(join(root, 'many', `f${i}`), `file ${i}\n`.repeat(i % 5));

  test('the addon is loaded here (else these tests would compare Node with itself)', () => {
    const a = loadNativeAddon<{ scanTree?: unknown; readFiles?: unknown }>();
    assert.equal(typeof a?.scanTree, 'function');
    assert.equal(typeof a?.readFiles, 'function');
  });

  test('the walk: the same paths, kinds, inodes, modes, sizes and times; fifos left out, symlinks not followed', () => {
    const native = walkTree(root);
    const node = walkTree(root, false);
    assert.deepEqual([...native.keys()].sort(), [...node.keys()].sort());
    for (const [p, n] of native) assert.deepEqual(n, node.get(p), p);
    assert.equal(native.size, 11 + 700);
    assert.equal(native.has('/a/fifo'), false);
    assert.equal(native.get('/a/to-dir')!.kind, 'symlink');
    assert.equal(native.has('/a/to-dir/big'), false);
    assert.equal(native.get('/a/b/empty')!.kind, 'directory');
    assert.equal(native.get('/a/one')!.st.ino, native.get('/a/b/one-again')!.st.ino);
    assert.equal(native.get('/a/b/big')!.st.size, 600 * 1024);
    // A directory before what it holds.
    const order = [...native.keys()];
    assert.ok(order.indexOf('/a') < order.indexOf('/a/b') && order.indexOf('/a/b') < order.indexOf('/a/b/big'));
  });

  test('the reads: every file byte for byte, by both ways; one grown or shrunk since the walk is read as it is now', () => {
    const walked = walkTree(root);
    const files = [...walked].filter(([, n]) => n.kind === 'file').map(([p, n]) => [p, n.st.size] as [string, number]);
    for (const addon of [true, false]) {
      const got = readFilesIn(root, files, addon);
      assert.equal(got.size, files.length);
      for (const [p] of files) assert.deepEqual(got.get(p), readFileSync(root + p), `${p} (addon: ${addon})`);
    }
    appendFileSync(join(root, 'many', 'f1'), 'grown after the walk\n');
    truncateSync(join(root, 'many', 'f4'), 3);
    const again = readFilesIn(root, files);
    assert.equal(again.get('/many/f1')!.toString(), 'file 1\ngrown after the walk\n');
    assert.equal(again.get('/many/f4')!.toString(), 'fil');
    assert.equal(again.get('/many/f3')!.toString(), 'file 3\n'.repeat(3));
  });
});
