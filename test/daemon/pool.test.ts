/**
 * Long operations do not stall the host's other clients: while one client's diff of a 50,000-file
 * vault (or its gc) runs on one of the host's operation threads, another client's fs/stat is
 * answered by another thread. Asserted by the order in which the answers arrive, not by time.
 * A small file's read is answered on the host's own thread even while every thread is busy; a
 * large file's waits for a thread.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HostConnection } from '../../host/daemon/client';
import { INLINE_READ_BYTES } from '../../host/daemon/pool';
import { Vfs } from '../../host/vfs/vfs';
import { tempVault } from '../helpers';
import { client, type HostProcess, startHost } from './helpers';

describe('the host\'s operation threads', () => {
  const t = tempVault('big');
  let host: HostProcess;
  let slow: HostConnection;
  let quick: HostConnection;

  before(async () => {
    // 50 directories of 1,000 files, a checkpoint, then 1,000 of them changed: a diff walks both trees whole.
    const vfs = new Vfs(t.vault);
    vfs.mutate('/', () => {
      for (let d = 0; d < 50; d++) {
        vfs.mkdir(`/d${d}`);
        for (let i = 0; i < 1000; i++) vfs.writeFile(`/d${d}/f${i}.txt`, Buffer.from(`file ${d} ${i}\n`));
      }
    });
    t.vault.checkpoints.save({ name: 'a' });
    vfs.mutate('/', () => {
      for (let i = 0; i < 1000; i++) vfs.writeFile(`/d0/f${i}.txt`, Buffer.from(`changed ${i}\n`));
      for (let i = 0; i < 1000; i++) vfs.rm(`/d1/f${i}.txt`);
    });
    t.vault.close();
    host = await startHost(t.dir);
    slow = await client(t.dir, { name: 'slow client' });
    quick = await client(t.dir, { name: 'quick client' });
  });
  after(async () => {
    slow.close();
    quick.close();
    await host.stop();
    t.cleanup();
  });

  /**
   * Starts `long` and, until it is answered, has the other client stat a file again and again:
   * returns how many of those stats were answered before `long` was. A host that ran both on one
   * thread would answer at most the one stat that came in before `long` started.
   */
  async function statsDuring(long: () => Promise<unknown>): Promise<number> {
    let done = false;
    let answered = 0;
    const longDone = long().then(() => (done = true));
    while (!done) {
      const st = await quick.call('fs/stat', { vault: 'big', path: '/d2/f7.txt' });
      assert.equal(st.size, 'file 2 7\n'.length);
      if (!done) answered++;
    }
    await longDone;
    return answered;
  }

  test('a diff of 50,000 files does not hold up another client\'s stat', async () => {
    let summary: { totals: { modified: number; deleted: number } } | undefined;
    const stats = await statsDuring(async () => (summary = await slow.call('checkpoint/diff', { vault: 'big', from: 'a', patch: true })));
    assert.ok(stats >= 5, `only ${stats} stats were answered while the diff ran`);
    assert.equal(summary?.totals.modified, 1000);
    assert.equal(summary?.totals.deleted, 1000);
  });

  test('with both threads busy, a small file is read at once; a large one waits for a thread', async () => {
    const third = await client(t.dir, { name: 'third client' });
    try {
      await quick.call('fs/writeFile', { vault: 'big', path: '/small.txt', data: Buffer.from('small\n').toString('base64') });
      // Order is seen from the clients: a diff's answer (its patches) takes the client a while to
      // take in, so the large read is made large enough that its own answer cannot overtake the
      // first diff's once the read has waited for that diff's thread.
      const LARGE = 8 * 1024 * 1024;
      assert.ok(LARGE > INLINE_READ_BYTES);
      await quick.call('fs/writeFile', { vault: 'big', path: '/large.txt', data: Buffer.alloc(LARGE, 'x').toString('base64') });
      const order: string[] = [];
      const diffs = [slow, third].map((c) => c.call('checkpoint/diff', { vault: 'big', from: 'a', patch: true }).then(() => order.push('diff')));
      // Both diffs (seconds each) have reached the two threads before the reads are sent.
      await new Promise((r) => setTimeout(r, 300));
      const small = quick.call('fs/readText', { vault: 'big', path: '/small.txt' }).then((f) => (order.push('small'), f));
      const large = quick.call('fs/readText', { vault: 'big', path: '/large.txt' }).then((f) => (order.push('large'), f));
      assert.equal((await small).content, 'small\n');
      assert.equal((await large).size, LARGE);
      await Promise.all(diffs);
      assert.equal(order[0], 'small', order.join(' '));
      assert.ok(order.indexOf('large') > order.indexOf('diff'), `the large read waited for a thread: ${order.join(' ')}`);
    } finally {
      third.close();
    }
  });

  test('nor does a gc, or a checkpoint of the whole tree', async () => {
    await slow.call('checkpoint/delete', { vault: 'big', name: 'a' });
    const duringGc = await statsDuring(() => slow.call('vault/gc', { vault: 'big' }));
    assert.ok(duringGc >= 5, `only ${duringGc} stats were answered while the gc ran`);
    const duringSaves = await statsDuring(async () => {
      for (let i = 0; i < 5; i++) await slow.call('checkpoint/save', { vault: 'big' });
    });
    assert.ok(duringSaves >= 5, `only ${duringSaves} stats were answered while five checkpoints were saved`);
  });
});
