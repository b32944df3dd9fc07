import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { AvfsError } from '../../host/protocol/errors';
import { diffTrees } from '../../host/store/diff';
import { collectGarbage } from '../../host/store/gc';
import { AvfsHome } from '../../host/store/home';
import { importTree } from '../../host/vfs/transfer';
import { Vfs } from '../../host/vfs/vfs';
import { ROOT, tempDir, tempVault, treeState } from '../helpers';

const liveRef = { kind: 'live' } as const;
const cpRef = (vfs: Vfs, name: string) => ({ kind: 'checkpoint' as const, id: vfs.vault.checkpoints.get(name).id, name });

describe('checkpoints', () => {
  const t = tempVault();
  const { vfs } = t;
  const cps = vfs.vault.checkpoints;
  after(t.cleanup);

  test('restore returns the exact tree of a checkpoint taken on a real imported tree, inode numbers included', () => {
    importTree(vfs, join(ROOT, 'node_modules', 'commander'), '/app');
    vfs.symlink('app/index.js', '/entry');
    vfs.link('/app/package.json', '/pkg-hardlink');
    const before = treeState(vfs);
    const chunksBefore = vfs.vault.store.chunkStats().count;
    cps.save({ name: 'base', description: 'imported' });
    assert.equal(vfs.vault.store.chunkStats().count, chunksBefore, 'a checkpoint copies no bytes');

    vfs.writeFile('/app/index.js', Buffer.from('broken'));
    vfs.rm('/app/lib', { recursive: true });
    vfs.writeFile('/junk.bin', randomBytes(200_000));
    vfs.rename('/app/package.json', '/app/moved.json');
    vfs.setattr('/app/Readme.md', { mode: 0o600 });
    vfs.rm('/entry');
    vfs.symlink('nowhere', '/entry');
    assert.notDeepEqual(treeState(vfs), before);

    const { undo } = cps.restore('base');
    assert.deepEqual(treeState(vfs), before);
    assert.equal(vfs.vault.store.check(), 'ok');

    // The restore saved what it replaced, so it can itself be undone.
    cps.restore(undo.name);
    assert.equal(vfs.readFile('/app/index.js').toString(), 'broken');
    assert.equal(vfs.exists('/junk.bin'), true);
    cps.restore('base');
    assert.deepEqual(treeState(vfs), before);
  });

  test('a file created after a restore never reuses an inode number', () => {
    const maxIno = Math.max(...vfs.vault.checkpoints.list().flatMap((c) => vfs.vault.store.dumpTree(c.id).inodes.map((i) => i.ino)));
    const a = vfs.writeFile('/fresh', Buffer.from('x'));
    assert.ok(a.ino > maxIno);
  });

  test('automatic names are unique, even many in the same millisecond', () => {
    const names = new Set<string>();
    for (let i = 0; i < 40; i++) names.add(cps.save({ auto: true }).name);
    assert.equal(names.size, 40);
    for (const n of names) cps.delete(n);
  });

  test('bad names and missing checkpoints are typed errors', () => {
    const kind = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        return (e as AvfsError).kind;
      }
      return 'none';
    };
    assert.equal(kind(() => cps.save({ name: 'base' })), 'AlreadyExists');
    assert.equal(kind(() => cps.save({ name: '../x' })), 'InvalidInput');
    assert.equal(kind(() => cps.save({ name: '' })), 'InvalidInput');
    assert.equal(kind(() => cps.restore('nope')), 'NotFound');
    assert.equal(kind(() => cps.delete('nope')), 'NotFound');
  });

  test('diff reports exactly what scripted changes did', () => {
    vfs.mkdir('/d/sub', { parents: true });
    vfs.writeFile('/d/sub/keep.txt', Buffer.from('keep\n'));
    vfs.writeFile('/d/sub/edit.txt', Buffer.from('one\ntwo\nthree\n'));
    vfs.writeFile('/d/gone.txt', Buffer.from('bye'));
    vfs.writeFile('/d/mv-src.txt', Buffer.from('moving'));
    vfs.writeFile('/d/over-src.txt', Buffer.from('winner'));
    vfs.writeFile('/d/over-dst.txt', Buffer.from('loser'));
    vfs.writeFile('/d/same.txt', Buffer.from('same'));
    vfs.writeFile('/d/chmod.sh', Buffer.from('#!/bin/sh\n'));
    vfs.symlink('keep.txt', '/d/sub/link');
    cps.save({ name: 'before-script' });

    vfs.writeFile('/d/new.txt', Buffer.from('new'));
    vfs.writeFile('/d/sub/edit.txt', Buffer.from('one\nTWO\nthree\n'));
    vfs.rm('/d/gone.txt');
    vfs.rename('/d/mv-src.txt', '/d/mv-dst.txt');
    vfs.rename('/d/over-src.txt', '/d/over-dst.txt');
    vfs.writeFile('/d/same.txt', Buffer.from('same')); // rewritten with identical bytes: not a change
    vfs.setattr('/d/chmod.sh', { mode: 0o755 });
    vfs.rename('/d/sub', '/d/renamed-sub');
    vfs.writeFile('/d/renamed-sub/keep.txt', Buffer.from('kept but edited\n'));
    vfs.rm('/d/renamed-sub/link');
    vfs.symlink('edit.txt', '/d/renamed-sub/link');

    const s = diffTrees(vfs.vault.store, vfs.inodes.chunks, cpRef(vfs, 'before-script'), liveRef, { patch: true });
    const paths = (xs: Array<{ path: string }>) => xs.map((x) => x.path).filter((p) => p.startsWith('/d') || p === '/fresh').sort();
    assert.deepEqual(paths(s.added), ['/d/new.txt', '/d/renamed-sub/link']);
    assert.deepEqual(paths(s.deleted), ['/d/gone.txt', '/d/over-src.txt', '/d/sub/link']);
    assert.deepEqual(paths(s.modified), ['/d/chmod.sh', '/d/over-dst.txt', '/d/renamed-sub/edit.txt', '/d/renamed-sub/keep.txt']);
    assert.deepEqual(
      s.renamed.map((r) => [r.from, r.to]).sort(),
      [['/d/mv-src.txt', '/d/mv-dst.txt'], ['/d/sub', '/d/renamed-sub']],
    );
    const chmod = s.modified.find((m) => m.path === '/d/chmod.sh')!;
    assert.deepEqual([chmod.content_changed, chmod.mode_before, chmod.mode_after], [false, '0644', '0755']);
    const over = s.modified.find((m) => m.path === '/d/over-dst.txt')!;
    assert.deepEqual([over.size_before, over.size_after, over.content_changed], [5, 6, true]);
    assert.match(s.patch!, /-two\n\+TWO/);
    assert.match(s.patch!, /\+\+\+ b\/d\/new.txt/);

    // Checkpoint to checkpoint, and back: the reverse diff swaps added and deleted.
    cps.save({ name: 'after-script' });
    const back = diffTrees(vfs.vault.store, vfs.inodes.chunks, cpRef(vfs, 'after-script'), cpRef(vfs, 'before-script'));
    assert.deepEqual(paths(back.deleted), ['/d/new.txt', '/d/renamed-sub/link']);
    const none = diffTrees(vfs.vault.store, vfs.inodes.chunks, cpRef(vfs, 'after-script'), liveRef);
    assert.deepEqual([none.added, none.deleted, none.modified, none.renamed], [[], [], [], []]);
  });

  test('deleting checkpoints and gc brings the file back near the live size', () => {
    for (const c of cps.list()) cps.delete(c.name);
    vfs.rm('/junk.bin', { force: true });
    for (let i = 0; i < 5; i++) {
      vfs.writeFile('/churn.bin', randomBytes(2 * 1024 * 1024));
      cps.save({ name: `churn-${i}` });
    }
    const stored = () => vfs.vault.store.chunkStats().bytes;
    collectGarbage(vfs.vault.store);
    assert.ok(stored() > 10 * 1024 * 1024, 'checkpoints keep their chunks through gc');
    for (const c of cps.list()) cps.delete(c.name);
    const gc = collectGarbage(vfs.vault.store);
    assert.ok(gc.bytes_freed >= 8 * 1024 * 1024);
    const live = vfs.inodes.counters().liveBytes;
    assert.ok(stored() <= live * 1.05 + 64 * 1024, `stored ${stored()} is near live ${live}`);
  });
});

