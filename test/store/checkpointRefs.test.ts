/**
 * What each checkpoint holds alone, from the counts kept in cp_refs, checked against the
 * definition computed the slow way (every checkpoint's extents against every other tree's), over
 * saves, deletes, restores, overwrites, a fork, and checkpoints that vanished behind the counts' back.
 * These are the SQLite backend's counts (the LMDB backend computes the same answer when asked).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { forkVault } from '../../host/store/forks';
import { collectGarbage } from '../../host/store/gc';
import type { Vault } from '../../host/store/vault';
import { Vfs } from '../../host/vfs/vfs';
import { tempVault } from '../helpers';

/** By definition: per checkpoint, bytes of the chunks in its extents and in no other tree. */
function slowAlone(v: Vault, extra: Buffer[] = []): Map<number, number> {
  const out = new Map<number, number>();
  const keep = new Set(extra.map((h) => h.toString('hex')));
  for (const r of v.db.prepare('SELECT hash FROM extents').all() as Array<{ hash: Buffer }>) keep.add(r.hash.toString('hex'));
  const byCp = new Map<number, Set<string>>();
  // A restore's undo checkpoint is parked: its extents are the park_extents table (host/store/sqlite.ts).
  const parked = (v.db.prepare("SELECT value FROM meta WHERE key = 'tree.parked'").get() as { value: string } | undefined)?.value;
  const sql = parked === undefined ? 'SELECT cp, hash FROM cp_extents' : `SELECT cp, hash FROM cp_extents UNION ALL SELECT ${Number(parked)} AS cp, hash FROM park_extents`;
  for (const r of v.db.prepare(sql).all() as Array<{ cp: number; hash: Buffer }>) {
    const s = byCp.get(r.cp) ?? new Set<string>();
    s.add(r.hash.toString('hex'));
    byCp.set(r.cp, s);
  }
  for (const [cp, hashes] of byCp) {
    let bytes = 0;
    for (const h of hashes) {
      if (keep.has(h) || [...byCp].some(([other, s]) => other !== cp && s.has(h))) continue;
      bytes += (v.db.prepare('SELECT LENGTH(data) AS n FROM chunks WHERE hash = ?').get(Buffer.from(h, 'hex')) as { n: number } | undefined)?.n ?? 0;
    }
    if (bytes > 0) out.set(cp, bytes);
  }
  return out;
}

const nonZero = (m: Map<number, number> | null) => new Map([...(m ?? new Map<number, number>())].filter(([, b]) => b > 0));

test('alone bytes match the definition through saves, deletes, restores and a fork, and predict what gc frees', () => {
  const t = tempVault('refs', 'sqlite');
  after(t.cleanup);
  const { vault: v, vfs } = t;
  const check = (what: string, extra: Buffer[] = []) => assert.deepEqual(nonZero(v.checkpoints.aloneBytes(() => extra)), slowAlone(v, extra), what);
  for (let i = 0; i < 6; i++) vfs.writeFile(`/f${i}.bin`, randomBytes(70_000));
  check('no checkpoint');
  v.checkpoints.save({ name: 'a' });
  check('one checkpoint of the live tree holds nothing alone');
  vfs.writeFile('/f0.bin', randomBytes(1000));
  vfs.rm('/f1.bin');
  check('two chunks of a file left only in a');
  v.checkpoints.save({ name: 'b' });
  vfs.writeFile('/f2.bin', randomBytes(5));
  v.checkpoints.save({ name: 'c', auto: true });
  vfs.writeFile('/f3.bin', Buffer.concat([randomBytes(65536), vfs.readFile('/f4.bin').subarray(0, 10)]));
  v.checkpoints.save({ name: 'd' });
  check('four checkpoints');
  v.checkpoints.delete('b');
  check('after a delete');
  v.checkpoints.restore('a');
  check('after a restore (its undo point is counted on demand)');
  v.checkpoints.save({ internal: true, prefix: 'base' });
  vfs.writeFile('/f5.bin', randomBytes(10));
  check('an internal checkpoint holds too');

  // An internal checkpoint edited in place (a base moved forward by an apply) is counted again.
  const base = v.checkpoints.internal()[0]!;
  v.checkpoints.amend(base.name, [{ path: '/f5.bin', ino: vfs.stat('/f5.bin').ino }]);
  check('after an amend');

  // What pruning a set frees is what gc then frees.
  const ids = v.checkpoints.list().filter((c) => c.name !== 'd').map((c) => c.id);
  v.checkpoints.refs.sync();
  const together = v.checkpoints.refs.together(ids);
  const orphans = collectGarbage(v.store, { dryRun: true }).bytes_freed;
  for (const c of v.checkpoints.list()) if (c.name !== 'd') v.checkpoints.delete(c.name);
  assert.equal(collectGarbage(v.store).bytes_freed, together + orphans);
  check('after deleting all but d');

  // A fork's trees hold chunks too: given as extra references, they are not alone.
  const fork = forkVault(t.home, 'refs', 'refs-fork');
  const forkHashes = (fork.db.prepare('SELECT hash FROM extents').all() as Array<{ hash: Buffer }>).map((r) => r.hash);
  fork.close();
  check('with a fork', forkHashes);

  // Checkpoints deleted behind the counts' back (another version): the counts are rebuilt.
  v.checkpoints.save({ name: 'e' });
  vfs.writeFile('/f4.bin', randomBytes(100));
  check('before the loss');
  const d = v.checkpoints.get('d');
  for (const tbl of ['cp_inodes', 'cp_dentries', 'cp_symlinks', 'cp_extents']) v.db.prepare(`DELETE FROM ${tbl} WHERE cp = ?`).run(d.id);
  v.db.prepare('DELETE FROM checkpoints WHERE id = ?').run(d.id);
  assert.equal(v.checkpoints.refs.current(), false);
  check('rebuilt after a checkpoint vanished');
});

test('gc frees what a dry-run prune said the pruned checkpoints held', () => {
  const t = tempVault('prune', 'sqlite');
  after(t.cleanup);
  const vfs = new Vfs(t.vault);
  const v = t.vault;
  v.checkpoints.setRetention({ keep_last: null, max_age_ms: null, hold_recent_ms: 0 });
  for (let i = 0; i < 5; i++) {
    vfs.writeFile('/x.bin', randomBytes(100_000 + i));
    v.checkpoints.save({ auto: true, prefix: 'exec' });
  }
  vfs.writeFile('/x.bin', randomBytes(10));
  v.checkpoints.setRetention({ keep_last: 2, max_age_ms: null, hold_recent_ms: 0 });
  const dry = v.checkpoints.prune({ dryRun: true });
  assert.equal(dry.prune.length, 3);
  assert.equal(dry.freed_bytes, 100_000 + 100_001 + 100_002);
  assert.equal(v.checkpoints.list().length, 5);
  const done = v.checkpoints.prune();
  assert.equal(done.freed_bytes, dry.freed_bytes);
  assert.equal(collectGarbage(v.store).bytes_freed, dry.freed_bytes);
  assert.deepEqual(nonZero(v.checkpoints.aloneBytes()), slowAlone(v));
});
