/**
 * A restore's undo checkpoint on SQLite is the pre-restore live tables renamed (parked), not a copy
 * of their rows. What a user sees of it must be what a copied checkpoint gives: its files read back,
 * diffs, a second connection reading it, restoring it, a second restore while it is parked (it is
 * folded into the checkpoint tables), derive from it, gc keeping its chunks and freeing them once it
 * is deleted, and a quota refusal leaving nothing parked.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { CheckpointTree } from '../../host/store/checkpointTree';
import { diffTrees } from '../../host/store/diff';
import { collectGarbage } from '../../host/store/gc';
import type { Vault } from '../../host/store/vault';
import { tempVault, treeState } from '../helpers';

const parkTables = (v: Vault) =>
  (v.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'park\\_%' ESCAPE '\\' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name);
const parked = (v: Vault) => (v.db.prepare("SELECT value FROM meta WHERE key = 'tree.parked'").get() as { value: string } | undefined)?.value;
const cpRows = (v: Vault, id: number) => (v.db.prepare('SELECT COUNT(*) AS n FROM cp_inodes WHERE cp = ?').get(id) as { n: number }).n;
const readIn = (v: Vault, name: string, path: string) => {
  const tree = new CheckpointTree(v.store, v.inodes.chunks, v.checkpoints.get(name));
  return tree.read(tree.lookup(path.split('/').filter(Boolean), true));
};

test('a restore parks its undo tree, and that tree reads, diffs, restores and folds like any checkpoint', () => {
  const t = tempVault('park', 'sqlite');
  after(t.cleanup);
  const { vfs, vault: v } = t;
  const cps = v.checkpoints;
  vfs.mkdir('/src');
  for (let i = 0; i < 50; i++) vfs.writeFile(`/src/f${i}.ts`, Buffer.from(`export const v${i} = ${i};\n`));
  vfs.symlink('src/f0.ts', '/entry');
  cps.save({ name: 'base' });
  const baseState = treeState(vfs);

  // Changes only the undo point will hold.
  const onlyUndo = randomBytes(150_000);
  vfs.writeFile('/only-undo.bin', onlyUndo);
  vfs.writeFile('/src/f1.ts', Buffer.from('changed\n'));
  vfs.rm('/src/f2.ts');
  vfs.setattr('/src/f3.ts', { mode: 0o600 });
  vfs.link('/src/f4.ts', '/hard');
  const changedState = treeState(vfs);

  const { undo } = cps.restore('base');
  assert.deepEqual(treeState(vfs), baseState);
  assert.equal(v.store.check(), 'ok');
  // Parked: no row of it was copied into cp_*.
  assert.deepEqual(parkTables(v), ['park_dentries', 'park_extents', 'park_inodes', 'park_symlinks']);
  assert.equal(parked(v), String(undo.id));
  assert.equal(cpRows(v, undo.id), 0);
  assert.equal(v.store.treeCounts(undo.id).files, undo.file_count, 'its counts are the live counters it was saved with');

  // It reads back, lists, and diffs against the live tree as a copied checkpoint would.
  assert.deepEqual(readIn(v, undo.name, '/only-undo.bin'), onlyUndo);
  assert.equal(readIn(v, undo.name, '/src/f1.ts').toString(), 'changed\n');
  assert.equal(readIn(v, undo.name, '/entry').toString(), 'export const v0 = 0;\n');
  const d = diffTrees(v.store, v.inodes.chunks, { kind: 'checkpoint', id: undo.id, name: undo.name }, { kind: 'live' });
  assert.ok(d.deleted.some((e) => e.path === '/only-undo.bin'));
  assert.ok(d.added.some((e) => e.path === '/src/f2.ts'));
  assert.ok(d.modified.some((e) => e.path === '/src/f1.ts' && e.content_changed));

  // Another connection (another process would open one the same way) reads it too.
  const other = t.home.open('park', { readonly: true });
  try {
    assert.deepEqual(readIn(other, undo.name, '/only-undo.bin'), onlyUndo);
  } finally {
    other.close();
  }

  // gc keeps the chunks only the parked tree references.
  collectGarbage(v.store);
  assert.deepEqual(readIn(v, undo.name, '/only-undo.bin'), onlyUndo);

  // derive copies from it.
  const derived = cps.derive(undo.name, [], 'copy');
  assert.equal(cpRows(v, derived.id), undo.file_count + 1);
  cps.delete(derived.name);

  // Restoring the undo brings the changed tree back; the first undo is folded into cp_* (one tree
  // is parked at a time) and the new undo is parked.
  const second = cps.restore(undo.name);
  assert.deepEqual(treeState(vfs), changedState);
  assert.equal(parked(v), String(second.undo.id));
  assert.equal(cpRows(v, undo.id), undo.file_count + 1);
  assert.deepEqual(readIn(v, undo.name, '/only-undo.bin'), onlyUndo);
  cps.restore(second.undo.name);
  assert.deepEqual(treeState(vfs), baseState);
  cps.restore(undo.name);
  assert.deepEqual(treeState(vfs), changedState);
  assert.equal(v.store.check(), 'ok');
});

test('deleting a parked undo point drops its tables, and gc then frees what it alone held', () => {
  const t = tempVault('park-gc', 'sqlite');
  after(t.cleanup);
  const { vfs, vault: v } = t;
  vfs.writeFile('/keep.txt', Buffer.from('keep'));
  v.checkpoints.save({ name: 'base' });
  vfs.writeFile('/big.bin', randomBytes(300_000));
  const { undo } = v.checkpoints.restore('base');
  const alone = v.checkpoints.aloneBytes()!;
  assert.equal(alone.get(undo.id), 300_000, 'what the parked undo holds alone is counted');
  assert.equal(collectGarbage(v.store).bytes_freed, 0);
  v.checkpoints.delete(undo.name);
  assert.deepEqual(parkTables(v), []);
  assert.equal(parked(v), undefined);
  assert.equal(collectGarbage(v.store).bytes_freed, 300_000);
  assert.equal(vfs.readFile('/keep.txt').toString(), 'keep');
  assert.equal(v.store.check(), 'ok');
});

test('a restore refused by a quota parks nothing and leaves the live tree as it was', () => {
  const t = tempVault('park-quota', 'sqlite');
  after(t.cleanup);
  const { vfs, vault: v } = t;
  for (let i = 0; i < 10; i++) vfs.writeFile(`/f${i}`, Buffer.from(`${i}`));
  v.checkpoints.save({ name: 'ten' });
  for (let i = 2; i < 10; i++) vfs.rm(`/f${i}`);
  const before = treeState(vfs);
  v.inodes.quotas.set('max_files', 5);
  assert.throws(() => v.checkpoints.restore('ten'), { kind: 'QuotaExceeded' });
  assert.deepEqual(treeState(vfs), before);
  assert.deepEqual(parkTables(v), []);
  assert.equal(v.checkpoints.list().length, 1);
  assert.equal(v.store.check(), 'ok');
});
