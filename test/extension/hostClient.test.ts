// The extension's host client against the real vault host (dist/avfs.js host), as child processes
// on real avfs homes: spawn and hello, joining a host that already runs, restart after a crash with
// the 1/2/4 s backoff, refusing a Node that cannot run the host, and stopping the host it started.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { HostClient, type Logger } from '../../extension/client/hostClient';
import type { HostState } from '../../extension/client/hostState';
import { HostCallError } from '../../extension/errors';
import { alive, CLI, runCli, tempDir } from '../helpers';

function client(home: string, nodePath = process.execPath, requestTimeoutMs = 10_000): { c: HostClient; states: HostState[]; lines: string[] } {
  const lines: string[] = [];
  const log: Logger = {
    trace: (m) => lines.push(`trace ${m}`),
    debug: (m) => lines.push(`debug ${m}`),
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
  };
  const c = new HostClient({ settings: () => ({ nodePath, home, requestTimeoutMs, idleExitMs: 300 }), hostScript: CLI, clientName: 'node:test client', log });
  const states: HostState[] = [];
  c.onDidChangeState((s) => states.push(s));
  return { c, states, lines };
}

async function until(what: string, check: () => boolean, ms = 20_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const readyPid = (c: HostClient) => (c.state.name === 'ready' ? c.state.pid : undefined);
/** The state's name, read afresh (an assertion on `c.state.name` would narrow it for the rest of a test). */
const stateOf = (c: HostClient): string => c.state.name;

test('spawns the host on first request, says hello; on dispose it leaves, and the host, with nothing else to serve, exits after its idle grace', async () => {
  const t = tempDir();
  const { c, states, lines } = client(t.dir);
  try {
    assert.equal(stateOf(c), 'idle');
    const status = await c.hostRequest('host/status', {});
    assert.equal(stateOf(c), 'ready');
    assert.equal(status.pid, readyPid(c));
    assert.equal(status.home, t.dir);
    assert.deepEqual(
      status.clients.map((x) => [x.name, x.kind, x.approver]),
      [['node:test client', 'vscode', false]],
    );
    assert.deepEqual(states.map((s) => s.name), ['starting', 'ready']);
    assert.ok(lines.some((l) => /^info \[host\] .*host \d+ serving/.test(l)), lines.join('\n'));
    // The CLI in a terminal finds the same host.
    const cli = await runCli(['--json', 'host', 'status'], { home: t.dir });
    assert.equal(JSON.parse(cli.stdout).pid, status.pid);
    await c.dispose();
    assert.equal(stateOf(c), 'stopped');
    await until('the idle host to exit', () => !alive(status.pid), 10_000);
    assert.equal(JSON.parse((await runCli(['--json', 'host', 'status'], { home: t.dir })).stdout).running, false);
  } finally {
    await c.dispose();
    t.cleanup();
  }
});

test('joins a host that already serves the home over its socket, and starts its own once that one is gone', async () => {
  const t = tempDir();
  const terminal = spawn(process.execPath, [CLI, 'host'], { env: { ...process.env, AVFS_HOME: t.dir }, stdio: 'ignore' });
  const { c, lines } = client(t.dir);
  try {
    for (let i = 0; i < 200 && !JSON.parse((await runCli(['--json', 'host', 'status'], { home: t.dir })).stdout).running; i++) await new Promise((r) => setTimeout(r, 50));
    await c.hostRequest('host/status', {});
    assert.equal(c.state.name === 'ready' && c.state.via, 'socket');
    assert.equal(readyPid(c), terminal.pid);
    assert.ok(lines.some((l) => /a vault host already serves this home: connecting to its socket/.test(l)));
    terminal.kill('SIGTERM');
    await until('its own host', () => c.state.name === 'ready' && c.state.via === 'spawned', 30_000);
    assert.notEqual(readyPid(c), terminal.pid);
  } finally {
    terminal.kill('SIGKILL');
    await c.dispose();
    t.cleanup();
  }
});

test('a killed host is restarted after 1 s, then 2 s, then 4 s; after that the client gives up until asked', async () => {
  const t = tempDir();
  const { c, states } = client(t.dir);
  try {
    await c.hostRequest('host/status', {});
    const delays: number[] = [];
    for (let crash = 0; crash < 4; crash++) {
      const pid = readyPid(c)!;
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      if (crash === 3) break;
      await until(`restart ${crash + 1}`, () => readyPid(c) !== undefined && readyPid(c) !== pid, 30_000);
      delays.push(Date.now() - killedAt);
    }
    await until('giving up', () => c.state.name === 'failed', 30_000);
    assert.match(c.state.name === 'failed' ? c.state.reason : '', /killed by SIGKILL; it exited 4 times in a row/);
    const restarts = states.filter((s): s is Extract<HostState, { name: 'restarting' }> => s.name === 'restarting');
    assert.deepEqual(restarts.map((s) => s.delayMs), [1000, 2000, 4000]);
    // Each restart waited its delay (and took less than a few seconds more to be ready).
    delays.forEach((ms, i) => assert.ok(ms >= restarts[i]!.delayMs, `restart ${i + 1} after ${ms} ms`));
    // A request now fails at once, saying why; Restart Host brings it back.
    await assert.rejects(c.hostRequest('host/status', {}), (e: Error) => /exited 4 times in a row/.test(e.message));
    await c.restart();
    assert.equal(stateOf(c), 'ready');
  } finally {
    await c.dispose();
    t.cleanup();
  }
});

test('a Node that cannot run the host fails at once, with no restarts, and names the setting', async () => {
  const t = tempDir();
  const { c, states } = client(t.dir, '/nonexistent/bin/node');
  try {
    await assert.rejects(c.hostRequest('host/status', {}), (e: Error) => /"avfs\.nodePath" \("\/nonexistent\/bin\/node"\) cannot be run \(ENOENT\)/.test(e.message));
    assert.deepEqual(states.map((s) => s.name), ['starting', 'failed']);
  } finally {
    await c.dispose();
    t.cleanup();
  }
});

test("a refused request arrives as the host's typed error", async () => {
  const t = tempDir();
  const { c } = client(t.dir);
  try {
    await assert.rejects(
      c.hostRequest('client/hello', { name: 'x', kind: 'bogus' as 'other' }),
      (e: unknown) => e instanceof HostCallError && e.kind === 'InvalidInput' && /kind/.test(e.message),
    );
  } finally {
    await c.dispose();
    t.cleanup();
  }
});

test('a host that stops answering fails each request after its timeout, with Timeout; it answers again once it runs', async () => {
  const t = tempDir();
  const { c } = client(t.dir, process.execPath, 1500);
  try {
    // Starting the host may take longer than the short timeout on a loaded machine: not what is tested.
    await c.hostRequest('host/status', {}, { timeoutMs: 30_000 });
    const pid = readyPid(c)!;
    process.kill(pid, 'SIGSTOP');
    try {
      const started = Date.now();
      await assert.rejects(
        c.hostRequest('host/status', {}),
        (e: unknown) => e instanceof HostCallError && e.kind === 'Timeout' && e.message === 'The vault host did not answer host/status within 1.5 s.',
      );
      assert.ok(Date.now() - started >= 1500);
      // A timeout given for one call (restore and diff get longer ones) is the one that counts.
      await assert.rejects(c.hostRequest('host/status', {}, { timeoutMs: 300 }), (e: unknown) => e instanceof HostCallError && /within 0\.3 s/.test(e.message));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    assert.equal((await c.hostRequest('host/status', {})).pid, pid);
  } finally {
    await c.dispose();
    t.cleanup();
  }
});
