import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import { join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { ROOT, runCli, runJson, tempDir } from '../helpers';

describe('avfs CLI, as a user runs it', () => {
  const t = tempDir();
  const home = t.dir;
  after(t.cleanup);
  const cli = (args: string[], input?: string | Buffer) => runCli(args, { home, ...(input !== undefined ? { input } : {}) });
  const json = (args: string[], input?: string | Buffer) => runJson(args, { home, ...(input !== undefined ? { input } : {}) });

  test('before any vault exists: NoActiveVault with its exit code', async () => {
    const r = await json(['ls']);
    assert.equal(r.json.error, 'NoActiveVault');
    assert.equal(r.code, ERROR_TABLE.NoActiveVault.exit);
    const h = await cli(['ls']);
    assert.equal(h.stdout, '', 'human mode sends errors to stderr only');
    assert.match(h.stderr, /NoActiveVault/);
  });

  test('vault create / list / info / use', async () => {
    const c = await json(['vault', 'create', 'demo']);
    assert.equal(c.code, 0);
    assert.equal(c.json.created, 'demo');
    assert.equal(c.json.current, true);
    assert.equal((await json(['vault', 'create', 'demo'])).json.error, 'VaultExists');
    assert.equal((await json(['vault', 'create', 'other', '--no-use', '--max-files', '100'])).code, 0);
    const list = await json(['vault', 'list']);
    assert.ok(Array.isArray(list.json.vaults), 'vault list is an object holding an array');
    const vaults = list.json.vaults as Array<{ name: string; current: boolean }>;
    assert.deepEqual(vaults.map((v) => [v.name, v.current]), [['demo', true], ['other', false]]);
    const info = await json(['vault', 'info', 'other']);
    assert.equal((info.json.quotas as { max_files: number }).max_files, 100);
    assert.equal(info.json.path, join(home, 'vaults', 'other.avfs'));
    assert.equal((await json(['vault', 'use', 'nope'])).json.error, 'VaultNotFound');
    assert.equal((await json(['vault', 'create', '-bad'])).code, 2);
    assert.equal((await json(['vault', 'create', '../escape'])).json.error, 'InvalidInput');
  });

  test('write, cat, ls, stat, tree in --json print exactly one document each', async () => {
    const w = await json(['write', '/docs/readme.md', 'hello world', '--parents']);
    assert.deepEqual([w.code, w.json.path, w.json.size, w.json.created], [0, '/docs/readme.md', 11, true]);
    const c = await json(['cat', '/docs/readme.md']);
    assert.deepEqual([c.json.content, c.json.encoding, c.json.size], ['hello world', 'utf8', 11]);
    const ls = await json(['ls', '/docs']);
    assert.deepEqual((ls.json.entries as Array<{ name: string }>).map((e) => e.name), ['readme.md']);
    const st = await json(['stat', 'docs/readme.md']);
    assert.deepEqual([st.json.type, st.json.size, st.json.mode], ['file', 11, '0644']);
    const tree = await json(['tree']);
    assert.equal(((tree.json.tree as { children: unknown[] }).children).length, 1);
    const human = await cli(['cat', '/docs/readme.md']);
    assert.equal(human.stdout, 'hello world');
  });

  test('write into a missing directory needs -p', async () => {
    const r = await json(['write', '/bin/blob'], randomBytes(10));
    assert.equal(r.json.error, 'NotFound');
    assert.equal(r.code, ERROR_TABLE.NotFound.exit);
  });

  test('binary round trip through stdin', async () => {
    const data = randomBytes(300_000);
    assert.equal((await cli(['write', '-p', '/bin/blob'], data)).code, 0);
    const out = await cli(['cat', '/bin/blob']);
    assert.ok(out.stdoutBytes.equals(data), 'cat prints the exact bytes');
    const j = await json(['cat', '/bin/blob']);
    assert.equal(j.json.encoding, 'base64');
    assert.ok(Buffer.from(j.json.content as string, 'base64').equals(data));
    const appended = await json(['write', '--append', '/bin/blob'], Buffer.from([0, 1, 2]));
    assert.equal(appended.json.size, 300_003);
  });

  test('every error kind a user can hit has its exit code, a JSON document and writes nothing', async () => {
    await cli(['mkdir', '/full']);
    await cli(['write', '/full/x', 'x']);
    const cases: Array<[string[], keyof typeof ERROR_TABLE]> = [
      [['cat', '/missing'], 'NotFound'],
      [['mkdir', '/full'], 'AlreadyExists'],
      [['write', '/full/x/y', 'z'], 'NotADirectory'],
      [['cat', '/full'], 'IsADirectory'],
      [['rm', '/full'], 'IsADirectory'],
      [['rmdir', '/full'], 'NotEmpty'],
      [['write', '/../up', 'z'], 'InvalidPath'],
      [['write', '/' + 'n'.repeat(300), 'z'], 'NameTooLong'],
      [['--vault', 'ghost', 'ls'], 'VaultNotFound'],
      [['quota', 'set', 'max_bananas', '1'], 'InvalidInput'],
      [['quota', 'set', 'max_files', '-1'], 'InvalidInput'],
      [['mkdir', '/m', '--mode', '999'], 'InvalidInput'],
      [['tree', '-L', 'zero'], 'InvalidInput'],
      // Numbers as every other count option takes them: whole decimal digits only.
      [['tree', '-L', '1e9'], 'InvalidInput'],
      [['tree', '-L', '0x10'], 'InvalidInput'],
      [['tree', '-L', ' 5'], 'InvalidInput'],
      [['tree', '-L', '0'], 'InvalidInput'],
      [['nosuchcommand'], 'InvalidInput'],
      [['ls', '--no-such-flag'], 'InvalidInput'],
    ];
    const before = (await json(['tree', '-a'])).json;
    for (const [args, kind] of cases) {
      const r = await json(args);
      assert.equal(r.json.error, kind, `${args.join(' ')} → ${kind} (got ${JSON.stringify(r.json)})`);
      assert.equal(typeof r.json.message, 'string');
      assert.equal(r.code, ERROR_TABLE[kind].exit, `${args.join(' ')} exits ${ERROR_TABLE[kind].exit}`);
    }
    assert.deepEqual((await json(['tree', '-a'])).json, before, 'no failed command changed the tree');
  });

  test('quota set / show / clear, and a refused write', async () => {
    assert.equal((await json(['quota', 'set', 'max_file_size_mb', '1'])).code, 0);
    const q = await json(['quota']);
    assert.equal(q.json.max_file_size_mb, 1);
    const r = await json(['write', '/huge'], Buffer.alloc(1024 * 1024 + 1));
    assert.equal(r.json.error, 'QuotaExceeded');
    assert.equal(r.code, ERROR_TABLE.QuotaExceeded.exit);
    assert.deepEqual([r.json.quota, r.json.limit, r.json.requested], ['max_file_size_mb', 1024 * 1024, 1024 * 1024 + 1]);
    assert.equal((await json(['stat', '/huge'])).json.error, 'NotFound');
    assert.equal((await json(['quota', 'clear', 'max_file_size_mb'])).code, 0);
    assert.equal((await json(['quota'])).json.max_file_size_mb, null);
  });

  test('mv, cp, ln, chmod, touch, rm', async () => {
    await cli(['write', '/m1', 'one']);
    assert.equal((await json(['mv', '/m1', '/m2'])).code, 0);
    assert.equal((await json(['cp', '/m2', '/m3'])).code, 0);
    assert.equal((await json(['ln', '-s', 'm3', '/m3link'])).code, 0);
    assert.equal((await json(['ln', '/m3', '/m3hard'])).code, 0);
    assert.equal((await json(['stat', '/m3'])).json.nlink, 2);
    assert.equal((await cli(['cat', '/m3link'])).stdout, 'one');
    assert.equal((await json(['chmod', '755', '/m3'])).json.mode, '0755');
    assert.equal((await json(['touch', '/empty'])).code, 0);
    assert.equal((await json(['stat', '/empty'])).json.size, 0);
    assert.equal((await json(['rm', '-r', '/full'])).json.removed, 2);
    assert.equal((await json(['rm', '-f', '/full'])).json.removed, 0);
  });

  test('stats, pwd and --backend', async () => {
    const st = await json(['stats']);
    assert.equal(st.code, 0);
    assert.ok((st.json.files as number) >= 3);
    assert.equal(st.json.checkpoints, 0);
    assert.deepEqual((await json(['pwd'])).json, { path: '/' });
    // Sled has no Node binding: it is no backend here (LMDB and SQLite are: test/cli/backends.test.ts).
    const nb = await json(['vault', 'create', 'sled-one', '--backend', 'sled']);
    assert.deepEqual([nb.json.error, nb.code], ['InvalidInput', ERROR_TABLE.InvalidInput.exit]);
    assert.equal(fs.existsSync(join(home, 'vaults', 'sled-one.avfs')), false);
  });

  test('--help of every command shows an example', async () => {
    for (const cmd of [['vault', 'create'], ['ls'], ['write'], ['cat'], ['import'], ['export'], ['quota', 'set'], ['gc']]) {
      const r = await cli([...cmd, '--help']);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /Example/, `${cmd.join(' ')} --help has an example`);
    }
  });

  test('vault delete refuses nothing it should not, and clears current', async () => {
    const d = await json(['vault', 'delete', 'demo', '--yes']);
    assert.equal(d.json.deleted, 'demo');
    assert.equal(fs.existsSync(join(home, 'vaults', 'demo.avfs')), false);
    assert.equal((await json(['ls'])).json.error, 'NoActiveVault');
    assert.equal((await json(['vault', 'delete', 'demo', '--yes'])).json.error, 'VaultNotFound');
  });
});