describe('forks', () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);

  test('a fork is independent both ways, forks of forks work, and chunks stay reachable through gc', async () => {
    const { forkVault } = await import('../../host/store/forks');
    const main = new Vfs(home.create('main'));
    const big = randomBytes(3 * 1024 * 1024);
    main.writeFile('/big.bin', big);
    main.writeFile('/shared.txt', Buffer.from('v1'));
    const fork = new Vfs(forkVault(home, 'main', 'f1'));
    assert.equal(fork.vault.store.chunkStats().count, 0, 'a fork starts with no chunks of its own');
    assert.deepEqual(fork.readFile('/big.bin'), big, 'the fork reads its parent\'s chunks');

    fork.writeFile('/shared.txt', Buffer.from('fork'));
    fork.writeFile('/only-fork.txt', Buffer.from('f'));
    main.writeFile('/shared.txt', Buffer.from('main'));
    main.writeFile('/only-main.txt', Buffer.from('m'));
    assert.equal(main.readFile('/shared.txt').toString(), 'main');
    assert.equal(fork.readFile('/shared.txt').toString(), 'fork');
    assert.equal(main.exists('/only-fork.txt'), false);
    assert.equal(fork.exists('/only-main.txt'), false);

    const grand = new Vfs(forkVault(home, 'f1', 'f2'));
    assert.equal(grand.readFile('/shared.txt').toString(), 'fork');
    assert.deepEqual(grand.readFile('/big.bin'), big, 'read through two levels');

    // The parent drops the big file and collects garbage: its descendants still need those chunks.
    main.rm('/big.bin');
    const { descendantRefs } = await import('../../host/store/forks');
    collectGarbage(main.vault.store, { extraRefs: () => descendantRefs(home, 'main') });
    assert.deepEqual(grand.readFile('/big.bin'), big);
    assert.deepEqual(fork.readFile('/big.bin'), big);
    // Without asking the descendants, gc would have freed them: the test above is not vacuous.
    // (PostgreSQL also keeps what the server's forks of it reference, whichever home made them.)
    const dry = collectGarbage(main.vault.store, { dryRun: true });
    if (main.vault.backend === 'postgres') assert.equal(dry.bytes_freed, 0);
    else assert.ok(dry.bytes_freed >= big.length);

    // Flatten main into its fork, delete main: the forks still read everything.
    const { flattenInto } = await import('../../host/store/forks');
    main.vault.close();
    assert.deepEqual(flattenInto(home, 'main'), ['f1']);
    home.removeFiles('main');
    fork.vault.close();
    grand.vault.close();
    const f1 = new Vfs(home.open('f1'));
    const f2 = new Vfs(home.open('f2'));
    try {
      assert.equal(f1.vault.meta('parent'), undefined);
      assert.deepEqual(f1.readFile('/big.bin'), big);
      assert.deepEqual(f2.readFile('/big.bin'), big);
      assert.equal(f2.readFile('/shared.txt').toString(), 'fork');
      assert.equal(f1.vault.store.check(), 'ok');
    } finally {
      f1.vault.close();
      f2.vault.close();
    }
  });
});

