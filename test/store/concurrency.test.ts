import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { LIVE } from '../../host/store/backend';
import { AvfsHome } from '../../host/store/home';
import { Vfs } from '../../host/vfs/vfs';
import { ROOT, tempDir } from '../helpers';

const WRITER = join(ROOT, 'test/fixtures/storeWriter.ts');

function runWriter(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', WRITER, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    c.on('error', reject);
    c.on('close', (code) => resolve(code ?? -1));
  });
}

test('several processes writing one vault at once lose no write', async () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  home.create('shared').close();
  const WRITERS = 4;
  const FILES = 150;
  const codes = await Promise.all(Array.from({ length: WRITERS }, (_, id) => runWriter([t.dir, 'shared', 'files', String(id), String(FILES)])));
  assert.deepEqual(codes, Array(WRITERS).fill(0), 'every writer exits 0 (no SQLITE_BUSY surfaced)');

  const vault = home.open('shared');
  const vfs = new Vfs(vault);
  try {
    for (let id = 0; id < WRITERS; id++) {
      const names = vfs.readdir(`/w${id}`).map((e) => e.name);
      assert.equal(names.length, FILES, `writer ${id} has all its files`);
      for (let i = 0; i < FILES; i += 37) assert.equal(vfs.readFile(`/w${id}/f${i}`).toString(), `writer ${id} file ${i}\n`);
    }
    const lines = vfs.readFile('/shared.log').toString().trim().split('\n');
    assert.equal(lines.length, WRITERS * FILES, 'every append to the shared file is present');
    assert.equal(new Set(lines).size, WRITERS * FILES, 'no append was duplicated or torn');
    assert.equal(vault.store.check(), 'ok');
    const c = vfs.inodes.counters();
    const n = vault.store.dumpTree(LIVE).inodes.length;
    assert.equal(c.liveInodes, n - 1, 'counters agree with the tables');
  } finally {
    vault.close();
  }
});
