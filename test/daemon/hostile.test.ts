/**
 * The host under hostile input, from outside: a real `avfs host` process on its real socket, raw
 * bytes written by a client that does not play by the rules, and a CLI whose host is killed
 * mid-message.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CLI, runJson, tempDir } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';
import { type HostProcess, startHost } from './helpers';

/** A raw connection to the host's socket: what it sent back, parsed into messages, and whether it closed. */
interface Raw {
  socket: Socket;
  messages: Array<{ id?: unknown; error?: { code: number; message: string }; result?: unknown }>;
  closed: () => boolean;
  text: () => string;
}

function rawConnect(path: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(path);
    let buf = Buffer.alloc(0);
    let closed = false;
    const raw: Raw = { socket, messages: [], closed: () => closed, text: () => buf.toString() };
    let parsed = 0;
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const rest = buf.subarray(parsed);
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) break;
        const len = Number(/Content-Length: (\d+)/.exec(rest.subarray(0, end).toString())?.[1]);
        if (rest.length < end + 4 + len) break;
        raw.messages.push(JSON.parse(rest.subarray(end + 4, end + 4 + len).toString()));
        parsed += end + 4 + len;
      }
    });
    socket.on('close', () => (closed = true));
    socket.on('error', () => (closed = true));
    socket.once('connect', () => resolve(raw));
    socket.once('error', reject);
  });
}

