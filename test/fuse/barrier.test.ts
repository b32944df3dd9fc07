/**
 * The mount's write barrier: an fsync of the mount root returns only once every write the server
 * has received is committed to the vault, so a reader of the vault file (not the mount) sees it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fuseMissing, type MountFixture, mountFixture, waitFor } from './helpers';

describe('mount write barrier (fsync of the mount root)', { skip: fuseMissing }, () => {
  let m: MountFixture;
  before(async () => {
    m = await mountFixture();
  });
  after(async () => {
    await m.cleanup();
  });

  test('writes held in an open handle reach the vault once the root is fsynced', async () => {
    // A writer that keeps its file open: its bytes sit in the server's handle buffer, uncommitted.
    const writer = spawn('python3', ['-c', "import sys,time\nf=open('held.txt','w')\nf.write('x'*1000)\nf.flush()\nprint('written',flush=True)\ntime.sleep(30)"], {
      cwd: m.mnt,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      let out = '';
      writer.stdout.on('data', (d: Buffer) => (out += d.toString()));
      assert.ok(await waitFor(() => out.includes('written'), 10_000), 'the writer wrote');
      const before = await m.cli(['cat', '/held.txt', '--vault', m.vault]);
      assert.notEqual(before.json.size ?? (before.json.content as string | undefined)?.length, 1000, 'without the barrier the vault does not have the bytes yet');
      const root = await open(m.mnt, 'r');
      await root.sync();
      await root.close();
      const after = await m.cli(['stat', '/held.txt', '--vault', m.vault]);
      assert.equal(after.code, 0);
      assert.equal(after.json.size, 1000, 'after the barrier the vault file holds every byte written');
    } finally {
      writer.kill('SIGKILL');
    }
  });

  test('the barrier answers on an idle mount and on a subdirectory', async () => {
    await (await open(m.mnt, 'r')).close();
    const fh = await open(m.mnt, 'r');
    await fh.sync();
    await fh.close();
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(m.mnt, 'sub'));
    const sub = await open(join(m.mnt, 'sub'), 'r');
    await sub.sync();
    await sub.close();
  });
});
