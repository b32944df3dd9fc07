import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { collectGarbage } from '../../host/store/gc';
import { tempVault } from '../helpers';

const MiB = 1024 * 1024;
const stored = (db: import('better-sqlite3').Database) =>
  (db.prepare('SELECT COALESCE(SUM(LENGTH(data)), 0) AS n FROM chunks').get() as { n: number }).n;

test('a one-byte edit of a large file stores about one chunk, not the file again', () => {
  const t = tempVault();
  after(t.cleanup);
  const { vfs } = t;
  const data = randomBytes(64 * MiB);
  vfs.writeFile('/big.bin', data);
  const s1 = stored(vfs.vault.db);
  assert.ok(s1 >= 64 * MiB && s1 < 65 * MiB, `first write stores the bytes once (${s1})`);

  // The whole file written again with one byte changed, as an editor or the CLI would.
  data.writeUInt8(data.readUInt8(40 * MiB + 3) ^ 0xff, 40 * MiB + 3);
  vfs.writeFile('/big.bin', data);
  const growth = stored(vfs.vault.db) - s1;
  assert.ok(growth <= 64 * 1024, `growth after a 1-byte edit is at most one chunk, was ${growth} bytes`);
  assert.deepEqual(vfs.readFile('/big.bin'), data);

  // Identical content under another name is stored once.
  vfs.writeFile('/copy.bin', data);
  assert.equal(stored(vfs.vault.db) - s1, growth);

  // The replaced chunk is garbage until gc reclaims it.
  const gc = collectGarbage(vfs.vault.store);
  assert.equal(gc.orphans_deleted, 1);
  assert.deepEqual(vfs.readFile('/big.bin'), data);
  assert.deepEqual(vfs.readFile('/copy.bin'), data);
  vfs.rm('/big.bin');
  vfs.rm('/copy.bin');
  const gc2 = collectGarbage(vfs.vault.store);
  assert.equal(stored(vfs.vault.db), 0);
  assert.ok(gc2.bytes_freed >= 64 * MiB);
  assert.equal(vfs.vault.db.pragma('integrity_check', { simple: true }), 'ok');
});
