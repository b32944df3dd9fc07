import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { collectGarbage } from '../../host/store/gc';
import { AvfsHome } from '../../host/store/home';
import { Vfs } from '../../host/vfs/vfs';
import { ROOT, tempDir } from '../helpers';

// LMDB never returns pages to the file system: after a gc that freed much, the store puts a
// compacted copy in the vault file's place (host/store/lmdbSwap.ts). These vaults are LMDB ones
// whatever AVFS_TEST_BACKEND says.

const WRITER = join(ROOT, 'test/fixtures/storeWriter.ts');

function runWriter(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', WRITER, ...args], { stdio: ['ignore', 'ignore', 'inherit'] });
    c.on('error', reject);
    c.on('close', (code) => resolve(code ?? -1));
  });
}

const inode = (file: string) => statSync(file).ino;

test('LMDB: gc gives the space back (the file shrinks) and what is kept reads back, in this process and after reopening', () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  const vault = home.create('v', {}, 'lmdb');
  const vfs = new Vfs(vault);
  const file = home.vaultFile('v');
  const keep = randomBytes(300_000);
  vfs.writeFile('/keep.bin', keep);
  for (let i = 0; i < 8; i++) vfs.writeFile(`/big${i}`, randomBytes(512 * 1024));
  const big = statSync(file).size;
  for (let i = 0; i < 8; i++) vfs.rm(`/big${i}`);
  const before = inode(file);
  const gc = collectGarbage(vault.store);
  assert.equal(gc.bytes_freed, 8 * 512 * 1024);
  assert.notEqual(inode(file), before, 'a compacted copy is in the vault file’s place');
  assert.ok(statSync(file).size < big / 3, `the file shrank: ${big} → ${statSync(file).size} bytes`);
  assert.deepEqual(vfs.readFile('/keep.bin'), keep, 'the same handle reads on from the new file');
  vfs.writeFile('/after', Buffer.from('written after the swap\n'));
  assert.equal(vault.store.check(), 'ok');
  vault.close();
  const again = home.open('v');
  try {
    const v2 = new Vfs(again);
    assert.deepEqual(v2.readFile('/keep.bin'), keep);
    assert.equal(v2.readFile('/after').toString(), 'written after the swap\n');
  } finally {
    again.close();
  }
});

test('LMDB: compactions while other processes write the vault lose no write and serve no stale read', async (ctx) => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  const vault = home.create('shared', {}, 'lmdb');
  const vfs = new Vfs(vault);
  const file = home.vaultFile('shared');
  const WRITERS = 3;
  const FILES = 150;
  const writers = Promise.all(Array.from({ length: WRITERS }, (_, id) => runWriter([t.dir, 'shared', 'files', String(id), String(FILES)])));
  let running = true;
  void writers.finally(() => (running = false));
  const inodes = new Set([inode(file)]);
  let round = 0;
  try {
    // Each round stores 2 MiB nobody keeps, then collects it: each gc leaves most of the file free.
    while (running || round < 2) {
      vfs.writeFile('/scratch', randomBytes(2 * 1024 * 1024));
      vfs.rm('/scratch');
      collectGarbage(vault.store);
      inodes.add(inode(file));
      // What this process writes between swaps is seen by the next open (never left in an old file).
      vfs.writeFile(`/round${round}`, Buffer.from(`${round}\n`));
      round++;
      await new Promise((r) => setTimeout(r, 0));
    }
    const codes = await writers;
    assert.deepEqual(codes, Array(WRITERS).fill(0), 'every writer exits 0');
    ctx.diagnostic(`${inodes.size - 1} swaps in ${round} rounds`);
    assert.ok(inodes.size >= 3, `the vault was swapped for a compacted copy at least twice while the writers ran (${inodes.size - 1} times)`);
  } finally {
    vault.close();
  }

  const check = home.open('shared');
  try {
    const v = new Vfs(check);
    for (let id = 0; id < WRITERS; id++) {
      assert.equal(v.readdirNames(`/w${id}`).length, FILES, `writer ${id} has all its files`);
      for (let i = 0; i < FILES; i += 29) assert.equal(v.readFile(`/w${id}/f${i}`).toString(), `writer ${id} file ${i}\n`);
    }
    const lines = v.readFile('/shared.log').toString().trim().split('\n');
    assert.equal(lines.length, WRITERS * FILES, 'every append to the shared file is present (each append read the newest file first)');
    assert.equal(new Set(lines).size, WRITERS * FILES, 'no append was duplicated or torn');
    for (let r = 0; r < round; r++) assert.equal(v.readFile(`/round${r}`).toString(), `${r}\n`);
    assert.equal(check.store.check(), 'ok');
  } finally {
    check.close();
  }
});

test('LMDB: a compaction swap left by a process that died does not block the vault', () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  home.create('v', {}, 'lmdb').close();
  const file = home.vaultFile('v');
  // A pid that is not running: the swapper was killed mid-swap.
  writeFileSync(`${file}-swap`, '999999999');
  const started = performance.now();
  const v = home.open('v');
  try {
    assert.ok(performance.now() - started < 5000);
    new Vfs(v).writeFile('/x', Buffer.from('x'));
  } finally {
    v.close();
  }
  assert.throws(() => statSync(`${file}-swap`), /ENOENT/, 'the dead swapper’s file is removed');
});
