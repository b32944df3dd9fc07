import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { Vfs } from '../../host/vfs/vfs';
import { tempVault } from '../helpers';

const MiB = 1024 * 1024;

test('background checkpoints keep the WAL small under sustained writes, and lose nothing', async () => {
  const t = tempVault('bg', 'sqlite'); // SQLite's WAL
  after(t.cleanup);
  t.vault.startBackgroundCheckpoints();
  const files: Buffer[] = [];
  for (let i = 0; i < 96; i++) {
    const data = randomBytes(MiB);
    files.push(data);
    t.vfs.writeFile(`/f${i}`, data);
    if (i % 8 === 7) await sleep(60); // a writer that pauses now and then, as real ones do
  }
  const wal = statSync(t.vault.file + '-wal').size;
  // Left to its backstop alone, the WAL would hold all 96 MiB written.
  assert.ok(wal < 64 * MiB, `the WAL stayed at ${(wal / MiB).toFixed(1)} MiB`);
  t.vault.close();

  const again = new Vfs(t.home.open('bg'));
  try {
    assert.equal(again.vault.store.check(), 'ok');
    for (let i = 0; i < files.length; i += 7) assert.ok(again.readFile(`/f${i}`).equals(files[i]!), `file ${i} intact`);
  } finally {
    again.vault.close();
  }
});
