/**
 * `avfs proxy exec` when a live mount of the vault is up: the CLI hands the run to the process
 * serving that mount (host/proxy/mountExec.ts). The run must be the one a call in its own process
 * makes: the caller's environment and input, streamed output, approvals at the caller's terminal,
 * cancellation, exit codes, and a typed error when the server goes away mid-run.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { EXEC_EXIT, ExecutionEnvelope } from '../../host/protocol/exec';
import { MountRegistry, pidAlive } from '../../host/fuse/registry';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { groupMembers } from '../../host/proxy/processGroup';
import { AvfsHome } from '../../host/store/home';
import { CLI, runCli, runJson, tempDir } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';

/** The parent of a process (from /proc), or undefined when it is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

describe('avfs proxy exec with a live mount: run by the mount server', () => {
  const t = tempDir('avfs-livemount-');
  const home = t.dir;
  const json = (args: string[]) => runJson(args, { home });
  let server = 0;

  async function exec(args: string[], opts: { env?: Record<string, string>; input?: string; vault?: string } = {}) {
    // Unsandboxed: these tests tell who ran the command by its parent's pid, which a sandbox's pid
    // namespace hides (test/sandbox runs commands through a mount server sandboxed).
    const r = await runCli(['--json', '--vault', opts.vault ?? 'live', 'proxy', 'exec', '--sandbox', 'none', ...args], { home, ...(opts.env ? { env: opts.env } : {}), ...(opts.input !== undefined ? { input: opts.input } : {}) });
    let doc: unknown;
    try {
      doc = JSON.parse(r.stdout);
    } catch {
      throw new Error(`not exactly one JSON document (exit ${r.code}):\n${r.stdout}\nstderr: ${r.stderr}`);
    }
    return { env: ExecutionEnvelope.parse(doc), code: r.code, stderr: r.stderr };
  }

  /** The command printed its parent's pid (the runner, alive after the run): whose child is it? */
  const ranInServer = (ppid: string) => parentOf(Number(ppid.trim())) === server;

  /** A `proxy exec --json` call in the background, returned once `running` (a command line) runs. */
  async function runningExec(script: string, running: string) {
    const child = spawn(process.execPath, [CLI, '--json', '--vault', 'live', 'proxy', 'exec', '--sandbox', 'none', '--', 'sh', '-c', script], {
      env: { ...process.env, AVFS_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const ended = new Promise<{ code: number; out: string }>((r) => child.on('close', (c) => r({ code: c ?? -1, out })));
    assert.ok(await waitFor(() => sh('pgrep', ['-fx', running]).then((r) => r.stdout.trim() !== ''), 15_000), `${running} runs`);
    return { child, ended };
  }

  before(async () => {
    assert.equal((await json(['vault', 'create', 'live'])).code, 0);
    const made = await exec(['--keep-mount', '--', 'true']);
    assert.equal(made.env.result.state, 'completed', made.env.result.stderr);
    const list = (await json(['mounts'])).json.mounts as Array<{ vault: string; pid: number; mountpoint: string }>;
    const live = list.find((m) => m.vault === 'live')!;
    server = live.pid;
    assert.ok(server > 0);
    // Whoever connects runs commands in the vault: only its owner may.
    const socket = new MountRegistry(new AvfsHome(home)).execSocketOf(live.mountpoint);
    assert.equal(statSync(socket).mode & 0o777, 0o600);
  });
  after(async () => {
    await sh('bash', ['-c', `for m in $(grep -o "${home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    t.cleanup();
  });

  test('the run is handed to the mount server, with the caller\'s environment; the change summary is the same', async () => {
    const { env, code } = await exec(['--env', 'GIVEN=1', '--', 'sh', '-c', 'echo $PPID >&2; echo "$CALLER_VAR $GIVEN $AVFS_VAULT $PWD"; echo x > made.txt'], { env: { CALLER_VAR: 'from-caller' } });
    assert.equal(code, 0, env.result.stderr);
    assert.ok(ranInServer(env.result.stderr), `the command ran under the mount server (pid ${server})`);
    assert.equal(env.result.mount_reused, true);
    assert.equal(env.result.stdout, `from-caller 1 live ${env.result.mountpoint}\n`);
    assert.deepEqual(env.result.changed_files, ['/made.txt']);
    // --clean-env keeps only what tools need, also here.
    const clean = await exec(['--clean-env', '--', 'sh', '-c', 'echo "[$CALLER_VAR]"'], { env: { CALLER_VAR: 'from-caller' } });
    assert.equal(clean.env.result.stdout, '[]\n');
  });

  test('--stdin feeds the caller\'s input; /dev/stdout and /dev/stderr are real pipes', async () => {
    const { env } = await exec(['--stdin', '--', 'sh', '-c', 'echo $PPID >&2; cat; echo out > /dev/stdout'], { input: 'typed\n' });
    assert.equal(env.result.state, 'completed', env.result.stderr);
    assert.ok(ranInServer(env.result.stderr));
    assert.equal(env.result.stdout, 'typed\nout\n');
  });

  test('without --json the output streams through, then the summary and the command\'s exit code', async () => {
    const r = await runCli(['--vault', 'live', 'proxy', 'exec', '--sandbox', 'none', '--', 'sh', '-c', 'echo $PPID > ppid.txt; echo out; echo err >&2; exit 4'], { home });
    assert.equal(r.code, 4);
    assert.equal(r.stdout, 'out\n');
    assert.match(r.stderr, /^err\navfs: exit 4 in \d+ ms.*\n {2}A {2}\/ppid\.txt {2}\(\d+ B\)\n/);
    const ppid = (await runCli(['--vault', 'live', 'cat', '/ppid.txt'], { home })).stdout;
    assert.ok(ranInServer(ppid));
  });

  test('approvals: denied without a terminal (--no-prompt), asked at the caller\'s terminal otherwise', async () => {
    const denied = await exec(['--no-prompt', '--shell', 'touch pushed.txt && git push origin nowhere']);
    assert.equal(denied.code, EXEC_EXIT.denied);
    assert.equal(denied.env.result.approval?.outcome, 'no_approver');
    assert.match(denied.env.result.error!.message, /needs approval: no approver was reachable/);
    assert.equal((await json(['--vault', 'live', 'stat', '/pushed.txt'])).json.error, 'NotFound');
    // `script` gives the CLI a real terminal; the answer is typed into it.
    const yes = await sh('script', ['-qec', `${process.execPath} ${CLI} --json --vault live proxy exec --sandbox none --shell 'echo $PPID > asked.txt && git push origin nowhere'`, '/dev/null'], {
      env: { AVFS_HOME: home },
      input: 'y\n',
    });
    assert.match(yes.stdout, /needs your approval/);
    const env = ExecutionEnvelope.parse(JSON.parse(yes.stdout.slice(yes.stdout.indexOf('{'))));
    assert.equal(env.result.approval?.outcome, 'approved');
    // Recorded as the process the kernel names on the socket, with the terminal it has.
    assert.match(env.result.approval?.by ?? '', /^terminal client \(pid \d+, uid \d+, \/dev\/pts\/\d+\)$/);
    assert.ok(ranInServer((await runCli(['--vault', 'live', 'cat', '/asked.txt'], { home })).stdout));
  });

  test('cancelling the CLI (SIGINT) stops the command in the server and prints the cancelled envelope', async () => {
    const run = await runningExec('echo $$; echo $PPID >&2; sleep 100', 'sleep 100');
    run.child.kill('SIGINT');
    const { code, out } = await run.ended;
    const env = ExecutionEnvelope.parse(JSON.parse(out));
    assert.equal(code, EXEC_EXIT.cancelled);
    assert.equal(env.result.state, 'cancelled');
    assert.ok(ranInServer(env.result.stderr));
    assert.deepEqual(groupMembers(Number(env.result.stdout.trim())), []);
  });

  test('a server that dies mid-run: the CLI ends with a typed error, the run\'s guard stops the command and records its end, the next call runs by itself', async () => {
    const run = await runningExec('sleep 101', 'sleep 101');
    const sleeping = Number((await sh('pgrep', ['-fx', 'sleep 101'])).stdout.trim());
    process.kill(server, 'SIGKILL');
    const { code, out } = await run.ended;
    const err = JSON.parse(out) as { error: string; message: string };
    assert.equal(err.error, 'OwnerDied');
    assert.match(err.message, /ended the connection before the run ended/);
    assert.equal(code, ERROR_TABLE.OwnerDied.exit);
    assert.ok(await waitFor(() => !pidAlive(sleeping), 30_000, 50), 'the command is stopped');
    let failed: { details: { error: string; message: string } } | undefined;
    await waitFor(async () => {
      const audit = await json(['--vault', 'live', 'audit']);
      failed = (audit.json.entries as Array<{ operation: string; details: { error: string; message: string } }>).find((e) => e.operation === 'exec_failed' && e.details.error === 'OwnerDied');
      return failed !== undefined;
    }, 30_000, 200);
    assert.match(failed?.details.message ?? '', new RegExp(`the server of a mount of live \\(pid ${server}\\) died`));
    // The dead mount is not used again: the next call makes its own.
    const next = await exec(['--', 'sh', '-c', 'echo fine']);
    assert.equal(next.env.result.state, 'completed', next.env.result.stderr);
    assert.equal(next.env.result.mount_reused, false);
  });
});
