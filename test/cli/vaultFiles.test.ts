/**
 * Vault files that are damaged, foreign, from another avfs version or read-only on disk, as a
 * user meets them through the CLI: the others keep working, reads never change a file, and
 * writes that the OS refuses are ReadOnly.
 */
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { InodeStore } from '../../host/store/inodes';
import { SqliteMeta } from '../../host/store/sqlite';
import { MIGRATIONS } from '../../host/store/schema';
import { runCli, runJson, tempDir, unprivileged } from '../helpers';

type Summary = { name: string; status: string; reason?: string; size?: number; parent?: string | null };

function home(): { dir: string; json: (args: string[], input?: string | Buffer) => ReturnType<typeof runJson>; file: (v: string) => string } {
  const t = tempDir();
  after(t.cleanup);
  return {
    dir: t.dir,
    json: (args, input) => runJson(args, { home: t.dir, ...(input !== undefined ? { input } : {}) }),
    file: (v) => join(t.dir, 'vaults', `${v}.avfs`),
  };
}

/** Vault `big` (2 MB), and beside it a truncated copy of it, a file that is not SQLite and an empty file. */
async function addBadFiles(h: ReturnType<typeof home>): Promise<void> {
    await h.json(['vault', 'create', 'big', '--no-use']);
    await h.json(['--vault', 'big', 'write', '/r'], Buffer.alloc(2_000_000, 2));
    fs.writeFileSync(h.file('trunc'), fs.readFileSync(h.file('big')).subarray(0, 100_000));
    fs.writeFileSync(h.file('garbage'), 'this is not a database\n');
    fs.writeFileSync(h.file('empty'), '');
}

