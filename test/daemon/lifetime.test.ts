/**
 * How long a vault host lives, as a user meets it: the window that started it (a parent speaking
 * stdio) goes away, killed with its whole process group as an editor disposes a window's extension
 * host, while another client's run is in flight; a host with nothing left to serve exits after its
 * grace period; several windows starting at once end up on one host. Real host processes, real
 * sockets, the real CLI, the extension's own HostClient.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { HostClient, type Logger } from '../../extension/client/hostClient';
import { alive, CLI, runCli, runJson, tempDir } from '../helpers';
import { waitFor } from '../fuse/helpers';
import { hostRunning } from './helpers';

/**
 * A stand-in for an editor window: a process in a group of its own that spawns `avfs host --stdio`
 * as the extension does (transport.ts: detached, stdio pipes), says hello over stdio and prints the
 * host's pid. Killing its group is what an editor does to a window's extension host.
 */
const WINDOW = `
const { spawn } = require('node:child_process');
const rpc = require(${JSON.stringify(require.resolve('vscode-jsonrpc/node'))});
const child = spawn(process.execPath, [${JSON.stringify(CLI)}, 'host', '--stdio', '--idle-exit', process.argv[1]], { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
child.stderr.resume();
const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
conn.listen();
conn.sendRequest('client/hello', { name: 'window', kind: 'vscode', approver: true }).then((h) => console.log(JSON.stringify({ host: h.host_pid })));
setInterval(() => undefined, 1000);
`;

function openWindow(home: string, idleExitMs: number): Promise<{ windowPid: number; hostPid: number }> {
  const w = spawn(process.execPath, ['-e', WINDOW, String(idleExitMs)], { env: { ...process.env, AVFS_HOME: home }, stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  return new Promise((resolve, reject) => {
    let out = '';
    w.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve({ windowPid: w.pid!, hostPid: (JSON.parse(line) as { host: number }).host });
    });
    w.on('exit', (code) => reject(new Error(`the window exited (${code}) before its host answered: ${out}`)));
  });
}

/** `avfs host` processes serving `home` (read from /proc: what is really running). */
function hostsOf(home: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (state.slice(state.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (argv.includes(CLI) && argv.includes('host') && env.includes(`AVFS_HOME=${home}`)) pids.push(Number(name));
    } catch {
      // It ended while we looked.
    }
  }
  return pids;
}

test("the window that started the host is killed with its process group: another client's run completes (exit 0), then the idle host exits", async () => {
  const t = tempDir('avfs-life-');
  const home = t.dir;
  let hostPid = 0;
  try {
    await runJson(['vault', 'create', 'main'], { home });
    const window = await openWindow(home, 800);
    hostPid = window.hostPid;
    // An agent's run through the host, started from a terminal: it outlasts the window. It waits for
    // a file the test writes into the vault once the window is gone (a fixed sleep could end first
    // on a loaded machine, and the idle host would then rightly exit).
    const gate = 'for i in $(seq 1 600); do [ -e go ] && break; sleep 0.1; done; echo finished > out.txt; echo finished';
    const run = runCli(['--vault', 'main', 'proxy', 'exec', '--shell', gate], { home });
    assert.ok(await waitFor(async () => JSON.parse((await runCli(['--json', 'host', 'status'], { home })).stdout).running_execs === 1, 20_000), 'the run started at the host');
    process.kill(-window.windowPid, 'SIGKILL');
    assert.ok(await waitFor(() => !alive(window.windowPid), 5_000));
    const status = await runJson(['host', 'status'], { home });
    assert.equal(status.json.pid, hostPid, `the same host still serves: ${JSON.stringify(status.json)}`);
    assert.deepEqual((status.json.clients as Array<{ name: string }>).map((c) => c.name).filter((n) => n === 'window'), [], 'the window is no longer a client');
    assert.equal((await runCli(['--vault', 'main', 'write', '/go', 'now'], { home })).code, 0);
    const r = await run;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'finished\n');
    assert.equal((await runCli(['--vault', 'main', 'cat', '/out.txt'], { home })).stdout, 'finished\n');
    // Nothing holds it now: no window, no run, no approval, no mount. It goes after its grace period.
    assert.ok(await waitFor(() => !alive(hostPid), 15_000), 'the idle host exited');
    assert.equal(hostRunning(home), false, 'and removed its record');
  } finally {
    if (hostPid && alive(hostPid)) process.kill(hostPid, 'SIGKILL');
    t.cleanup();
  }
});

