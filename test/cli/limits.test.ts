/** Quotas against the ways a lot of data arrives at once: a stream on stdin, a checkpoint restore. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { CLI, runCli, runJson, tempDir } from '../helpers';

const MiB = 1024 * 1024;

function setup() {
  const t = tempDir();
  after(t.cleanup);
  const json = (args: string[], input?: string | Buffer) => runJson(args, { home: t.dir, ...(input !== undefined ? { input } : {}) });
  return { home: t.dir, json };
}

/**
 * Feeds `total` zero bytes to `avfs --json ARGS` on stdin, made as they are read, and reports how
 * many the CLI took before it exited (what it did not read was never made).
 */
function streamInto(home: string, args: string[], total: number): Promise<{ code: number | null; json: Record<string, unknown>; consumed: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, '--json', ...args], { env: { ...process.env, AVFS_HOME: home }, stdio: ['pipe', 'pipe', 'inherit'] });
    let made = 0;
    const block = Buffer.alloc(64 * 1024);
    const source = new Readable({
      read() {
        if (made >= total) return this.push(null);
        const n = Math.min(block.length, total - made);
        made += n;
        this.push(block.subarray(0, n));
      },
    });
    child.stdin.on('error', () => source.destroy()); // EPIPE once the CLI has stopped reading
    source.pipe(child.stdin);
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.on('error', reject);
    child.on('close', (code) => {
      source.destroy();
      resolve({ code, json: JSON.parse(Buffer.concat(out).toString('utf8')) as Record<string, unknown>, consumed: made });
    });
  });
}

describe('writes from stdin stream into the vault', () => {
  test('max_file_size_mb: 200 MB of stdin is refused once 1 MiB has passed, without reading the rest', async () => {
    const { home, json } = setup();
    await json(['vault', 'create', 'q']);
    await json(['quota', 'set', 'max_file_size_mb', '1']);
    const r = await streamInto(home, ['write', '/huge'], 200_000_000);
    assert.deepEqual([r.json.error, r.code], ['QuotaExceeded', ERROR_TABLE.QuotaExceeded.exit], JSON.stringify(r.json));
    assert.equal(r.json.quota, 'max_file_size_mb');
    assert.ok(r.consumed < 8 * MiB, `the CLI stopped reading early (it took ${r.consumed} bytes of 200 MB)`);
    assert.equal((await json(['stat', '/huge'])).json.error, 'NotFound', 'nothing was written');
  });

  test('max_size_mb: an append that would pass the vault size is refused early, and the file is as it was', async () => {
    const { home, json } = setup();
    await json(['vault', 'create', 'q']);
    const first = randomBytes(1.5 * MiB);
    await json(['write', '/log'], first);
    await json(['quota', 'set', 'max_size_mb', '2']);
    const r = await streamInto(home, ['write', '--append', '/log'], 100_000_000);
    assert.deepEqual([r.json.error, r.json.quota], ['QuotaExceeded', 'max_size_mb']);
    assert.ok(r.consumed < 8 * MiB, `the CLI stopped reading early (it took ${r.consumed} bytes)`);
    assert.ok((await runCli(['cat', '/log'], { home })).stdoutBytes.equals(first));
    const fits = await streamInto(home, ['write', '--append', '/log'], 0.25 * MiB);
    assert.deepEqual([fits.code, fits.json.size, fits.json.written], [0, 1.75 * MiB, 0.25 * MiB], 'what fits is written');
  });

  test('input bigger than what is kept in memory arrives byte for byte', async () => {
    const { home, json } = setup();
    await json(['vault', 'create', 'q']);
    const data = randomBytes(20 * MiB + 12345);
    const w = await json(['write', '/big'], data);
    assert.deepEqual([w.code, w.json.size, w.json.written], [0, data.length, data.length]);
    assert.ok((await runCli(['cat', '/big'], { home })).stdoutBytes.equals(data));
    const small = await json(['write', '/big'], 'short');
    assert.equal(small.json.size, 5, 'replacing with less truncates');
  });
});

describe('checkpoint restore against quotas', () => {
  test('a restore that would pass a quota is refused with nothing changed; --force restores anyway', async () => {
    const { json } = setup();
    await json(['vault', 'create', 'q']);
    await json(['write', '-p', '/data/big.bin'], Buffer.alloc(2 * MiB, 5));
    for (let i = 0; i < 5; i++) await json(['write', `/data/f${i}`, String(i)]);
    await json(['checkpoint', 'save', 'full']);
    await json(['rm', '-r', '/data']);
    await json(['write', '/small', 'x']);
    const tree = async () => (await json(['tree', '-a'])).json.tree;
    const checkpoints = async () => ((await json(['checkpoint', 'list'])).json.checkpoints as Array<{ name: string }>).map((c) => c.name);
    const before = { tree: await tree(), checkpoints: await checkpoints() };

    for (const [key, value] of [['max_size_mb', '1'], ['max_files', '3'], ['max_file_size_mb', '1']] as const) {
      await json(['quota', 'set', key, value]);
      const r = await json(['checkpoint', 'restore', 'full']);
      assert.deepEqual([r.json.error, r.code, r.json.quota, r.json.checkpoint], ['QuotaExceeded', ERROR_TABLE.QuotaExceeded.exit, key, 'full'], JSON.stringify(r.json));
      assert.deepEqual({ tree: await tree(), checkpoints: await checkpoints() }, before, `${key}: nothing changed, no undo checkpoint left behind`);
      await json(['quota', 'clear', key]);
    }

    await json(['quota', 'set', 'max_size_mb', '1']);
    const forced = await json(['checkpoint', 'restore', 'full', '--force']);
    assert.deepEqual([forced.code, forced.json.forced], [0, true], JSON.stringify(forced.json));
    assert.equal((await json(['stat', '/data/big.bin'])).json.size, 2 * MiB);
    assert.equal((await json(['write', '/more', 'x'])).json.error, 'QuotaExceeded', 'over the quota, writes that grow usage are refused');
    const back = await json(['checkpoint', 'restore', forced.json.undo_checkpoint as string]);
    assert.equal(back.code, 0, 'a restore that shrinks usage is allowed while over the quota');
  });
});
