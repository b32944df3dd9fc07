import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { runCli, runJson, tempDir } from '../helpers';

function freshHome() {
  const t = tempDir();
  after(t.cleanup);
  const json = (args: string[], input?: string | Buffer) => runJson(args, { home: t.dir, ...(input !== undefined ? { input } : {}) });
  const cli = (args: string[], input?: string | Buffer) => runCli(args, { home: t.dir, ...(input !== undefined ? { input } : {}) });
  const file = (name: string) => join(t.dir, 'vaults', `${name}.avfs`);
  return { dir: t.dir, json, cli, file };
}

const head = (file: string, n: number) => readFileSync(file).subarray(0, n);
const isSqlite = (file: string) => head(file, 16).toString('latin1') === 'SQLite format 3\0';
const isLmdb = (file: string) => head(file, 28).readUInt32LE(24) === 0xbeefc0de;

describe('storage backends through the CLI', () => {
  test('--backend lmdb makes a single-file LMDB vault (its lock file beside it); list and info say which backend each vault is on', async () => {
    const h = freshHome();
    assert.equal((await h.json(['vault', 'create', 'fast', '--backend', 'lmdb'])).json.backend, 'lmdb');
    assert.equal((await h.json(['vault', 'create', 'plain', '--backend', 'sqlite'])).json.backend, 'sqlite');
    assert.ok(lstatSync(h.file('fast')).isFile(), 'the vault is one file, not a directory');
    assert.ok(isLmdb(h.file('fast')));
    assert.ok(isSqlite(h.file('plain')));
    assert.deepEqual(readdirSync(join(h.dir, 'vaults')).filter((f) => f.startsWith('fast')).sort(), ['fast.avfs', 'fast.avfs-lock']);
    const list = (await h.json(['vault', 'list'])).json.vaults as Array<{ name: string; backend: string }>;
    assert.deepEqual(list.map((v) => [v.name, v.backend]), [['fast', 'lmdb'], ['plain', 'sqlite']]);
    assert.equal((await h.json(['vault', 'info', 'fast'])).json.backend, 'lmdb');
    assert.match((await h.cli(['vault', 'info', 'fast'])).stdout, /^backend\s+lmdb$/m);
    assert.match((await h.cli(['vault', 'list'])).stdout, /fast .*lmdb/);

    const bad = await h.json(['vault', 'create', 'x', '--backend', 'sled']);
    assert.equal(bad.json.error, 'InvalidInput');
    assert.equal(bad.code, ERROR_TABLE.InvalidInput.exit);
    assert.ok(!readdirSync(join(h.dir, 'vaults')).some((f) => f.startsWith('x.')), 'nothing is left of a refused create');

    // Deleting an LMDB vault removes its lock file too.
    await h.json(['vault', 'delete', 'fast', '--yes']);
    assert.deepEqual(readdirSync(join(h.dir, 'vaults')).filter((f) => f.startsWith('fast')), []);
  });

  test('an LMDB vault grows past any fixed map size, reads back exactly, and keeps quotas as SQLite does', async () => {
    const h = freshHome();
    await h.json(['vault', 'create', 'big', '--backend', 'lmdb']);
    const host = tempDir();
    after(host.cleanup);
    const data = randomBytes(96 * 1024 * 1024);
    writeFileSync(join(host.dir, 'big.bin'), data);
    const imp = await h.json(['import', host.dir, '/in']);
    assert.equal(imp.code, 0, imp.stderr);
    const back = await h.cli(['cat', '/in/big.bin']);
    assert.equal(createHash('sha256').update(back.stdoutBytes).digest('hex'), createHash('sha256').update(data).digest('hex'));

    await h.json(['quota', 'set', 'max_size_mb', '100']);
    const more = tempDir();
    after(more.cleanup);
    writeFileSync(join(more.dir, 'more.bin'), randomBytes(8 * 1024 * 1024));
    const refused = await h.json(['import', join(more.dir, 'more.bin'), '/more.bin']);
    assert.equal(refused.json.error, 'QuotaExceeded');
    assert.equal(refused.code, ERROR_TABLE.QuotaExceeded.exit);
    assert.equal((await h.json(['stat', '/more.bin'])).json.error, 'NotFound', 'a refused write leaves nothing');
  });

  test('a fork is on its source\'s backend; vault convert copies a vault with its checkpoints, verifies it, and both ways read the same', async () => {
    const h = freshHome();
    await h.json(['vault', 'create', 'src', '--backend', 'lmdb']);
    await h.json(['write', '-p', '/app/main.py', 'print(1)\n']);
    await h.cli(['ln', '-s', 'main.py', '/app/link']);
    await h.json(['checkpoint', 'save', 'one']);
    await h.json(['write', '/app/main.py', 'print(2)\n']);
    await h.json(['mkdir', '/empty']);

    const fork = await h.json(['vault', 'fork', 'src', 'task']);
    assert.equal(fork.json.backend, 'lmdb');
    assert.ok(isLmdb(h.file('task')));

    const toSqlite = await h.json(['vault', 'convert', 'src', '--backend', 'sqlite']);
    assert.equal(toSqlite.code, 0, toSqlite.stderr);
    assert.deepEqual([toSqlite.json.from, toSqlite.json.to, toSqlite.json.verified, toSqlite.json.checkpoints], ['lmdb', 'sqlite', true, 1]);
    assert.ok(isSqlite(h.file('src')));
    assert.equal((await h.json(['vault', 'info', 'src'])).json.backend, 'sqlite');
    assert.equal((await h.cli(['--vault', 'src', 'cat', '/app/main.py'])).stdout, 'print(2)\n');
    assert.equal((await h.json(['--vault', 'src', 'stat', '/app/link'])).json.target, 'main.py');
    // The fork still reads the chunks it shares with its (now SQLite) parent.
    assert.equal((await h.cli(['--vault', 'task', 'cat', '/app/main.py'])).stdout, 'print(2)\n');

    const diff = await h.json(['--vault', 'src', 'checkpoint', 'diff', 'one']);
    assert.deepEqual((diff.json.modified as Array<{ path: string }>).map((e) => e.path), ['/app/main.py']);
    assert.deepEqual((diff.json.added as Array<{ path: string }>).map((e) => e.path), ['/empty']);

    const back = await h.json(['vault', 'convert', 'src', '--backend', 'lmdb']);
    assert.deepEqual([back.json.from, back.json.to, back.json.verified], ['sqlite', 'lmdb', true]);
    assert.ok(isLmdb(h.file('src')));
    await h.json(['--vault', 'src', 'checkpoint', 'restore', 'one']);
    assert.equal((await h.cli(['--vault', 'src', 'cat', '/app/main.py'])).stdout, 'print(1)\n');
    const audit = (await h.json(['--vault', 'src', 'audit'])).json.entries as Array<{ operation: string }>;
    assert.ok(audit.some((e) => e.operation === 'checkpoint_save'), 'the journal came along');

    const same = await h.json(['vault', 'convert', 'src', '--backend', 'lmdb']);
    assert.equal(same.json.error, 'InvalidInput');
  });
});