const frame = (msg: unknown) => {
  const body = Buffer.from(typeof msg === 'string' ? msg : JSON.stringify(msg));
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`), body]);
};

describe('the host under hostile input', () => {
  const t = tempDir('avfs-hostile-');
  const home = t.dir;
  let host: HostProcess;
  let socketPath: string;
  const raws: Raw[] = [];
  const open = async () => {
    const r = await rawConnect(socketPath);
    raws.push(r);
    return r;
  };

  before(async () => {
    await runJson(['vault', 'create', 'main'], { home });
    host = await startHost(home, ['--slow-client-timeout', '1500']);
    socketPath = (JSON.parse(readFileSync(`${home}/host.json`, 'utf8')) as { socket: string }).socket;
  });
  after(async () => {
    for (const r of raws) r.socket.destroy();
    await host.stop();
    t.cleanup();
  });

  const stillServes = async () => {
    const r = await open();
    r.socket.write(frame({ jsonrpc: '2.0', id: 1, method: 'host/status', params: {} }));
    assert.ok(await waitFor(() => r.messages.some((m) => m.id === 1), 5000), 'the host answers a well-formed request');
    assert.equal((r.messages.find((m) => m.id === 1)!.result as { pid: number }).pid, host.pid);
    r.socket.destroy();
  };

  test('a body that is a JSON array, an id that is an object, or JSON-RPC that is not 2.0 gets a JSON-RPC error; the connection serves on', async () => {
    const r = await open();
    r.socket.write(frame([{ jsonrpc: '2.0', id: 1, method: 'host/status' }]));
    r.socket.write(frame({ jsonrpc: '2.0', id: { x: 1 }, method: 'host/status', params: {} }));
    r.socket.write(frame({ jsonrpc: '1.0', id: 7, method: 'host/status' }));
    r.socket.write(frame('"just a string"'));
    r.socket.write(frame('{not json'));
    r.socket.write(frame({ jsonrpc: '2.0', id: 8, method: 'host/status', params: {} }));
    const answers = () => r.messages.filter((m) => 'id' in m);
    assert.ok(await waitFor(() => answers().length >= 6, 5000), r.text());
    const [batch, objectId, oldVersion, str, garbage, ok] = answers();
    assert.deepEqual([batch!.id, batch!.error?.code], [null, -32600]);
    assert.match(batch!.error!.message, /batch/);
    assert.deepEqual([objectId!.id, objectId!.error?.code], [null, -32600]);
    assert.match(objectId!.error!.message, /id that is an object/);
    assert.deepEqual([oldVersion!.id, oldVersion!.error?.code], [7, -32600]);
    assert.deepEqual([str!.id, str!.error?.code], [null, -32600]);
    assert.deepEqual([garbage!.id, garbage!.error?.code], [null, -32700]);
    assert.equal(ok!.id, 8);
    assert.equal((ok!.result as { pid: number }).pid, host.pid);
    assert.equal(r.closed(), false);
  });

  test('a header it does not fully understand (Content-Length twice, another field, not a number) closes the connection with an error', async () => {
    for (const header of [
      'Content-Length: 2\r\nContent-Length: 160000000',
      'Content-Length: 160000000\r\nContent-Length: 2',
      'Content-Length: 2\r\nX-Extra: 1',
      'Content-Length: 0x10',
      'Content-Length: 2\r\nContent-Type: application/json; charset=latin1',
    ]) {
      const r = await open();
      r.socket.write(`${header}\r\n\r\n{}`);
      assert.ok(await waitFor(() => r.closed(), 5000), `closed after ${JSON.stringify(header)}`);
      const errors = r.messages.filter((m) => m.error);
      assert.equal(errors.length, 1, header);
      assert.equal(errors[0]!.error?.code, -32700, header);
      assert.match(errors[0]!.error!.message, /twice|field other than|not a whole number|only utf-8/, header);
    }
    await stillServes();
  });

  test('a message over the limit is refused before it is buffered; a slow one and a silent connection are timed out', async () => {
    const big = await open();
    big.socket.write(`Content-Length: ${65 * 1024 * 1024}\r\n\r\n{`);
    assert.ok(await waitFor(() => big.closed(), 5000));
    assert.match(big.messages.find((m) => m.error)!.error!.message, /limit/);

    const slow = await open();
    slow.socket.write(frame({ jsonrpc: '2.0', id: 1, method: 'client/hello', params: { name: 'slow', kind: 'other', approver: false } }));
    slow.socket.write('Content-Length: 100\r\n\r\n{"jsonrpc"');
    const silent = await open();
    const started = Date.now();
    assert.ok(await waitFor(() => slow.closed() && silent.closed(), 8000), 'both are closed');
    assert.ok(Date.now() - started < 6000);
    assert.match(slow.messages.find((m) => m.error)!.error!.message, /not sent whole within 1500 ms/);
    assert.match(silent.messages.find((m) => m.error)!.error!.message, /no client\/hello within 1500 ms/);
    assert.ok(await waitFor(() => /disconnected \(no client\/hello/.test(host.log()), 2000));
    await stillServes();
  });

});

describe('the host under many held-open messages', () => {
  const t = tempDir('avfs-held-');
  let host: HostProcess;
  const raws: Raw[] = [];
  before(async () => {
    await runJson(['vault', 'create', 'main'], { home: t.dir });
    host = await startHost(t.dir);
  });
  after(async () => {
    for (const r of raws) r.socket.destroy();
    await host.stop();
    t.cleanup();
  });
  const socketOf = () => (JSON.parse(readFileSync(`${t.dir}/host.json`, 'utf8')) as { socket: string }).socket;
  const open = async () => {
    const r = await rawConnect(socketOf());
    raws.push(r);
    return r;
  };

  test('messages held open across connections are capped in total: the one past the cap is refused, the host stays small', async () => {
    const part = 50 * 1024 * 1024;
    const held: Raw[] = [];
    for (let i = 0; i < 4; i++) {
      const r = await open();
      r.socket.write(frame({ jsonrpc: '2.0', id: 1, method: 'client/hello', params: { name: `holder ${i}`, kind: 'other', approver: false } }));
      r.socket.write(`Content-Length: ${part}\r\n\r\n`);
      r.socket.write(Buffer.alloc(part - 1, 0x20));
      held.push(r);
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(await waitFor(() => held[3]!.closed(), 5000), 'the fourth is refused');
    assert.match(held[3]!.messages.find((m) => m.error)!.error!.message, /too many unread bytes/);
    assert.deepEqual(held.slice(0, 3).map((r) => r.closed()), [false, false, false]);
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${host.pid}/status`, 'utf8'))![1]) * 1024;
    assert.ok(rss < 400 * 1024 * 1024, `host RSS ${rss}`);
    for (const r of held) r.socket.destroy();
    const r = await open();
    r.socket.write(frame({ jsonrpc: '2.0', id: 1, method: 'host/status', params: {} }));
    assert.ok(await waitFor(() => r.messages.some((m) => m.id === 1), 5000), 'the host still answers');
  });
});

