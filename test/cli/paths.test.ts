/**
 * Paths as a user types them: names that are not UTF-8, copies into themselves, and path syntax
 * that says "directory" (trailing `/`, `/.`, `x/..`) or says nothing (the empty path).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { ERROR_TABLE, type ErrorKind } from '../../host/protocol/errors';
import { CLI, runJson, tempDir } from '../helpers';

describe('CLI paths', () => {
  const t = tempDir();
  after(t.cleanup);
  const json = (args: string[], input?: string) => runJson(args, { home: t.dir, ...(input !== undefined ? { input } : {}) });
  const expectError = async (args: string[], kind: ErrorKind) => {
    const r = await json(args);
    assert.deepEqual([r.json.error, r.code], [kind, ERROR_TABLE[kind].exit], `${JSON.stringify(args)} → ${kind}: ${JSON.stringify(r.json)}`);
  };
  const tree = async () => (await json(['tree', '-a'])).json.tree;

  before(async () => {
    await json(['vault', 'create', 'p']);
  });

  /** The CLI with raw bytes in its arguments, as a shell passes them (Node cannot put invalid UTF-8 in argv itself). */
  function rawArgs(...args: Buffer[]): { code: number | null; json: Record<string, unknown> } {
    const script = `exec "${process.execPath}" "${CLI}" --json ${args.map((_, i) => `"$(printf '%b' "$A${i}")"`).join(' ')}`;
    const env: Record<string, string> = { ...process.env, AVFS_HOME: t.dir } as Record<string, string>;
    args.forEach((a, i) => {
      env[`A${i}`] = [...a].map((b) => `\\0${b.toString(8).padStart(3, '0')}`).join('');
    });
    const r = spawnSync('/bin/sh', ['-c', script], { env, encoding: 'utf8' });
    return { code: r.status, json: JSON.parse(r.stdout) as Record<string, unknown> };
  }

  test('names that are not UTF-8 are refused everywhere a name enters, so two can never become one', async () => {
    const before = await tree();
    const ff = Buffer.from([0x2f, 0xff]); // "/\xff"
    const fe = Buffer.from([0x2f, 0x61, 0xfe]); // "/a\xfe"
    for (const argv of [
      [Buffer.from('write'), ff, Buffer.from('one')],
      [Buffer.from('write'), fe, Buffer.from('two')],
      [Buffer.from('mkdir'), ff],
      [Buffer.from('touch'), fe],
      [Buffer.from('ln'), Buffer.from('-s'), Buffer.from('x'), ff],
      [Buffer.from('ln'), Buffer.from('-s'), Buffer.from([0xff]), Buffer.from('/l')],
    ]) {
      const r = rawArgs(...argv);
      assert.deepEqual([r.json.error, r.code], ['InvalidPath', ERROR_TABLE.InvalidPath.exit], argv.map((a) => a.toString('latin1')).join(' '));
    }
    await json(['write', '/src.txt', 'x']);
    for (const argv of [
      [Buffer.from('mv'), Buffer.from('/src.txt'), ff],
      [Buffer.from('cp'), Buffer.from('/src.txt'), ff],
      [Buffer.from('ln'), Buffer.from('/src.txt'), ff],
    ]) {
      assert.equal(rawArgs(...argv).json.error, 'InvalidPath', argv.map((a) => a.toString('latin1')).join(' '));
    }
    // U+FFFD itself is what those bytes decode to: keeping it would let `\xff` overwrite it.
    await expectError(['write', '/a\uFFFD', 'z'], 'InvalidPath');
    await json(['rm', '/src.txt']);
    assert.deepEqual(await tree(), before, 'nothing was written');
    // Valid UTF-8 names of every width stay distinct.
    for (const name of ['/é', '/e\u0301', '/日本', '/😀']) assert.equal((await json(['write', name, name])).code, 0, name);
    for (const name of ['/é', '/e\u0301', '/日本', '/😀']) assert.equal((await json(['cat', name])).json.content, name);
  });

  test('copying a directory into itself is refused, in every spelling', async () => {
    await json(['mkdir', '-p', '/d/e']);
    await json(['write', '/d/e/f.txt', 'f']);
    await json(['ln', '-s', '/d/e', '/to-e']);
    const before = await tree();
    const cases: Array<[string, string]> = [
      ['/', '/sub'],
      ['/', '/'],
      ['/', '/d'],
      ['/d', '/d'],
      ['/d', '/d/x'],
      ['/d', '/d/e/x'],
      ['/d/e', '/d'],
      ['/d', '/to-e/x'],
      ['/d/../d', '/d/./e'],
    ];
    for (const [src, dst] of cases) {
      const r = await json(['cp', '-r', src, dst]);
      assert.deepEqual([r.json.error, r.code], ['InvalidInput', ERROR_TABLE.InvalidInput.exit], `cp -r ${src} ${dst}: ${JSON.stringify(r.json)}`);
      assert.match(r.json.message as string, /into itself/);
    }
    assert.deepEqual(await tree(), before, 'nothing was copied');
    assert.equal((await json(['cp', '-r', '/d', '/d-copy'])).json.copied, 3, 'a copy beside the source works');
  });

  test('a path that ends like a directory must be one; the empty path is no path', async () => {
    await json(['write', '/a.txt', 'keep']);
    const before = await tree();
    for (const p of ['/a.txt/', '/a.txt/.', '/a.txt/..', '/a.txt/../b.txt', 'a.txt/']) {
      for (const args of [['write', p, 'x'], ['cat', p], ['ls', p], ['stat', p], ['rm', p], ['touch', p], ['chmod', '600', p], ['mv', p, '/c'], ['cp', p, '/c']]) {
        await expectError(args, 'NotADirectory');
      }
    }
    for (const p of ['/new/', '/new/.']) {
      for (const args of [['write', p, 'x'], ['touch', p], ['ln', '-s', 'x', p], ['mv', '/a.txt', p], ['cp', '/a.txt', p]]) await expectError(args, 'NotADirectory');
    }
    for (const args of [['write', '', 'x'], ['cat', ''], ['ls', ''], ['rm', ''], ['mkdir', ''], ['mv', '', '/x'], ['mv', '/a.txt', ''], ['cp', '/a.txt', ''], ['tree', ''], ['touch', '']]) {
      await expectError(args, 'InvalidPath');
    }
    assert.deepEqual(await tree(), before, 'nothing changed');
    assert.equal((await json(['cat', '/a.txt'])).json.content, 'keep');
    // The directory forms keep working where the path is a directory.
    assert.equal((await json(['mkdir', '/newdir/'])).code, 0);
    assert.equal((await json(['write', '/newdir/./x.txt', 'x'])).code, 0);
    assert.equal((await json(['cat', '/newdir/../newdir/x.txt'])).json.content, 'x');
    assert.deepEqual(((await json(['ls', '/newdir/'])).json.entries as Array<{ name: string }>).map((e) => e.name), ['x.txt']);
    assert.equal((await json(['mv', '/a.txt', '/newdir/'])).json.to, '/newdir/a.txt');
  });
});