describe('crash during restore', () => {
  const t = tempDir();
  after(t.cleanup);

  function killDuringRestores(home: string, afterRestores: number, extraMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const c = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/fixtures/restoreLoop.ts'), home, 'crash'], { stdio: ['ignore', 'pipe', 'inherit'] });
      let n = 0;
      c.stdout.setEncoding('utf8');
      c.stdout.on('data', (d: string) => {
        n += d.split('\n').filter(Boolean).length;
        if (n >= afterRestores) setTimeout(() => c.kill('SIGKILL'), extraMs);
      });
      c.on('error', reject);
      c.on('close', () => resolve());
    });
  }

  test('a restore killed with SIGKILL leaves the pre-restore or post-restore tree, never a mix', async () => {
    const home = new AvfsHome(t.dir);
    const vfs = new Vfs(home.create('crash'));
    vfs.mkdir('/a');
    for (let i = 0; i < 300; i++) vfs.writeFile(`/a/f${i}`, Buffer.from(`A${i}`));
    vfs.vault.checkpoints.save({ name: 'A' });
    const stateA = treeState(vfs);
    for (let i = 0; i < 300; i += 2) vfs.rm(`/a/f${i}`);
    for (let i = 1; i < 300; i += 2) vfs.writeFile(`/a/f${i}`, Buffer.from(`B${i}`));
    for (let i = 0; i < 100; i++) vfs.writeFile(`/b${i}`, Buffer.from(`new ${i}`));
    vfs.vault.checkpoints.save({ name: 'B' });
    const stateB = treeState(vfs);
    vfs.vault.close();
    for (let round = 0; round < 4; round++) {
      await killDuringRestores(t.dir, 1 + round, 3 + round * 7);
      const v = new Vfs(home.open('crash'));
      try {
        assert.equal(v.vault.store.check(), 'ok');
        const now = treeState(v);
        assert.ok(
          JSON.stringify(now) === JSON.stringify(stateA) || JSON.stringify(now) === JSON.stringify(stateB),
          `round ${round}: the tree is exactly checkpoint A or B`,
        );
      } finally {
        v.vault.close();
      }
    }
  });
});