describe('import and export of a real tree', () => {
  const t = tempDir();
  const home = join(t.dir, 'home');
  const src = join(t.dir, 'src');
  const out = join(t.dir, 'out');
  after(t.cleanup);

  before(() => {
    // A real package tree (bytes, modes, nested dirs) plus the things trees carry: an executable,
    // a relative symlink, a hard link, an empty directory.
    fs.cpSync(join(ROOT, 'node_modules', 'commander'), join(src, 'node_modules', 'commander'), { recursive: true });
    fs.cpSync(join(ROOT, 'node_modules', 'zod', 'v4', 'core'), join(src, 'node_modules', 'zod-core'), { recursive: true });
    fs.mkdirSync(join(src, 'node_modules', '.bin'));
    fs.writeFileSync(join(src, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    fs.symlinkSync('../commander/index.js', join(src, 'node_modules', '.bin', 'commander'));
    fs.linkSync(join(src, 'run.sh'), join(src, 'run-again.sh'));
    fs.mkdirSync(join(src, 'empty'));
    fs.utimesSync(join(src, 'run.sh'), new Date('2020-01-02T03:04:05.678Z'), new Date('2020-01-02T03:04:05.678Z'));
  });

  function walk(dir: string): Map<string, { type: string; mode: number; size: number; mtimeMs: number; nlink: number; data?: Buffer; target?: string }> {
    const m = new Map();
    (function rec(d: string) {
      for (const name of fs.readdirSync(d)) {
        const p = join(d, name);
        const st = fs.lstatSync(p);
        const rel = relative(dir, p);
        if (st.isSymbolicLink()) m.set(rel, { type: 'l', mode: 0, size: 0, mtimeMs: 0, nlink: 1, target: fs.readlinkSync(p) });
        else if (st.isDirectory()) {
          m.set(rel, { type: 'd', mode: st.mode & 0o7777, size: 0, mtimeMs: st.mtimeMs, nlink: 0 });
          rec(p);
        } else m.set(rel, { type: 'f', mode: st.mode & 0o7777, size: st.size, mtimeMs: st.mtimeMs, nlink: st.nlink, data: fs.readFileSync(p) });
      }
    })(dir);
    return m;
  }

  test('import then export gives identical bytes, modes, mtimes, symlinks and hard links', async () => {
    assert.equal((await runJson(['vault', 'create', 'rt'], { home })).code, 0);
    const imp = await runJson(['import', src, '/project'], { home });
    assert.equal(imp.code, 0, JSON.stringify(imp.json));
    assert.ok((imp.json.files_imported as number) > 30);
    assert.equal(imp.json.symlinks, 1);
    assert.equal(imp.json.hardlinks, 1);
    const exp = await runJson(['export', '/project', out], { home });
    assert.equal(exp.code, 0, JSON.stringify(exp.json));
    const a = walk(src);
    const b = walk(out);
    assert.deepEqual([...b.keys()].sort(), [...a.keys()].sort());
    for (const [rel, x] of a) {
      const y = b.get(rel)!;
      assert.equal(y.type, x.type, rel);
      assert.equal(y.mode, x.mode, `${rel} mode`);
      assert.equal(y.target, x.target, `${rel} target`);
      assert.equal(y.nlink, x.nlink, `${rel} nlink`);
      if (x.data) assert.ok(y.data!.equals(x.data), `${rel} bytes`);
      if (x.type !== 'l') assert.ok(Math.abs(y.mtimeMs - x.mtimeMs) <= 1, `${rel} mtime ${y.mtimeMs} vs ${x.mtimeMs}`);
    }
    const again = await runJson(['export', '/project', out], { home });
    assert.equal(again.json.error, 'AlreadyExists', 'export does not overwrite host files without --force');
    assert.equal((await runJson(['export', '--force', '/project', out], { home })).code, 0);
  });

  test('symlinks that point outside the tree are refused, and nothing is written', async () => {
    const evil = join(t.dir, 'evil');
    fs.mkdirSync(join(evil, 'sub'), { recursive: true });
    fs.writeFileSync(join(evil, 'ok.txt'), 'ok');
    fs.symlinkSync('/etc/passwd', join(evil, 'sub', 'passwd'));
    const r = await runJson(['import', evil, '/evil'], { home });
    assert.equal(r.json.error, 'UnsafeSymlink');
    assert.equal(r.code, ERROR_TABLE.UnsafeSymlink.exit);
    assert.equal((await runJson(['stat', '/evil'], { home })).json.error, 'NotFound');
    fs.rmSync(join(evil, 'sub', 'passwd'));
    fs.symlinkSync('../../outside', join(evil, 'sub', 'climb'));
    assert.equal((await runJson(['import', evil, '/evil'], { home })).json.error, 'UnsafeSymlink');

    // Inside the vault, a link that climbs out of the exported directory is refused on export.
    await runCli(['mkdir', '/exp'], { home });
    await runCli(['ln', '-s', '../project/run.sh', '/exp/escape'], { home });
    const e = await runJson(['export', '/exp', join(t.dir, 'exp-out')], { home });
    assert.equal(e.json.error, 'UnsafeSymlink');
    assert.equal(fs.existsSync(join(t.dir, 'exp-out')), false, 'nothing was exported');
  });
});