describe('unreadable vault files do not take the others down', () => {
  test('vault list flags each bad file with its reason and lists the rest', async () => {
    const h = home();
    await h.json(['vault', 'create', 'good']);
    await h.json(['write', '/blob'], Buffer.alloc(300_000, 1));
    await h.json(['vault', 'fork', 'good', 'kid']);
    await addBadFiles(h);
    await h.json(['vault', 'create', 'newer', '--no-use']);
    const db = new Database(h.file('newer'));
    db.pragma(`user_version = ${MIGRATIONS.length + 7}`);
    db.close();

    const list = await h.json(['vault', 'list']);
    assert.equal(list.code, 0, JSON.stringify(list.json));
    const byName = new Map((list.json.vaults as Summary[]).map((v) => [v.name, v]));
    assert.deepEqual([...byName.keys()], ['big', 'empty', 'garbage', 'good', 'kid', 'newer', 'trunc']);
    for (const ok of ['big', 'good', 'kid']) assert.equal(byName.get(ok)!.status, 'ok', ok);
    assert.equal(byName.get('kid')!.parent, 'good');
    assert.equal(byName.get('good')!.size, 300_000);
    const reasons: Record<string, RegExp> = { trunc: /truncated/, garbage: /not a SQLite database/, empty: /empty/, newer: /newer/ };
    for (const [name, re] of Object.entries(reasons)) {
      const v = byName.get(name)!;
      assert.equal(v.status, 'unreadable', name);
      assert.match(v.reason!, re, name);
    }
    const human = await runCli(['vault', 'list'], { home: h.dir });
    assert.equal(human.code, 0);
    assert.match(human.stdout, /garbage\s+unreadable/);

    for (const name of Object.keys(reasons)) {
      const info = await h.json(['vault', 'info', name]);
      assert.deepEqual([info.json.error, info.code], ['StorageError', ERROR_TABLE.StorageError.exit], name);
    }
  });

  test('gc and delete of the other vaults work; the bad files can be deleted', async () => {
    const h = home();
    await h.json(['vault', 'create', 'good']);
    await h.json(['write', '/blob'], Buffer.alloc(300_000, 1));
    await h.json(['vault', 'fork', 'good', 'kid']);
    await h.json(['rm', '/blob']);
    await addBadFiles(h);

    const gc = await h.json(['gc']);
    assert.equal(gc.code, 0, JSON.stringify(gc.json));
    assert.equal(gc.json.orphans_deleted, 0, 'the fork still reads the blob, so gc keeps it');
    assert.equal((await runCli(['--vault', 'kid', 'cat', '/blob'], { home: h.dir })).stdoutBytes.length, 300_000);
    assert.equal((await h.json(['--vault', 'kid', 'gc'])).code, 0);
    assert.equal((await h.json(['vault', 'delete', 'big', '--yes'])).code, 0, 'deleting another vault is unaffected');

    for (const bad of ['trunc', 'garbage', 'empty']) {
      const d = await h.json(['vault', 'delete', bad, '--yes']);
      assert.deepEqual([d.code, d.json.deleted], [0, bad], JSON.stringify(d.json));
      assert.equal(fs.existsSync(h.file(bad)), false);
    }
    assert.deepEqual(((await h.json(['vault', 'list'])).json.vaults as Summary[]).map((v) => v.name), ['good', 'kid']);
  });

  test('a fork that becomes unreadable stops its parent\'s gc and delete instead of freeing what it may need', async () => {
    const h = home();
    await h.json(['vault', 'create', 'p']);
    await h.json(['write', '/blob'], Buffer.alloc(300_000, 3));
    await h.json(['vault', 'fork', 'p', 'f']);
    await h.json(['vault', 'create', 'other', '--no-use']);
    await h.json(['rm', '/blob']);
    fs.writeFileSync(h.file('f'), 'overwritten');

    const gc = await h.json(['gc']);
    assert.deepEqual([gc.json.error, gc.code], ['StorageError', ERROR_TABLE.StorageError.exit]);
    assert.equal(gc.json.vault, 'f');
    assert.match(gc.json.message as string, /might be a fork of p/);
    assert.ok((await h.json(['stats'])).json.content_chunks as number > 0, 'no chunk was freed');
    assert.equal((await h.json(['vault', 'delete', 'p', '--yes'])).json.error, 'StorageError');
    assert.equal((await h.json(['--vault', 'other', 'gc'])).code, 0, 'a vault that never forked is not held up');
  });

  test('a vault from before fork records fails closed when another vault is unreadable, unless that file holds no tree', async () => {
    const h = home();
    await h.json(['vault', 'create', 'old']);
    const db = new Database(h.file('old'));
    db.prepare("DELETE FROM meta WHERE key = 'forks_recorded'").run();
    db.close();
    await h.json(['vault', 'create', 'big', '--no-use']);
    await h.json(['--vault', 'big', 'write', '/r'], Buffer.alloc(2_000_000, 2));
    fs.writeFileSync(h.file('garbage'), 'this is not a database\n');
    assert.equal((await h.json(['--vault', 'old', 'gc'])).code, 0, 'a file with no tree references nothing');
    fs.writeFileSync(h.file('trunc'), fs.readFileSync(h.file('big')).subarray(0, 100_000));
    const gc = await h.json(['--vault', 'old', 'gc']);
    assert.deepEqual([gc.json.error, gc.json.vault], ['StorageError', 'trunc']);
  });
});

