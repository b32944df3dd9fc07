/**
 * Chunks are checked against their SHA-256 on read, once per chunk per process (host/store/chunks.ts):
 * a chunk read again is not hashed again, yet bytes changed on disk by another connection after
 * the first read are still never served.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, test } from 'node:test';
import Database from 'better-sqlite3';
import { tempVault } from '../helpers';

test('a chunk read before is still checked after another connection changes it: StorageError, the vault marked, the rest read on', () => {
  const t = tempVault('test', 'sqlite');
  after(t.cleanup);
  const { vfs } = t;
  const a = Buffer.alloc(100_000, 'a');
  vfs.writeFile('/a', a);
  vfs.writeFile('/b', Buffer.from('bee'));
  // Read twice: verified, then served from the verified set.
  assert.deepEqual(vfs.readFile('/a'), a);
  assert.deepEqual(vfs.readFile('/a'), a);

  const other = new Database(t.vault.file);
  const first = createHash('sha256').update(a.subarray(0, 64 * 1024)).digest();
  assert.equal(other.prepare('UPDATE chunks SET data = zeroblob(length(data)) WHERE hash = ?').run(first).changes, 1);
  other.close();

  assert.throws(() => vfs.readFile('/a'), (e: { kind?: string; message: string }) => e.kind === 'StorageError' && /does not match its SHA-256/.test(e.message));
  assert.equal(vfs.readFile('/b').toString(), 'bee');
  assert.match(t.vault.meta('damaged') ?? '', new RegExp(`chunk ${first.toString('hex')} does not match`));
});
