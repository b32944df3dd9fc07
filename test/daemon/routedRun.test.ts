/**
 * Runs and writes through a real host, from a client's side: the caller's environment goes with
 * a routed run; what the OS or the decoder would refuse is a typed InvalidInput; a chunk changed
 * on disk is never served; "waiting for approval" is said only of a run that waits.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import type { ExecutionEnvelope } from '../../host/protocol/exec';
import { runCli, runJson, tempDir } from '../helpers';
import { client, type HostProcess, startHost } from './helpers';

describe('runs and writes routed through the host', () => {
  const t = tempDir('avfs-routed-');
  const home = t.dir;
  let host: HostProcess;
  before(async () => {
    await runJson(['vault', 'create', 'main'], { home });
    // The host's own environment has no FOO and its own PATH.
    host = await startHost(home);
  });
  after(async () => {
    await host.stop();
    t.cleanup();
  });

  test("the command gets the caller's environment (FOO, PATH), as it does without a host", async () => {
    const env = { FOO: 'from the caller', PATH: `/opt/caller-bin:${process.env.PATH}` };
    const script = ['--json', '--vault', 'main', 'proxy', 'exec', '--', 'sh', '-c', 'echo "$FOO|$PATH"'];
    const routed = await runJson(script, { home, env });
    const direct = await runJson(script, { home, env: { ...env, AVFS_NO_HOST: '1' } });
    assert.match(host.log(), /client avfs proxy exec/);
    const out = (r: typeof routed) => (r.json as unknown as ExecutionEnvelope).result.stdout.trim();
    assert.equal(out(routed), `from the caller|/opt/caller-bin:${process.env.PATH}`);
    assert.equal(out(routed), out(direct));
  });

  test('an argument the system would refuse (1 MiB: E2BIG) is InvalidInput, not Internal', async () => {
    const c = await client(home);
    try {
      await assert.rejects(c.call('exec/run', { vault: 'main', command: { argv: ['echo', 'x'.repeat(1024 * 1024)] } }), (e: { kind: string; message: string }) => e.kind === 'InvalidInput' && /E2BIG/.test(e.message));
      await assert.rejects(c.call('exec/run', { vault: 'main', command: { argv: ['echo', ...Array.from({ length: 40 }, () => 'y'.repeat(100 * 1024))] } }), (e: { kind: string }) => e.kind === 'InvalidInput');
      await assert.rejects(c.call('exec/run', { vault: 'main', command: { argv: ['true'] }, env: { BIG: 'z'.repeat(200 * 1024) } }), (e: { kind: string }) => e.kind === 'InvalidInput');
      const ok = await c.call('exec/run', { vault: 'main', command: { argv: ['echo', 'x'.repeat(100 * 1024)] } });
      assert.equal(ok.result.exit_code, 0);
    } finally {
      c.close();
    }
  });

  test('fs/writeFile takes strict base64 only: anything else is InvalidInput and writes nothing', async () => {
    const c = await client(home);
    try {
      for (const data of ['not base64!', 'aGVsbG8', 'aGVs bG8=', 'aGVsbG8=\n', '====']) {
        await assert.rejects(c.call('fs/writeFile', { vault: 'main', path: '/b64.txt', data }), (e: { kind: string }) => e.kind === 'InvalidInput', JSON.stringify(data));
      }
      assert.equal((await runJson(['--vault', 'main', 'stat', '/b64.txt'], { home })).json.error, 'NotFound');
      await c.call('fs/writeFile', { vault: 'main', path: '/b64.txt', data: Buffer.from('hello').toString('base64') });
      assert.equal((await runCli(['--vault', 'main', 'cat', '/b64.txt'], { home })).stdout, 'hello');
    } finally {
      c.close();
    }
  });

  test('a chunk changed on disk is StorageError and marks the vault; other files read on', async () => {
    await runJson(['vault', 'create', 'chunky'], { home });
    const a = 'A'.repeat(70_000);
    assert.equal((await runJson(['--vault', 'chunky', 'write', '/a.txt', a], { home })).code, 0);
    assert.equal((await runJson(['--vault', 'chunky', 'write', '/b.txt', 'bee'], { home })).code, 0);
    const db = new Database(join(home, 'vaults', 'chunky.avfs'));
    const first = createHash('sha256').update(a.slice(0, 64 * 1024)).digest();
    const changed = db.prepare("UPDATE chunks SET data = CAST(replace(CAST(data AS TEXT), 'AAAA', 'AAAB') AS BLOB) WHERE hash = ?").run(first).changes;
    db.close();
    assert.equal(changed, 1, 'the first chunk of a.txt was found and changed');
    for (const env of [{}, { AVFS_NO_HOST: '1' }] as Array<Record<string, string>>) {
      const r = await runJson(['--vault', 'chunky', 'cat', '/a.txt'], { home, env });
      assert.equal(r.code, 30, JSON.stringify(r.json));
      assert.equal(r.json.error, 'StorageError');
      assert.match(r.json.message as string, /does not match its SHA-256/);
      assert.equal((await runCli(['--vault', 'chunky', 'cat', '/b.txt'], { home, env })).stdout, 'bee');
    }
    const check = new Database(join(home, 'vaults', 'chunky.avfs'), { readonly: true });
    const mark = check.prepare("SELECT value FROM meta WHERE key = 'damaged'").get() as { value: string } | undefined;
    check.close();
    assert.match(mark?.value ?? '', /does not match its SHA-256/);

    // `vault info` shows the mark, what holds the chunk and the way back, through the host and without.
    for (const env of [{}, { AVFS_NO_HOST: '1' }] as Array<Record<string, string>>) {
      const info = await runJson(['vault', 'info', 'chunky'], { home, env });
      assert.equal(info.code, 0, JSON.stringify(info.json));
      const damaged = info.json.damaged as { found_at: string; chunk: string; files: string[]; checkpoints: string[]; recovery: string };
      assert.equal(damaged.chunk, first.toString('hex'));
      assert.ok(!Number.isNaN(Date.parse(damaged.found_at)), damaged.found_at);
      assert.deepEqual(damaged.files, ['/a.txt']);
      assert.deepEqual(damaged.checkpoints, []);
      assert.equal(damaged.recovery, '1 file and 0 checkpoints hold it and cannot be read (everything else can); to recover: avfs rm /a.txt, then avfs gc, then write the files again from a good copy');
      const text = (await runCli(['vault', 'info', 'chunky'], { home, env })).stdout;
      assert.match(text, new RegExp(`^damaged +since ${damaged.found_at.replace(/\./g, '\\.')}: chunk ${damaged.chunk.slice(0, 16)}… does not match its SHA-256$`, 'm'), text);
      assert.match(text, /^ {2}files +\/a\.txt$/m, text);
      assert.match(text, /^ {2}recover +1 file and 0 checkpoints hold it/m, text);
    }
    const healthy = await runJson(['vault', 'info', 'main'], { home });
    assert.equal(healthy.json.damaged, null);
    assert.doesNotMatch((await runCli(['vault', 'info', 'main'], { home })).stdout, /damaged/);

    // The steps it gives work: the file reads again with the same bytes.
    assert.equal((await runJson(['--vault', 'chunky', 'rm', '/a.txt'], { home })).code, 0);
    assert.equal((await runJson(['--vault', 'chunky', 'gc'], { home })).code, 0);
    assert.equal((await runJson(['--vault', 'chunky', 'write', '/a.txt', a], { home })).code, 0);
    assert.equal((await runCli(['--vault', 'chunky', 'cat', '/a.txt'], { home })).stdout, a);
    // gc swept the damaged chunk, and the mark with it.
    assert.equal((await runJson(['vault', 'info', 'chunky'], { home })).json.damaged, null);
  });

  test('vault info names the checkpoints that hold a damaged chunk, and the steps delete them', async () => {
    await runJson(['vault', 'create', 'held'], { home });
    const c = 'C'.repeat(1000);
    await runJson(['--vault', 'held', 'write', '/c.txt', c], { home });
    assert.equal((await runJson(['--vault', 'held', 'checkpoint', 'save', 'keep-me'], { home })).code, 0);
    const db = new Database(join(home, 'vaults', 'held.avfs'));
    assert.equal(db.prepare("UPDATE chunks SET data = CAST(replace(CAST(data AS TEXT), 'CC', 'CD') AS BLOB) WHERE hash = ?").run(createHash('sha256').update(c).digest()).changes, 1);
    db.close();
    assert.equal((await runJson(['--vault', 'held', 'cat', '/c.txt'], { home })).json.error, 'StorageError');
    const damaged = (await runJson(['vault', 'info', 'held'], { home })).json.damaged as { files: string[]; checkpoints: string[]; recovery: string };
    assert.deepEqual([damaged.files, damaged.checkpoints], [['/c.txt'], ['keep-me']]);
    assert.match(damaged.recovery, /^1 file and 1 checkpoint hold it .*: avfs rm \/c\.txt, then avfs checkpoint delete keep-me, then avfs gc, then write the files again/);
    for (const step of [['rm', '/c.txt'], ['checkpoint', 'delete', 'keep-me'], ['gc'], ['write', '/c.txt', c]]) {
      assert.equal((await runJson(['--vault', 'held', ...step], { home })).code, 0, step.join(' '));
    }
    assert.equal((await runCli(['--vault', 'held', 'cat', '/c.txt'], { home })).stdout, c);
    assert.equal((await runJson(['vault', 'info', 'held'], { home })).json.damaged, null);
  });

  test('"waiting for approval" is not said of a run denied at once; it is of one that waits', async () => {
    const denied = await runCli(['--vault', 'main', 'proxy', 'exec', '--shell', 'git push origin main'], { home });
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /denied/);
    assert.doesNotMatch(denied.stderr, /waiting for approval/);
    const silent = await client(home, { name: 'slow approver', approver: true, setup: (conn) => conn.onRequest('approval/request', () => new Promise((r) => setTimeout(() => r({ answer: 'deny' }), 1500))) });
    try {
      const waited = await runCli(['--vault', 'main', 'proxy', 'exec', '--shell', 'git push origin main'], { home });
      assert.match(waited.stderr, /waiting for approval/);
    } finally {
      silent.close();
    }
  });
});
