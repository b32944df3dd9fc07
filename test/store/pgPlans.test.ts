/**
 * The PostgreSQL store's lookups stay index descents on a vault no ANALYZE has seen: a new vault
 * filled in one transaction (an import, the bench's 50,000 files), where the planner's guess for
 * `vault = V AND tree = T` is about one row. Measured on the server: the tuples its index scans
 * fetched (pg_stat_user_tables), which grow with the files written when every lookup is a descent
 * and with their square when a lookup walks the tree.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AvfsHome } from '../../host/store/home';
import { Vfs } from '../../host/vfs/vfs';
import { tempDir } from '../helpers';
import { startCluster } from '../../scripts/pgcluster.mjs';

const N = 3000;
let cluster: ReturnType<typeof startCluster>;
const t = tempDir('avfs-pg-plans-');

before(() => {
  cluster = startCluster();
});
after(() => {
  cluster?.destroy();
  t.cleanup();
});

/** Tuples fetched by index scans and read by sequential scans of the vault's tables, by table. */
function scanned(): Map<string, { idx: number; seq: number }> {
  const out = new Map<string, { idx: number; seq: number }>();
  const rows = cluster.psql(`SELECT relname, COALESCE(idx_tup_fetch, 0), seq_tup_read FROM pg_stat_user_tables WHERE schemaname = 'avfs'`);
  for (const line of rows.trim().split('\n')) {
    const [name, idx, seq] = line.split('|');
    out.set(name!, { idx: Number(idx), seq: Number(seq) });
  }
  return out;
}

test(`${N} files written in one transaction into a new vault, then read: each lookup fetches a few rows, not the tree`, async () => {
  const home = new AvfsHome(join(t.dir, 'home'));
  const v = home.create('plans', {}, 'postgres', { url: cluster.url });
  const vfs = new Vfs(v);
  vfs.mutate('/', () => {
    for (let i = 0; i < N; i++) {
      if (i % 100 === 0) vfs.mkdir(`/t/d${i / 100}`, { parents: true });
      vfs.writeFile(`/t/d${Math.floor(i / 100)}/f${i}`, Buffer.from(`file ${i}\n`));
    }
  });
  v.checkpoints.save({ name: 'base' });
  for (let i = 0; i < N; i += 7) assert.equal(vfs.readFile(`/t/d${Math.floor(i / 100)}/f${i}`).toString(), `file ${i}\n`);
  assert.equal(vfs.readdir('/t/d3').length, 100);
  assert.equal(v.checkpoints.restore('base').checkpoint.name, 'base');
  v.close();
  // The writer's session has ended: its counters reach the server's views within a second or so.
  const deadline = Date.now() + 10_000;
  let s = scanned();
  while (Date.now() < deadline && (s.get('dentries')?.idx ?? 0) === 0) {
    await new Promise((r) => setTimeout(r, 200));
    s = scanned();
  }
  const dentries = s.get('dentries')!;
  const inodes = s.get('inodes')!;
  assert.ok(dentries.idx > 0 && inodes.idx > 0, `the server counted the lookups: ${JSON.stringify([...s])}`);
  // About 3 lookups a file written, 2 a file read, a few rows each, and the checkpoint's copies of
  // N rows: tens of rows a file. A lookup that walks the tree fetches ~N rows: ~N² in all.
  for (const [name, c] of s) assert.ok(c.idx < 40 * N, `${name}: ${c.idx} rows fetched by index scans for ${N} files`);
});