describe('a CLI whose host dies', () => {
  test('kill -9 of the host mid-output: the CLI prints OwnerDied and exits', async () => {
    const t = tempDir('avfs-hostdies-');
    const home = t.dir;
    await runJson(['vault', 'create', 'main'], { home });
    const host = await startHost(home);
    const cli = spawn(process.execPath, [CLI, '--json', '--vault', 'main', 'proxy', 'exec', '--shell', 'yes | head -c 100G'], { env: { ...process.env, AVFS_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    cli.stdout.on('data', (d: Buffer) => (out += d.toString()));
    cli.stderr.on('data', () => undefined);
    const exited = new Promise<number | null>((r) => cli.on('exit', (code) => r(code)));
    try {
      assert.ok(await waitFor(() => /client avfs proxy exec .* connected/.test(host.log()), 10_000), host.log());
      await new Promise((r) => setTimeout(r, 1500));
      // The host's own children (the runner and what it started) go with it, as a crash would take them.
      const kids = readFileSync(`/proc/${host.pid}/task/${host.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
      host.child.kill('SIGKILL');
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
      for (const k of kids) spawn('pkill', ['-KILL', '-s', String(k)]).on('error', () => undefined);
      for (const k of kids) {
        try {
          process.kill(k, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      assert.notEqual(code, 'hung', 'the CLI exits');
      assert.equal(code, 26, out.slice(0, 500));
      assert.match(out, /OwnerDied/);
    } finally {
      cli.kill('SIGKILL');
      await host.stop();
      await sh('bash', ['-c', `for m in $(grep -o "${home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
      t.cleanup();
    }
  });
});

describe('an output flood through the host', () => {
  test('memory stays bounded with a client that never reads; it misses output (told how much), the envelope keeps counts, head and tail', async () => {
    const t = tempDir('avfs-flood-');
    const home = t.dir;
    await runJson(['vault', 'create', 'main'], { home });
    const host = await startHost(home);
    const socket = (JSON.parse(readFileSync(`${home}/host.json`, 'utf8')) as { socket: string }).socket;
    const hung = await rawConnect(socket);
    hung.socket.write(frame({ jsonrpc: '2.0', id: 1, method: 'client/hello', params: { name: 'hung window', kind: 'vscode', approver: false } }));
    assert.ok(await waitFor(() => hung.messages.some((m) => m.id === 1), 5000));
    hung.socket.pause();
    // A window that reads, slowly at first: it is told what it missed.
    const slow = await rawConnect(socket);
    slow.socket.write(frame({ jsonrpc: '2.0', id: 1, method: 'client/hello', params: { name: 'slow window', kind: 'vscode', approver: false } }));
    assert.ok(await waitFor(() => slow.messages.some((m) => m.id === 1), 5000));
    slow.socket.pause();
    const status = (pid: number, field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
    const runner = Number(readFileSync(`/proc/${host.pid}/task/${host.pid}/children`, 'utf8').trim().split(/\s+/)[0]);
    const before = status(host.pid, 'VmRSS');
    try {
      const size = 384 * 1024 * 1024;
      const run = runJson(['--vault', 'main', 'proxy', 'exec', '--shell', `yes | head -c ${size}`], { home });
      setTimeout(() => slow.socket.resume(), 3000);
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      const res = (r.json as { result: { stdout_bytes: number; stdout_truncated: boolean; stdout: string } }).result;
      assert.equal(res.stdout_bytes, size);
      assert.equal(res.stdout_truncated, true);
      assert.match(res.stdout, /^(y\n)+/);
      const hostPeak = status(host.pid, 'VmHWM');
      const runnerPeak = status(runner, 'VmHWM');
      assert.ok(hostPeak - before < 200 * 1024 * 1024, `the host grew from ${before} to a peak of ${hostPeak} bytes`);
      assert.ok(runnerPeak < 200 * 1024 * 1024, `the runner peaked at ${runnerPeak} bytes`);
      const outputs = (m: Raw) => m.messages.filter((x) => (x as { method?: string }).method === 'exec/output') as unknown as Array<{ params: { text: string; dropped_bytes?: number } }>;
      assert.ok(await waitFor(() => outputs(slow).some((o) => (o.params.dropped_bytes ?? 0) > 0), 10_000), 'the slow window is told what it missed');
      const shown = outputs(slow).reduce((n, o) => n + Buffer.byteLength(o.params.text) + (o.params.dropped_bytes ?? 0), 0);
      assert.ok(shown <= size, `${shown} of ${size}`);
      // The host still answers the window that never read, once it reads again.
      hung.socket.resume();
      hung.socket.write(frame({ jsonrpc: '2.0', id: 2, method: 'host/status', params: {} }));
      assert.ok(await waitFor(() => hung.messages.some((m) => m.id === 2), 20_000), 'the hung window is answered once it reads');
    } finally {
      hung.socket.destroy();
      slow.socket.destroy();
      await host.stop();
      t.cleanup();
    }
  });
});

describe('a CLI that exits when its run is done', () => {
  test('its envelope reaches a reader that is slow to read, whole (it was cut at 64 KiB)', async () => {
    const t = tempDir('avfs-slowreader-');
    try {
      await runJson(['vault', 'create', 'main'], { home: t.dir });
      const cli = spawn(process.execPath, [CLI, '--json', '--vault', 'main', 'proxy', 'exec', '--shell', 'head -c 3M /dev/zero | tr "\\0" y'], {
        env: { ...process.env, AVFS_HOME: t.dir, AVFS_NO_HOST: '1' },
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      cli.stdout.pause();
      const chunks: Buffer[] = [];
      const closed = new Promise<void>((r) => cli.stdout.on('close', () => r()));
      cli.stdout.on('data', (d: Buffer) => chunks.push(d));
      await new Promise((r) => setTimeout(r, 1500));
      cli.stdout.resume();
      await closed;
      const env = JSON.parse(Buffer.concat(chunks).toString()) as { result: { stdout_bytes: number } };
      assert.equal(env.result.stdout_bytes, 3 * 1024 * 1024);
    } finally {
      t.cleanup();
    }
  });
});
