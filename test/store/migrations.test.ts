import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { after, test } from 'node:test';
import { AvfsError } from '../../host/protocol/errors';
import { AvfsHome } from '../../host/store/home';
import { InodeStore } from '../../host/store/inodes';
import { SqliteMeta } from '../../host/store/sqlite';
import { Journal } from '../../host/store/journal';
import { MIGRATIONS } from '../../host/store/schema';
import { Vfs } from '../../host/vfs/vfs';
import { tempDir } from '../helpers';

/** A vault file as an older avfs left it: only the first `version` migrations, with some content. */
function oldVault(file: string, version: number): void {
  const db = new Database(file);
  db.pragma('auto_vacuum = INCREMENTAL');
  db.pragma('journal_mode = WAL');
  for (let v = 0; v < version; v++) db.exec(MIGRATIONS[v]!);
  db.pragma(`user_version = ${version}`);
  const inodes = new InodeStore(new SqliteMeta(db));
  inodes.initialize();
  const journal = new Journal(new SqliteMeta(db), 'cli');
  const f = inodes.create(1, 'old.txt', { mode: 0o100644, pathForErrors: '/old.txt' });
  inodes.writeAll(f.ino, Buffer.from('from an older avfs'), '/old.txt');
  journal.append('create', '/old.txt', { size: 18 });
  db.close();
}

test('opening an older vault file migrates it in place and keeps its content and journal', () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  home.ensure();
  for (const from of [1, 2]) {
    const name = `v${from}`;
    oldVault(home.vaultFile(name), from);
    const vault = home.open(name);
    try {
      assert.equal(vault.db.pragma('user_version', { simple: true }), MIGRATIONS.length);
      const vfs = new Vfs(vault);
      assert.equal(vfs.readFile('/old.txt').toString(), 'from an older avfs');
      vfs.writeFile('/new.txt', Buffer.from('after the upgrade'));
      vault.checkpoints.save({ name: 'after-upgrade' });
      const journal = vault.db.prepare('SELECT seq, op, path FROM journal ORDER BY seq').all() as Array<{ seq: number; op: string; path: string }>;
      assert.deepEqual(journal.slice(0, 2).map((j) => [j.op, j.path]), [['create', '/old.txt'], ['create', '/new.txt']]);
      assert.ok(journal[1]!.seq > journal[0]!.seq);
      assert.equal(vault.db.pragma('integrity_check', { simple: true }), 'ok');
    } finally {
      vault.close();
    }
  }
});

test('a vault file from a newer avfs is refused with a typed error, untouched', () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  home.create('future').close();
  const db = new Database(home.vaultFile('future'));
  db.pragma(`user_version = ${MIGRATIONS.length + 5}`);
  db.close();
  assert.throws(() => home.open('future'), (e: unknown) => e instanceof AvfsError && e.kind === 'StorageError' && /newer/.test(e.message));
  const check = new Database(home.vaultFile('future'));
  assert.equal(check.pragma('user_version', { simple: true }), MIGRATIONS.length + 5);
  check.close();
});