describe('a checkpoint edited in place (a project base moving forward)', () => {
  const t = tempVault();
  const { vfs } = t;
  const cps = vfs.vault.checkpoints;
  after(t.cleanup);

  test('amend takes the changed paths from the live tree, as derive does on a copy, and leaves the rest', () => {
    vfs.writeFile('/a.txt', Buffer.from('a1'));
    vfs.mkdir('/d');
    vfs.writeFile('/d/b.txt', Buffer.from('b1'));
    vfs.writeFile('/d/keep.txt', Buffer.from('keep'));
    vfs.writeFile('/h1', Buffer.from('linked'));
    vfs.link('/h1', '/h2');
    const base = cps.save({ internal: true, prefix: 'base' });
    const other = cps.save({ internal: true, prefix: 'other' });
    vfs.writeFile('/a.txt', Buffer.from('a2, longer'));
    vfs.rm('/d/b.txt');
    vfs.writeFile('/d/e.txt', Buffer.from('new'));
    vfs.mkdir('/n');
    vfs.writeFile('/n/x', Buffer.from('x'));
    vfs.writeFile('/h1', Buffer.from('linked, changed'));
    const ino = (p: string) => vfs.stat(p, false).ino;
    const edits = [
      { path: '/d/b.txt', ino: null },
      { path: '/a.txt', ino: ino('/a.txt') },
      { path: '/d/e.txt', ino: ino('/d/e.txt') },
      { path: '/n', ino: ino('/n') },
      { path: '/n/x', ino: ino('/n/x') },
      { path: '/h1', ino: ino('/h1') },
    ];
    const amended = cps.amend(base.name, edits, 'live', 12345);
    const derived = cps.derive(other.name, edits, 'derived');
    assert.equal(amended.name, base.name, 'the same checkpoint, edited');
    assert.equal(amended.journal_seq, 12345);
    for (const cp of [amended, derived]) {
      const s = diffTrees(vfs.vault.store, vfs.inodes.chunks, cpRef(vfs, cp.name), liveRef);
      assert.deepEqual([...s.added, ...s.modified, ...s.deleted], [], `${cp.name} holds the live tree`);
    }
    assert.equal(amended.file_count, derived.file_count);
    assert.equal(amended.total_bytes, derived.total_bytes);
    // The edit of one hard link's path is seen at the other (one inode), and /d/keep.txt was never touched.
    vfs.writeFile('/d/keep.txt', Buffer.from('changed later'));
    const later = diffTrees(vfs.vault.store, vfs.inodes.chunks, cpRef(vfs, base.name), liveRef);
    assert.deepEqual(later.modified.map((m) => m.path), ['/d/keep.txt']);
    assert.throws(() => cps.amend(cps.save({ name: 'mine' }).name, edits), (e: AvfsError) => e.kind === 'Internal', 'a user checkpoint is never edited');
  });
});