describe('read-only commands never change a vault file', () => {
  test('an empty file is never initialised, by reads or writes', async () => {
    const h = home();
    await h.json(['vault', 'create', 'real']);
    fs.writeFileSync(h.file('empty'), '');
    for (const args of [['vault', 'info', 'empty'], ['--vault', 'empty', 'ls'], ['--vault', 'empty', 'stats'], ['--vault', 'empty', 'write', '/x', 'y']]) {
      const r = await h.json(args);
      assert.equal(r.json.error, 'StorageError', args.join(' '));
      assert.equal(fs.statSync(h.file('empty')).size, 0, `${args.join(' ')} left the file empty`);
    }
  });

  test('an older vault is read by list and info without being migrated; reads ask for an upgrade; upgrade migrates', async () => {
    const h = home();
    await h.json(['vault', 'create', 'real']);
    fs.mkdirSync(join(h.dir, 'vaults'), { recursive: true });
    const db = new Database(h.file('v1'));
    db.pragma('journal_mode = WAL');
    db.exec(MIGRATIONS[0]!);
    db.pragma('user_version = 1');
    const inodes = new InodeStore(new SqliteMeta(db));
    inodes.initialize();
    const f = inodes.create(1, 'old.txt', { mode: 0o100644, pathForErrors: '/old.txt' });
    inodes.writeAll(f.ino, Buffer.from('from an older avfs'), '/old.txt');
    db.close();
    const before = fs.readFileSync(h.file('v1'));
    const version = () => {
      const d = new Database(h.file('v1'), { readonly: true });
      try {
        return d.pragma('user_version', { simple: true });
      } finally {
        d.close();
      }
    };

    const v1 = ((await h.json(['vault', 'list'])).json.vaults as Summary[]).find((v) => v.name === 'v1');
    assert.deepEqual([v1?.status, v1?.size, v1?.parent], ['ok', 18, null]);
    const info = await h.json(['vault', 'info', 'v1']);
    assert.deepEqual([info.code, info.json.schema_version, info.json.checkpoints], [0, 1, []]);
    const cat = await h.json(['--vault', 'v1', 'cat', '/old.txt']);
    assert.equal(cat.json.error, 'StorageError');
    assert.match(cat.json.message as string, /avfs vault upgrade/);
    assert.equal(version(), 1, 'no read migrated it');
    assert.ok(fs.readFileSync(h.file('v1')).equals(before), 'no read changed a byte');

    const up = await h.json(['vault', 'upgrade', 'v1']);
    assert.deepEqual(up.json, { vault: 'v1', from: 1, to: MIGRATIONS.length, upgraded: true });
    assert.equal(version(), MIGRATIONS.length);
    assert.equal((await h.json(['--vault', 'v1', 'cat', '/old.txt'])).json.content, 'from an older avfs');
    assert.equal((await h.json(['vault', 'upgrade', 'v1'])).json.upgraded, false);
  });
});

describe('a vault read-only on disk', () => {
  const { user, own } = unprivileged();

  /** A home holding vault `ro` with /a.txt, handed to the unprivileged user. */
  async function setup() {
    const t = tempDir();
    after(t.cleanup);
    const tmp = join(t.dir, 'tmp');
    await runJson(['vault', 'create', 'ro'], { home: t.dir });
    await runJson(['write', '/a.txt', 'hello'], { home: t.dir });
    fs.mkdirSync(tmp);
    own(t.dir);
    const as = (args: string[]) => runJson(args, { home: t.dir, ...(user ? { user } : {}), env: { TMPDIR: tmp } });
    return { as, tmp, vaults: join(t.dir, 'vaults'), file: join(t.dir, 'vaults', 'ro.avfs') };
  }

  async function expectReadsWork(as: (args: string[]) => ReturnType<typeof runJson>): Promise<void> {
    const cat = await as(['cat', '/a.txt']);
    assert.deepEqual([cat.code, cat.json.content], [0, 'hello'], JSON.stringify(cat.json));
    assert.equal((await as(['ls'])).code, 0);
    assert.equal((await as(['checkpoint', 'list'])).code, 0);
    assert.equal(((await as(['vault', 'list'])).json.vaults as Summary[])[0]!.status, 'ok');
    assert.equal((await as(['vault', 'info', 'ro'])).json.name, 'ro');
  }

  async function expectWritesReadOnly(as: (args: string[]) => ReturnType<typeof runJson>, cases: string[][]): Promise<void> {
    for (const args of cases) {
      const r = await as(args);
      assert.deepEqual([r.json.error, r.code], ['ReadOnly', ERROR_TABLE.ReadOnly.exit], `${args.join(' ')}: ${JSON.stringify(r.json)}`);
    }
    assert.equal((await as(['cat', '/a.txt'])).json.content, 'hello', 'nothing changed');
  }

  test('the file read-only: reads work, every kind of write is ReadOnly', async () => {
    const s = await setup();
    fs.chmodSync(s.file, 0o444);
    await expectReadsWork(s.as);
    await expectWritesReadOnly(s.as, [['write', '/b.txt', 'x'], ['mkdir', '/d'], ['rm', '/a.txt'], ['checkpoint', 'save', 'c'], ['quota', 'set', 'max_files', '9'], ['gc']]);
  });

  test('the vaults directory read-only (no -wal or -shm beside the file): reads work from a private copy, writes are ReadOnly', async () => {
    const s = await setup();
    assert.equal(fs.existsSync(s.file + '-wal') || fs.existsSync(s.file + '-shm'), false, 'the last writer removed the WAL on close');
    fs.chmodSync(s.vaults, 0o555);
    try {
      await expectReadsWork(s.as);
      await expectWritesReadOnly(s.as, [['write', '/b.txt', 'x'], ['checkpoint', 'save', 'c'], ['vault', 'create', 'another'], ['vault', 'delete', 'ro', '--yes']]);
      assert.deepEqual(fs.readdirSync(s.tmp), [], 'the private copies are removed');
    } finally {
      fs.chmodSync(s.vaults, 0o755);
    }
  });
});

