/**
 * The vault host as a user meets it: a real `avfs host` process, real Unix socket, real CLI
 * calls routed through it, real approvers answering over JSON-RPC, real mounts.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { ExecutionEnvelope } from '../../host/protocol/exec';
import { type HostConnection } from '../../host/daemon/client';
import { groupMembers } from '../../host/proxy/processGroup';
import { CLI, runCli, runJson, tempDir } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';
import { client, type HostProcess, hostRunning, startHost } from './helpers';

const envelopeOf = (stdout: string) => ExecutionEnvelope.parse(JSON.parse(stdout));

describe('avfs host', () => {
  const t = tempDir('avfs-host-');
  const home = t.dir;
  const json = (args: string[]) => runJson(args, { home });
  const cli = (args: string[]) => runCli(args, { home });
  let host: HostProcess;
  const open: HostConnection[] = [];
  const connectClient = async (opts: Parameters<typeof client>[1] = {}) => {
    const c = await client(home, opts);
    open.push(c);
    return c;
  };

  before(async () => {
    await json(['vault', 'create', 'main']);
    await json(['--vault', 'main', 'write', '/a.txt', 'one']);
    host = await startHost(home, ['--approval-timeout', '60000']);
  });
  after(async () => {
    if (process.env.AVFS_TEST_HOST_LOG) process.stderr.write(host.log());
    for (const c of open) c.close();
    await host.stop();
    await sh('bash', ['-c', `for m in $(grep -o "${home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    t.cleanup();
  });

  test('one host per home: status names it, the socket is owner-only, a second start says where the first is', async () => {
    const s = await json(['host', 'status']);
    assert.equal(s.code, 0);
    assert.equal(s.json.running, true);
    assert.equal(s.json.pid, host.pid);
    assert.equal(statSync(s.json.socket as string).mode & 0o777, 0o600);
    const second = await json(['host']);
    assert.equal(second.json.error, 'Busy');
    assert.match(second.json.message as string, new RegExp(`pid ${host.pid}`));
    assert.equal(second.json.socket, s.json.socket);
  });

  test('a CLI proxy exec is routed through the host and prints the same envelope', async () => {
    const r = await cli(['--json', '--vault', 'main', 'proxy', 'exec', '--', 'sh', '-c', 'cat a.txt; echo two > b.txt']);
    assert.equal(r.code, 0, r.stderr);
    const env = envelopeOf(r.stdout);
    assert.equal(env.result.stdout, 'one');
    assert.deepEqual(env.result.changed_files, ['/b.txt']);
    assert.match(host.log(), /client avfs proxy exec \(pid \d+\) connected/);
    const audit = (await json(['--vault', 'main', 'audit'])).json.entries as Array<{ operation: string; details: { surface?: string; id?: string } }>;
    const result = audit.find((e) => e.operation === 'exec_result' && e.details.id === env.id);
    assert.match(result?.details.surface ?? '', /^rpc:avfs proxy exec/);
  });

  test('an approval asked by a CLI proxy exec is answered by another client; the CLI then prints its envelope', async () => {
    const asked: ApprovalRequest[] = [];
    const settled: string[] = [];
    const approver = await connectClient({
      name: 'test approver',
      approver: true,
      setup: (conn) => {
        conn.onRequest('approval/request', (req: ApprovalRequest) => {
          asked.push(req);
          return { answer: 'approve_once' };
        });
        conn.onNotification("approval/settled", (n: { id: string }) => void settled.push(n.id));
      },
    });
    const r = await cli(['--json', '--vault', 'main', 'proxy', 'exec', '--shell', 'touch pushed && git push origin main']);
    const env = envelopeOf(r.stdout);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.command, 'touch pushed && git push origin main');
    assert.ok(asked[0]!.categories.includes('vcs_remote'));
    assert.equal(env.result.approval?.outcome, 'approved');
    // Recorded as the host knows the connection (kind, pid, uid, terminal), not by the name the client gave.
    assert.equal(env.result.approval?.by, `other client (pid ${process.pid}, uid ${process.getuid!()}, no terminal)`);
    assert.ok(['completed'].includes(env.result.state));
    assert.equal((await json(['--vault', 'main', 'stat', '/pushed'])).json.type, 'file', 'the approved command ran');
    assert.ok(await waitFor(() => settled.includes(env.id), 2000), 'every client hears the request was settled');
    approver.close();
  });

  test('`avfs approvals` lists a waiting request and `avfs approve` lets it run; `avfs deny` stops another', async () => {
    // An approver that never answers keeps requests waiting.
    const silent = await connectClient({ name: 'silent approver', approver: true, setup: (conn) => conn.onRequest('approval/request', () => new Promise(() => undefined)) });
    const run = (marker: string) =>
      new Promise<{ code: number; stdout: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, '--json', '--vault', 'main', 'proxy', 'exec', '--shell', `touch ${marker} && git push origin main`], {
          env: { ...process.env, AVFS_HOME: home },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', (code) => resolve({ code: code ?? -1, stdout: out }));
      });
    const waiting = async (marker: string) => {
      let id: string | undefined;
      await waitFor(async () => {
        const p = (await json(['approvals'])).json.pending as ApprovalRequest[];
        id = p.find((x) => x.command.includes(marker))?.id;
        return id !== undefined;
      }, 15_000);
      assert.ok(id, `${marker} is pending`);
      return id;
    };
    const yes = run('yes-marker');
    const approved = await json(['approve', await waiting('yes-marker')]);
    assert.equal(approved.json.settled, true);
    const yesEnv = envelopeOf((await yes).stdout);
    assert.equal(yesEnv.result.approval?.outcome, 'approved');
    assert.match(yesEnv.result.approval?.by ?? '', /^cli client \(pid \d+, uid \d+/);
    assert.equal((await json(['--vault', 'main', 'stat', '/yes-marker'])).json.type, 'file');

    const no = run('no-marker');
    const id = await waiting('no-marker');
    assert.equal((await json(['deny', id])).json.settled, true);
    const noResult = await no;
    assert.equal(noResult.code, 126);
    assert.equal(envelopeOf(noResult.stdout).result.approval?.outcome, 'denied');
    assert.equal((await json(['--vault', 'main', 'stat', '/no-marker'])).json.error, 'NotFound', 'the denied command never ran');
    const again = await json(['approve', id]);
    assert.equal(again.json.error, 'NotFound', 'a settled request cannot be answered twice');
    silent.close();
  });

  test('with no approver connected the request is denied at once, with a reason', async () => {
    const r = await cli(['--json', '--vault', 'main', 'proxy', 'exec', '--shell', 'git push origin main']);
    const env = envelopeOf(r.stdout);
    assert.equal(r.code, 126);
    assert.equal(env.result.approval?.outcome, 'no_approver');
    assert.match(env.result.error?.message ?? '', /no approver/);
  });

  test('two clients see vault changes as events, from the CLI and from a write through a mount', async () => {
    const seen: Array<{ vault: string; kind: string; changes: Array<{ op: string; path: string | null; surface: string }> }> = [];
    const seen2: typeof seen = [];
    await connectClient({ name: 'watcher 1', setup: (c) => c.onNotification("vault/changed", (n: (typeof seen)[0]) => void seen.push(n)) });
    await connectClient({ name: 'watcher 2', setup: (c) => c.onNotification("vault/changed", (n: (typeof seen)[0]) => void seen2.push(n)) });
    await json(['--vault', 'main', 'write', '/from-cli.txt', 'x']);
    const has = (list: typeof seen, path: string, surface: string) => list.some((n) => n.vault === 'main' && n.changes.some((c) => c.path === path && c.surface === surface));
    assert.ok(await waitFor(() => has(seen, '/from-cli.txt', 'cli') && has(seen2, '/from-cli.txt', 'cli'), 5000), JSON.stringify(seen));
    // A write through a mount served by its own process.
    const r = await cli(['--json', '--vault', 'main', 'proxy', 'exec', '--keep-mount', '--', 'sh', '-c', 'echo m > through-mount.txt']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(await waitFor(() => has(seen, '/through-mount.txt', 'fuse') && has(seen2, '/through-mount.txt', 'fuse'), 5000));
    await json(['vault', 'create', 'newcomer']);
    assert.ok(await waitFor(() => seen.some((n) => n.vault === 'newcomer' && n.kind === 'created'), 5000));
    await json(['vault', 'delete', 'newcomer', '--yes']);
    assert.ok(await waitFor(() => seen.some((n) => n.vault === 'newcomer' && n.kind === 'deleted'), 5000));
  });

  test('malformed frames, unknown methods, invalid params and oversized messages get JSON-RPC errors; the host serves on', async () => {
    const c = await connectClient({ name: 'prober' });
    await assert.rejects(c.conn.sendRequest('no/such', {}), (e: { code: number }) => e.code === -32601);
    await assert.rejects(c.conn.sendRequest('approval/answer', { id: 5 }), (e: { code: number; data: { error: string } }) => e.code === -32602 && e.data.error === 'InvalidInput');
    const raw = async (bytes: string) =>
      new Promise<string>((resolve) => {
        const s = connect(JSON.parse(statusSocket).socket as string);
        let got = '';
        s.on('data', (d) => (got += d.toString()));
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        s.on('connect', () => s.write(bytes));
        setTimeout(() => s.destroy(), 3000);
      });
    const statusSocket = (await cli(['--json', 'host', 'status'])).stdout;
    const garbage = await raw('Content-Length: 10\r\n\r\n{not json}');
    assert.match(garbage, /-32700/, garbage);
    const noLength = await raw('Hello: there\r\n\r\n{}');
    assert.match(noLength, /Content-Length/);
    const huge = await raw(`Content-Length: ${1024 ** 3}\r\n\r\n{`);
    assert.match(huge, /-32600/);
    assert.match(huge, /limit/);
    // The host is still there for everyone else.
    const s = await c.callHost('host/status', {});
    assert.equal(s.pid, host.pid);
  });

  test('a client that disconnects mid-run does not stop other clients\' runs', async () => {
    const a = await connectClient({ name: 'leaver' });
    const b = await connectClient({ name: 'stayer' });
    const left = a.call('exec/run', { vault: 'main', command: { argv: ['sleep', '5'] } }).catch(() => 'disconnected');
    const stays = b.call('exec/run', { vault: 'main', command: { argv: ['sh', '-c', 'sleep 1; echo done'] } });
    await new Promise((r) => setTimeout(r, 400));
    a.close();
    const env = await stays;
    assert.equal(env.result.state, 'completed');
    assert.equal(env.result.stdout, 'done\n');
    assert.equal(await left, 'disconnected');
  });

  test('exec/list: a client that connects later sees a run going on with its output so far, then its envelope', async () => {
    const runner = await connectClient({ name: 'runner' });
    const running = runner.call('exec/run', { vault: 'main', command: { argv: ['sh', '-c', 'echo first; echo oops >&2; sleep 1.5; echo second'] } });
    const late = await connectClient({ name: 'late window' });
    let live: Awaited<ReturnType<typeof late.callHost<'exec/list'>>>['runs'][number] | undefined;
    await waitFor(async () => {
      live = (await late.callHost('exec/list', {})).runs.find((r) => r.command.startsWith('sh -c echo first') && r.envelope === null && r.stdout.includes('first') && r.stderr.includes('oops'));
      return live !== undefined;
    }, 10_000);
    // (Its two pipes are read apart: the wait is for both, stdout's line may come first.)
    assert.ok(live, 'the running run is listed with its output so far');
    assert.equal(live.state, 'executing');
    assert.equal(live.stdout, 'first\n');
    assert.equal(live.stderr, 'oops\n');
    assert.equal(live.vault, 'main');
    assert.match(live.surface, /^rpc:runner/);
    const env = await running;
    const { runs } = await late.callHost('exec/list', { limit: 1 });
    assert.equal(runs.length, 1, 'nothing else runs now: the newest finished run only');
    assert.equal(runs[0]!.id, env.id);
    assert.equal(runs[0]!.state, 'completed');
    assert.equal(runs[0]!.envelope?.result.stdout, 'first\nsecond\n');
    await assert.rejects(late.callHost('exec/list', { limit: 0 }), /limit|InvalidInput|too small/i);
  });

  test('a run id names one run: a second exec/run with an id in use (running or remembered) is refused and runs nothing', async () => {
    const c = await connectClient({ name: 'ids' });
    const id = randomUUID();
    const first = c.call('exec/run', { id, vault: 'main', command: { argv: ['sh', '-c', 'sleep 1; echo first'] } });
    await waitFor(async () => (await c.callHost('exec/list', {})).runs.some((r) => r.id === id), 10_000);
    await assert.rejects(c.call('exec/run', { id, vault: 'main', command: { argv: ['sh', '-c', 'echo second > second.txt'] } }), /InvalidInput|exists already/);
    assert.equal((await first).result.stdout, 'first\n');
    await assert.rejects(c.call('exec/run', { id, vault: 'main', command: { argv: ['sh', '-c', 'echo third > second.txt'] } }), /exists already/);
    await assert.rejects(c.call('fs/stat', { vault: 'main', path: '/second.txt' }), /no such file|NotFound/i);
    c.close();
  });

  test('cancelling an exec/run request stops the command like a timeout, and answers with the cancelled envelope', async () => {
    const c = await connectClient({ name: 'canceller' });
    const ac = new AbortController();
    const pending = c.call('exec/run', { vault: 'main', command: { argv: ['sh', '-c', 'echo $$; sleep 30'] } }, ac.signal);
    await new Promise((r) => setTimeout(r, 1000));
    ac.abort();
    const env = await pending;
    assert.equal(env.result.state, 'cancelled');
    assert.equal(env.result.cancelled, true);
    assert.ok(env.result.duration_ms < 10_000);
    assert.deepEqual(groupMembers(Number(env.result.stdout.trim())), [], 'nothing of the command survives');
    assert.equal((await c.callHost('host/status', {})).running_execs, 0);
  });

  test('stopping the host unmounts what it mounted and removes its socket and record; the CLI then works in-process', async () => {
    const status = await json(['host', 'status']);
    const kept = (status.json.mounts as Array<{ mountpoint: string; owner: string }>).filter((m) => m.owner === 'host');
    assert.ok(kept.length >= 1, 'the --keep-mount run of an earlier test left a mount the host owns');
    await json(['host', 'stop']);
    assert.equal(await host.stop(), 0);
    assert.equal(hostRunning(home), false);
    const mounts = (await sh('cat', ['/proc/self/mounts'])).stdout;
    for (const m of kept) assert.ok(!mounts.includes(m.mountpoint), `${m.mountpoint} was unmounted`);
    const r = await cli(['--json', '--vault', 'main', 'proxy', 'exec', '--', 'cat', 'a.txt']);
    assert.equal(envelopeOf(r.stdout).result.stdout, 'one');
    host = await startHost(home);
  });

  test('a host killed with SIGKILL: the CLI falls back and clears its record, a new host starts, no vault is damaged', async () => {
    host.child.kill('SIGKILL');
    await host.stop();
    assert.equal(hostRunning(home), true, 'a killed host leaves its record behind');
    const r = await cli(['--json', '--vault', 'main', 'proxy', 'exec', '--', 'cat', 'a.txt']);
    assert.equal(envelopeOf(r.stdout).result.stdout, 'one', 'the CLI worked in-process');
    assert.equal(hostRunning(home), false, 'and cleared the stale record');
    host = await startHost(home);
    const s = await json(['host', 'status']);
    assert.equal(s.json.pid, host.pid);
    const check = await sh('sqlite3', [`${home}/vaults/main.avfs`, 'PRAGMA integrity_check']);
    assert.equal(check.stdout.trim(), 'ok');
  });

  test('--stdio: stdout carries only the protocol; once stdin closes and nothing else holds it, the host exits after --idle-exit', async () => {
    const t2 = tempDir('avfs-host-stdio-');
    try {
      const child = spawn(process.execPath, [CLI, 'host', '--stdio', '--idle-exit', '300'], { env: { ...process.env, AVFS_HOME: t2.dir }, stdio: ['pipe', 'pipe', 'pipe'] });
      const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = await import('vscode-jsonrpc/node');
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
      const logs: string[] = [];
      conn.onNotification("log", (n: { message: string }) => void logs.push(n.message));
      conn.listen();
      const hello = (await conn.sendRequest('client/hello', { name: 'parent', kind: 'vscode' })) as { host_pid: number };
      assert.equal(hello.host_pid, child.pid);
      const status = (await conn.sendRequest('host/status', {})) as { clients: Array<{ name: string }> };
      assert.deepEqual(status.clients.map((c) => c.name), ['parent']);
      assert.ok(hostRunning(t2.dir));
      // Every byte on stdout is a framed message.
      assert.match(stdout, /^(Content-Length: \d+\r\n\r\n\{.*?\})+$/s);
      const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
      conn.dispose();
      const closedAt = Date.now();
      child.stdin.end();
      assert.equal(await exited, 0);
      assert.ok(Date.now() - closedAt >= 300, 'it waited out its grace period');
      assert.equal(hostRunning(t2.dir), false);
    } finally {
      t2.cleanup();
    }
  });
});
