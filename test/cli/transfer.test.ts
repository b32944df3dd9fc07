/**
 * `avfs import` / `avfs export` through the real CLI: no silent replacement, special files carried,
 * what cannot be kept listed, sizes as stored, host errors naming the host path.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { CLI, runCli, runJson, tempDir } from '../helpers';

/** A Unix socket file left on disk by a process that bound it and exited. */
function makeSocket(path: string): void {
  execFileSync('python3', ['-c', 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])', path]);
}

describe('avfs import and export', () => {
  const t = tempDir('avfs-transfer-');
  const home = join(t.dir, 'home');
  const cli = (args: string[]) => runJson(args, { home });
  before(async () => {
    assert.equal((await cli(['vault', 'create', 'x'])).code, 0);
  });
  after(t.cleanup);

  test('import over an existing file is refused with AlreadyExists unless --force', async () => {
    const host = join(t.dir, 'hostfile');
    fs.writeFileSync(host, 'from the host\n');
    await runCli(['write', '/t'], { home, input: 'precious\n' });
    const r = await cli(['import', host, '/t']);
    assert.deepEqual([r.json.error, r.code, r.json.path], ['AlreadyExists', ERROR_TABLE.AlreadyExists.exit, '/t']);
    assert.equal((await runCli(['cat', '/t'], { home })).stdout, 'precious\n', 'the vault file is unchanged');

    // A tree import that would replace one file changes nothing at all.
    const tree = join(t.dir, 'tree1');
    fs.mkdirSync(tree);
    fs.writeFileSync(join(tree, 'new.txt'), 'new');
    fs.writeFileSync(join(tree, 't'), 'clash');
    const d = await cli(['import', tree, '/']);
    assert.equal(d.json.error, 'AlreadyExists');
    assert.equal((await cli(['stat', '/new.txt'])).json.error, 'NotFound', 'nothing of the tree was written');

    const forced = await cli(['import', '--force', host, '/t']);
    assert.equal(forced.code, 0, JSON.stringify(forced.json));
    assert.equal((await runCli(['cat', '/t'], { home })).stdout, 'from the host\n');
  });

  test('FIFOs and sockets are imported and exported; devices are skipped and named', async () => {
    const tree = join(t.dir, 'special');
    fs.mkdirSync(join(tree, 'run'), { recursive: true });
    fs.writeFileSync(join(tree, 'a.txt'), 'a');
    execFileSync('mkfifo', ['-m', '640', join(tree, 'run', 'pipe')]);
    makeSocket(join(tree, 'run', 'sock'));
    const devices = process.getuid?.() === 0;
    if (devices) execFileSync('mknod', [join(tree, 'run', 'null'), 'c', '1', '3']);
    const r = await cli(['import', tree, '/special']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.equal(r.json.files_imported, 1);
    assert.equal(r.json.special_files, 2);
    assert.deepEqual(
      r.json.skipped,
      devices ? [{ path: join(tree, 'run', 'null'), type: 'char-device', reason: 'a vault holds no device nodes' }] : [],
    );
    assert.equal(r.json.skipped_count, devices ? 1 : 0);
    const ls = await cli(['ls', '/special/run']);
    assert.deepEqual(
      (ls.json.entries as Array<{ name: string; type: string; mode: string }>).map((e) => [e.name, e.type, e.mode]),
      [
        ['pipe', 'fifo', '0640'],
        ['sock', 'socket', (fs.lstatSync(join(tree, 'run', 'sock')).mode & 0o7777).toString(8).padStart(4, '0')],
      ],
    );

    const out = join(t.dir, 'special-out');
    const e = await cli(['export', '/special', out]);
    assert.equal(e.code, 0, JSON.stringify(e.json));
    assert.equal(e.json.special_files, 2);
    const pipe = fs.lstatSync(join(out, 'run', 'pipe'));
    assert.ok(pipe.isFIFO());
    assert.equal(pipe.mode & 0o7777, 0o640);
    assert.ok(fs.lstatSync(join(out, 'run', 'sock')).isSocket());
    assert.equal(fs.existsSync(join(out, 'run', 'null')), false);
    assert.deepEqual(fs.readdirSync(join(out, 'run')).sort(), ['pipe', 'sock'], 'no temporary names left behind');
  });

  test('a file whose stat says size 0 (/proc/self/status): the bytes stored are counted', async () => {
    const r = await cli(['import', '/proc/self/status', '/status']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    const st = await cli(['stat', '/status']);
    assert.ok((st.json.size as number) > 100);
    assert.equal(r.json.total_bytes, st.json.size);
    assert.match((await runCli(['cat', '/status'], { home })).stdout, /^Name:/);
  });

  test('host errors name the host path', async () => {
    const missing = join(t.dir, 'no-such-dir');
    const r = await cli(['import', missing, '/m']);
    assert.deepEqual([r.json.error, r.json.path], ['NotFound', missing]);

    // A file the host cannot read (EIO).
    const eio = await cli(['import', '/proc/self/mem', '/mem']);
    assert.deepEqual([eio.json.error, eio.json.path, eio.code], ['StorageError', '/proc/self/mem', ERROR_TABLE.StorageError.exit]);
    assert.equal((await cli(['stat', '/mem'])).json.error, 'NotFound');

    // An unreadable directory inside the tree, for a user who is not root (nobody must be able to
    // run this checkout's CLI, as on CI and developer machines; a checkout under /root is not).
    if (process.getuid?.() !== 0 || spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'test', '-r', CLI]).status !== 0) return;
    const tree = join(t.dir, 'locked');
    fs.mkdirSync(join(tree, 'closed'), { recursive: true });
    fs.chmodSync(join(tree, 'closed'), 0o000);
    const userHome = join(t.dir, 'nobody-home');
    fs.mkdirSync(userHome);
    fs.chownSync(userHome, 65534, 65534);
    fs.chmodSync(t.dir, 0o755);
    const run = (args: string[]) =>
      spawnSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', process.execPath, CLI, '--json', ...args], {
        env: { ...process.env, AVFS_HOME: userHome },
        encoding: 'utf8',
      });
    assert.equal(run(['vault', 'create', 'n']).status, 0);
    const denied = run(['import', tree, '/locked']);
    const json = JSON.parse(denied.stdout) as Record<string, unknown>;
    assert.deepEqual([json.error, json.path, denied.status], ['PermissionDenied', join(tree, 'closed'), ERROR_TABLE.PermissionDenied.exit]);
  });
});
