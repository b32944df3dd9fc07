/**
 * InodeStore.createMany (a working copy's commit-back): a batch of creates leaves the vault as the
 * same creates one by one do (entries, modes, link counts, contents, targets, counters, parents'
 * times and set-group-ID inheritance), with one quota check for the batch; on the SQLite backend's
 * bulk call and on the per-row calls a backend without it gets.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, test } from 'node:test';
import { AvfsError } from '../../host/protocol/errors';
import { LIVE, type MetaStore } from '../../host/store/backend';
import { type BatchEntry, S_IFDIR, S_IFLNK, S_IFREG } from '../../host/store/inodes';
import { CHUNK_SIZE, ROOT_INO } from '../../host/store/schema';
import type { Vfs } from '../../host/vfs/vfs';
import { tempVault } from '../helpers';

const big = randomBytes(CHUNK_SIZE * 2 + 77);

/** A tree of every kind: nested new directories, small and multi-chunk files, a symlink, hard links within the batch and to a file the vault had. */
function batch(existingFile: number, setgidDir: number): BatchEntry[] {
  return [
    { parent: { ino: ROOT_INO }, name: 'd', mode: S_IFDIR | 0o750, pathForErrors: '/d' },
    { parent: { entry: 0 }, name: 'e', mode: S_IFDIR | 0o755, pathForErrors: '/d/e' },
    { parent: { entry: 1 }, name: 'small.txt', mode: S_IFREG | 0o640, data: Buffer.from('hello\n'), mtime: 1_600_000_000_123_456_789n, pathForErrors: '/d/e/small.txt' },
    { parent: { entry: 0 }, name: 'big.bin', mode: S_IFREG | 0o755, data: big, pathForErrors: '/d/big.bin' },
    { parent: { entry: 0 }, name: 'empty', mode: S_IFREG | 0o644, data: Buffer.alloc(0), pathForErrors: '/d/empty' },
    { parent: { entry: 0 }, name: 'link', mode: S_IFLNK | 0o777, target: 'e/small.txt', pathForErrors: '/d/link' },
    { parent: { ino: ROOT_INO }, name: 'twin', mode: 0, link: { entry: 2 }, pathForErrors: '/twin' },
    { parent: { entry: 1 }, name: 'old-twin', mode: 0, link: { ino: existingFile }, pathForErrors: '/d/e/old-twin' },
    { parent: { ino: setgidDir }, name: 'sub', mode: S_IFDIR | 0o755, pathForErrors: '/shared/sub' },
    { parent: { entry: 8 }, name: 'f', mode: S_IFREG | 0o644, data: Buffer.from('f'), pathForErrors: '/shared/sub/f' },
  ];
}

/** What a user sees of the tree: every path with its type, mode, link count, size, content or target. */
function view(vfs: Vfs): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const { name } of vfs.readdir(dir)) {
      const p = `${dir === '/' ? '' : dir}/${name}`;
      const st = vfs.stat(p, false);
      const what = st.type === 'file' ? vfs.readFile(p).toString('base64') : st.type === 'symlink' ? vfs.readlink(p) : '';
      out.push(`${p} ${st.type} ${st.mode} nlink=${st.nlink} size=${st.size} ${what}`);
      if (st.type === 'directory') walk(p);
    }
  };
  walk('/');
  return out;
}

function counters(vfs: Vfs) {
  const rows = vfs.vault.store.dumpTree(LIVE).inodes.filter((i) => i.ino !== ROOT_INO);
  return { inodes: rows.length, bytes: rows.reduce((s, i) => s + ((i.mode & 0o170000) === S_IFREG ? i.size : 0), 0) };
}

function setup(withoutBulk: boolean) {
  const t = tempVault();
  if (withoutBulk) (t.vault.store as { insertNames?: MetaStore['insertNames'] }).insertNames = undefined;
  t.vfs.writeFile('/old.txt', Buffer.from('old'));
  t.vfs.mkdir('/shared');
  t.vfs.setattr('/shared', { mode: 0o2775 }, false);
  return t;
}

for (const withoutBulk of [false, true]) {
  describe(`InodeStore.createMany${withoutBulk ? ' (a backend without the bulk call)' : ''}`, () => {
    const t = setup(withoutBulk);
    const one = setup(withoutBulk);
    after(() => {
      t.cleanup();
      one.cleanup();
    });

    test('leaves the tree, link counts, counters and parents as the same creates one by one', () => {
      const rootBefore = t.vfs.stat('/').mtime;
      const existing = t.vfs.stat('/old.txt').ino;
      const inos = t.vault.inodes.createMany(batch(existing, t.vfs.stat('/shared').ino));
      assert.equal(inos.length, 10);
      assert.equal(inos[6], inos[2], 'a hard link in the batch names its file');
      assert.equal(inos[7], existing, 'a hard link to a file the vault had names it');

      // The same, one call at a time.
      const v = one.vfs;
      v.mkdir('/d', { mode: 0o750 });
      v.mkdir('/d/e');
      v.writeFile('/d/e/small.txt', Buffer.from('hello\n'), { mode: 0o640 });
      v.writeFile('/d/big.bin', big, { mode: 0o755 });
      v.writeFile('/d/empty', Buffer.alloc(0));
      v.symlink('e/small.txt', '/d/link');
      v.link('/d/e/small.txt', '/twin');
      v.link('/old.txt', '/d/e/old-twin');
      v.mkdir('/shared/sub');
      v.writeFile('/shared/sub/f', Buffer.from('f'));

      assert.deepEqual(view(t.vfs), view(v));
      assert.deepEqual(t.vault.inodes.counters(), one.vault.inodes.counters());
      const c = counters(t.vfs);
      assert.deepEqual(t.vault.inodes.counters(), { liveInodes: c.inodes, liveBytes: c.bytes }, 'the counters are what a scan finds');
      assert.equal(t.vfs.stat('/shared/sub').mode, '02755', 'a directory made in a set-group-ID directory gets the bit');
      assert.equal(t.vfs.stat('/d/e/small.txt').mtime_ns, '1600000000123456789', 'the given modification time is kept');
      assert.ok(t.vfs.stat('/').mtime >= rootBefore, "the parent's times moved");
      assert.equal(t.vfs.stat('/').nlink, one.vfs.stat('/').nlink, "the root counts the new directory");
    });

    test('a batch past a quota is refused whole: QuotaExceeded, nothing written', () => {
      const q = t.vault.inodes.quotas;
      const before = view(t.vfs);
      const counted = t.vault.inodes.counters();
      const entries: BatchEntry[] = [
        { parent: { ino: ROOT_INO }, name: 'n', mode: S_IFDIR | 0o755, pathForErrors: '/n' },
        { parent: { entry: 0 }, name: 'a', mode: S_IFREG | 0o644, data: Buffer.alloc(600 * 1024), pathForErrors: '/n/a' },
        { parent: { entry: 0 }, name: 'b', mode: S_IFREG | 0o644, data: Buffer.alloc(600 * 1024), pathForErrors: '/n/b' },
      ];
      for (const [key, value] of [['max_files', counted.liveInodes + 2], ['max_size_mb', 1], ['max_file_size_mb', 0.5]] as const) {
        q.set(key, value);
        try {
          assert.throws(
            () => t.vault.inodes.createMany(entries),
            (e) => e instanceof AvfsError && e.kind === 'QuotaExceeded' && e.details.quota === key,
          );
        } finally {
          q.clear(key);
        }
        assert.deepEqual(view(t.vfs), before, `${key}: nothing of the batch is in the vault`);
        assert.deepEqual(t.vault.inodes.counters(), counted);
      }
    });
  });
}