test('a pending approval and a connected client each keep an idle host up; it exits once neither is left', async () => {
  const t = tempDir('avfs-life-');
  const home = t.dir;
  let hostPid = 0;
  try {
    await runJson(['vault', 'create', 'main'], { home });
    const window = await openWindow(home, 500);
    hostPid = window.hostPid;
    // The window (an approver) is asked; it never answers. Then it is killed.
    const run = runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--shell', 'git push origin main'], { home });
    assert.ok(await waitFor(async () => JSON.parse((await runCli(['--json', 'approvals'], { home })).stdout).pending.length === 1, 20_000), 'the request waits');
    process.kill(-window.windowPid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(alive(hostPid), true, 'a pending approval holds the host past its grace period');
    const id = (JSON.parse((await runCli(['--json', 'approvals'], { home })).stdout) as { pending: Array<{ id: string }> }).pending[0]!.id;
    const denied = await runCli(['deny', id], { home });
    assert.equal(denied.code, 0, denied.stderr);
    const envelope = JSON.parse((await run).stdout) as { result: { state: string } };
    assert.equal(envelope.result.state, 'denied');
    assert.ok(await waitFor(() => !alive(hostPid), 15_000), 'the idle host exited');
  } finally {
    if (hostPid && alive(hostPid)) process.kill(hostPid, 'SIGKILL');
    t.cleanup();
  }
});

test('three windows starting at once: one host, all three on it, the others told where it is (no ENOENT)', async () => {
  const t = tempDir('avfs-life-');
  const home = t.dir;
  const lines: string[] = [];
  const log: Logger = { trace: () => undefined, debug: () => undefined, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(`error ${m}`) };
  const windows = [1, 2, 3].map(
    (n) => new HostClient({ settings: () => ({ nodePath: process.execPath, home, requestTimeoutMs: 30_000, idleExitMs: 500 }), hostScript: CLI, clientName: `window ${n}`, log }),
  );
  let pids: number[] = [];
  try {
    const statuses = await Promise.all(windows.map((w) => w.hostRequest('host/status', {})));
    pids = [...new Set(statuses.map((s) => s.pid))];
    assert.equal(pids.length, 1, `one host for all: ${pids.join(', ')}`);
    const last = await windows[0]!.hostRequest('host/status', {});
    assert.deepEqual(last.clients.map((c) => c.name).sort(), ['window 1', 'window 2', 'window 3']);
    assert.deepEqual(hostsOf(home), pids, 'one host process serves the home');
    assert.equal(lines.filter((l) => l.startsWith('error')).length, 0, lines.join('\n'));
    assert.ok(!lines.some((l) => /ENOENT|ECONNREFUSED/.test(l)), lines.join('\n'));
    // Every window leaves: the host they shared exits once idle.
    await Promise.all(windows.map((w) => w.dispose()));
    assert.ok(await waitFor(() => !alive(pids[0]!), 15_000), 'the host exited once all windows left');
  } finally {
    await Promise.all(windows.map((w) => w.dispose()));
    for (const p of pids) if (alive(p)) process.kill(p, 'SIGKILL');
    t.cleanup();
  }
});

test('a --stdio host whose parent stopped reading (its stdout and stderr pipes broken) keeps serving: writing to them does not end it', async () => {
  const t = tempDir('avfs-life-');
  const home = t.dir;
  const child = spawn(process.execPath, [CLI, 'host', '--stdio', '--idle-exit', '60000'], { env: { ...process.env, AVFS_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
  try {
    await runJson(['vault', 'create', 'main'], { home });
    assert.ok(await waitFor(() => hostRunning(home), 20_000), 'the host started');
    // The parent's ends of stdout and stderr close (its stdin stays open: the parent is not gone yet).
    child.stdout!.destroy();
    child.stderr!.destroy();
    // Each write is told to every client, the stdio one too, and logged: writes into the broken pipes.
    for (let i = 0; i < 5; i++) assert.equal((await runCli(['--vault', 'main', 'write', `/f${i}.txt`, 'x'], { home })).code, 0);
    await new Promise((r) => setTimeout(r, 500));
    const status = await runJson(['host', 'status'], { home });
    assert.equal(status.json.pid, child.pid, `the host still serves: ${JSON.stringify(status.json)}`);
    assert.equal(child.exitCode, null);
    assert.equal(child.signalCode, null);
  } finally {
    child.kill('SIGKILL');
    t.cleanup();
  }
});