describe('entries that are not vault files in a vault\'s place', () => {
  test('a directory, a FIFO and symlinks to nothing or to a directory are unreadable vaults: listed, refused, deletable, never followed', { timeout: 60_000 }, async () => {
    const h = home();
    await h.json(['vault', 'create', 'good']);
    await h.json(['write', '/keep.txt', 'kept']);
    const outside = join(h.dir, 'outside');
    fs.mkdirSync(outside);
    fs.writeFileSync(join(outside, 'mine.txt'), 'not avfs data');
    fs.mkdirSync(h.file('dir'));
    fs.writeFileSync(join(h.file('dir'), 'junk'), 'user data');
    spawnSync('mkfifo', [h.file('fifo')]);
    fs.symlinkSync(join(h.dir, 'nowhere.avfs'), h.file('dangling'));
    fs.symlinkSync(outside, h.file('todir'));
    const why = { dir: 'a directory', fifo: 'a FIFO', dangling: 'which is missing', todir: 'a directory' };

    const list = (await h.json(['vault', 'list'])).json.vaults as Summary[];
    for (const [name, reason] of Object.entries(why)) {
      const s = list.find((v) => v.name === name);
      assert.equal(s?.status, 'unreadable', name);
      assert.match(s?.reason ?? '', new RegExp(reason), name);
      for (const args of [['ls', '/'], ['write', '/x', 'x'], ['vault', 'info', name]]) {
        const r = await h.json(['--vault', name, ...args]);
        assert.deepEqual([r.json.error, r.code], ['StorageError', ERROR_TABLE.StorageError.exit], `${name} ${args.join(' ')}: ${JSON.stringify(r.json)}`);
      }
    }
    assert.equal((await h.json(['vault', 'create', 'dangling'])).json.error, 'VaultExists', 'a dangling symlink holds its name');
    assert.equal((await h.json(['gc'])).code, 0, 'the good vault\'s gc is not stopped by them');

    const r = await h.json(['vault', 'delete', '-y', 'dir']);
    assert.deepEqual([r.json.error, r.code], ['NotSupported', ERROR_TABLE.NotSupported.exit], JSON.stringify(r.json));
    assert.equal(fs.readFileSync(join(h.file('dir'), 'junk'), 'utf8'), 'user data', 'what the directory holds is kept');
    fs.rmSync(join(h.file('dir'), 'junk'));
    for (const name of Object.keys(why)) assert.equal((await h.json(['vault', 'delete', '-y', name])).code, 0, name);
    assert.deepEqual(fs.readdirSync(outside), ['mine.txt'], 'a symlink is removed, never what it points to');
    assert.deepEqual(((await h.json(['vault', 'list'])).json.vaults as Summary[]).map((v) => v.name), ['good']);
    assert.equal((await h.json(['cat', '/keep.txt'])).json.content, 'kept');
  });
});
