import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { runCli, runJson, tempDir } from '../helpers';

/** A fresh avfs home per test, so each test stands alone (and can run alone). */
function freshHome() {
  const t = tempDir();
  after(t.cleanup);
  const json = (args: string[], input?: string) => runJson(args, { home: t.dir, ...(input !== undefined ? { input } : {}) });
  const cli = (args: string[]) => runCli(args, { home: t.dir });
  return { json, cli };
}

describe('checkpoint, fork and audit commands', () => {
  test('save, break things, diff, restore, undo', async () => {
    const { json, cli } = freshHome();
    await json(['vault', 'create', 'work']);
    await json(['write', '-p', '/src/app.py', 'print(1)\n']);
    await json(['write', '/notes.md', 'keep\n']);
    const saved = await json(['checkpoint', 'save', 'green', '-m', 'tests pass']);
    assert.deepEqual([saved.code, saved.json.name, saved.json.description, saved.json.auto], [0, 'green', 'tests pass', false]);
    assert.equal(saved.json.file_count, 3);

    await json(['write', '/src/app.py', 'print(2)\n']);
    await json(['rm', '/notes.md']);
    await json(['write', '/scratch.txt', 'tmp']);
    const diff = await json(['checkpoint', 'diff', 'green', '--patch']);
    assert.deepEqual((diff.json.added as Array<{ path: string }>).map((e) => e.path), ['/scratch.txt']);
    assert.deepEqual((diff.json.deleted as Array<{ path: string }>).map((e) => e.path), ['/notes.md']);
    assert.deepEqual((diff.json.modified as Array<{ path: string }>).map((e) => e.path), ['/src/app.py']);
    assert.match(diff.json.patch as string, /-print\(1\)\n\+print\(2\)/);
    const human = await cli(['checkpoint', 'diff', 'green']);
    assert.match(human.stdout, /^A {2}\/scratch\.txt/m);
    assert.match(human.stdout, /^D {2}\/notes\.md/m);
    await json(['write', '-p', '/gen/deep/a.txt', 'a']);
    await json(['write', '/gen/b.txt', 'b']);
    const foldedOut = (await cli(['checkpoint', 'diff', 'green'])).stdout;
    assert.match(foldedOut, /^A {2}\/gen\/ {2}\(\+3 entries\)$/m, 'a new directory is one line in human output');
    assert.doesNotMatch(foldedOut, /deep\/a\.txt/);
    assert.equal(((await json(['checkpoint', 'diff', 'green'])).json.added as unknown[]).length, 5, '--json still lists every entry');
    await json(['rm', '-r', '/gen']);

    const restored = await json(['checkpoint', 'restore', 'green']);
    assert.equal(restored.code, 0);
    assert.equal(restored.json.checkpoint, 'green');
    assert.match(restored.json.undo_checkpoint as string, /^before-restore-/);
    assert.equal((await cli(['cat', '/src/app.py'])).stdout, 'print(1)\n');
    assert.equal((await json(['stat', '/scratch.txt'])).json.error, 'NotFound');

    const undone = await json(['checkpoint', 'restore', restored.json.undo_checkpoint as string]);
    assert.equal(undone.code, 0);
    assert.equal((await cli(['cat', '/scratch.txt'])).stdout, 'tmp');

    const list = await json(['checkpoint', 'list']);
    const names = (list.json.checkpoints as Array<{ name: string; auto: boolean }>).map((c) => [c.name.replace(/-\d.*/, ''), c.auto]);
    assert.deepEqual(names, [['green', false], ['before-restore', true], ['before-restore', true]]);
    assert.equal((await json(['snapshot', 'info', 'green'])).json.name, 'green', 'snapshot is an alias of checkpoint');
    const missing = await json(['checkpoint', 'restore', 'nope']);
    assert.deepEqual([missing.json.error, missing.code], ['NotFound', ERROR_TABLE.NotFound.exit]);
    assert.equal((await json(['checkpoint', 'save', 'green'])).json.error, 'AlreadyExists');
    assert.equal((await json(['checkpoint', 'delete', 'green'])).code, 0);
  });

  test('fork: isolation, info, list tree, refusal to delete a parent, flatten', async () => {
    const { json, cli } = freshHome();
    await json(['vault', 'create', 'work']);
    await json(['write', '-p', '/src/app.py', 'print(2)\n']);
    await json(['write', '/scratch.txt', 'tmp']);
    const f = await json(['vault', 'fork', 'work', 'task-1']);
    assert.deepEqual([f.code, f.json.source, f.json.name], [0, 'work', 'task-1']);
    await json(['--vault', 'task-1', 'write', '/src/app.py', 'print("fork")\n']);
    assert.equal((await cli(['--vault', 'work', 'cat', '/src/app.py'])).stdout, 'print(2)\n');
    assert.equal((await cli(['--vault', 'task-1', 'cat', '/src/app.py'])).stdout, 'print("fork")\n');
    const info = await json(['vault', 'info', 'work']);
    assert.deepEqual(info.json.forks, ['task-1']);
    assert.equal((await json(['vault', 'info', 'task-1'])).json.parent, 'work');
    const list = (await json(['vault', 'list'])).json.vaults as Array<{ name: string; parent: string | null }>;
    assert.deepEqual(list.map((v) => [v.name, v.parent]), [['task-1', 'work'], ['work', null]]);
    assert.equal((await json(['vault', 'fork', 'work', 'task-1'])).json.error, 'VaultExists');
    assert.equal((await json(['vault', 'fork', 'ghost', 'task-2'])).json.error, 'VaultNotFound');

    const refused = await json(['vault', 'delete', 'work', '--yes']);
    assert.deepEqual([refused.json.error, refused.code, refused.json.forks], ['VaultInUse', ERROR_TABLE.VaultInUse.exit, ['task-1']]);
    const del = await json(['vault', 'delete', 'work', '--yes', '--flatten']);
    assert.deepEqual([del.code, del.json.flattened], [0, ['task-1']]);
    assert.equal((await cli(['--vault', 'task-1', 'cat', '/scratch.txt'])).stdout, 'tmp');
    assert.equal((await json(['vault', 'info', 'task-1'])).json.parent, null);
  });

  test('audit lists mutations and checkpoints with their surface, newest first', async () => {
    const { json } = freshHome();
    await json(['vault', 'create', 'work']);
    await json(['vault', 'fork', 'work', 'task-1']);
    await json(['vault', 'delete', 'work', '--yes', '--flatten']);
    await json(['vault', 'use', 'task-1']);
    await json(['write', '/audit-me.txt', 'x']);
    await json(['write', '/audit-me.txt', 'y']);
    await json(['checkpoint', 'save', 'audited']);
    await json(['rm', '/audit-me.txt']);
    await json(['checkpoint', 'restore', 'audited']);
    const a = await json(['audit', '--limit', '5']);
    const entries = a.json.entries as Array<{ id: number; operation: string; surface: string; path: string | null }>;
    assert.equal(entries.length, 5);
    assert.ok(entries[0]!.id > entries[4]!.id, 'newest first');
    assert.ok((a.json.total_count as number) > 5);
    const all = (await json(['audit', '--limit', '1000'])).json.entries as typeof entries;
    const ops = new Set(all.map((e) => e.operation));
    for (const op of ['create', 'write', 'unlink', 'checkpoint_save', 'checkpoint_restore', 'fork_create', 'fork_flatten']) assert.ok(ops.has(op), `audit has ${op}`);
    assert.ok(all.every((e) => e.surface === 'cli'));
    assert.equal(((await json(['audit', '--since', '2999-01-01'])).json.entries as unknown[]).length, 0);
    const bad = await json(['audit', '--since', 'yesterday-ish']);
    assert.deepEqual([bad.json.error, bad.code], ['InvalidInput', 2]);
  });
});
