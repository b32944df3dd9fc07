/**
 * `avfs proxy exec` through the real CLI: real mounts, real git/npm/python, real process groups.
 * Every call must print exactly one ExecutionEnvelope (validated against its schema) and exit
 * with the documented code.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EXEC_EXIT, ExecutionEnvelope } from '../../host/protocol/exec';
import { groupMembers } from '../../host/proxy/processGroup';
import { CLI, runCli, runJson, tempDir } from '../helpers';
import { sh } from '../fuse/helpers';

describe('avfs proxy exec', () => {
  const t = tempDir('avfs-exec-');
  const home = t.dir;
  const json = (args: string[]) => runJson(args, { home });
  const cli = (args: string[], input?: string) => runCli(args, { home, ...(input !== undefined ? { input } : {}) });

  /** Runs proxy exec with --json; returns the validated envelope and the exit code. */
  async function exec(vault: string, args: string[]): Promise<{ env: ExecutionEnvelope; code: number; stderr: string }> {
    const r = await cli(['--json', '--vault', vault, 'proxy', 'exec', ...args]);
    let doc: unknown;
    try {
      doc = JSON.parse(r.stdout);
    } catch {
      throw new Error(`not exactly one JSON document (exit ${r.code}):\n${r.stdout}\nstderr: ${r.stderr}`);
    }
    const env = ExecutionEnvelope.parse(doc);
    return { env, code: r.code, stderr: r.stderr };
  }

  const paths = (entries: Array<{ path: string }>) => entries.map((e) => e.path);

  before(async () => {
    assert.equal((await json(['vault', 'create', 'base'])).code, 0);
    await json(['--vault', 'base', 'write', '-p', '/src/app.py', 'print("v1")\n']);
    await json(['--vault', 'base', 'write', '/README.md', '# demo\n']);
  });
  after(async () => {
    await sh('bash', ['-c', `for m in $(grep -o "${home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    t.cleanup();
  });

  test('git init and commit in a fork: the envelope lists exactly what git wrote, committed through the mount', async () => {
    assert.equal((await json(['vault', 'fork', 'base', 'git-task'])).code, 0);
    const { env, code } = await exec('git-task', [
      '--shell',
      'git init -q -b main && git -c user.name=a -c user.email=a@b add -A && git -c user.name=a -c user.email=a@b commit -q -m init && git rev-parse HEAD',
    ]);
    assert.equal(code, 0, env.result.stderr);
    assert.equal(env.result.state, 'completed');
    assert.equal(env.success, true);
    assert.match(env.result.stdout, /^[0-9a-f]{40}\n$/);
    const added = paths(env.result.changes!.added);
    for (const p of ['/.git', '/.git/HEAD', '/.git/index', '/.git/config', '/.git/refs/heads/main']) assert.ok(added.includes(p), `${p} is reported as added`);
    assert.ok(added.some((p) => p.startsWith('/.git/objects/') && p.length > '/.git/objects/xx/'.length), 'the commit objects are reported');
    assert.ok(!added.some((p) => !p.startsWith('/.git')), `only git's files were added: ${added.filter((p) => !p.startsWith('/.git'))}`);
    assert.deepEqual(env.result.changes!.modified, []);
    assert.deepEqual(env.result.changes!.deleted, []);
    // The summary is the vault's own state: every reported file is there, with the reported size.
    const head = env.result.changes!.added.find((e) => e.path === '/.git/HEAD')!;
    assert.equal(head.size, 'ref: refs/heads/main\n'.length);
    assert.equal((await cli(['--vault', 'git-task', 'cat', '/.git/HEAD'])).stdout, 'ref: refs/heads/main\n');
    assert.deepEqual(env.result.changed_files, [...added].sort());
    // The source vault is untouched by the fork's run.
    assert.equal((await json(['--vault', 'base', 'stat', '/.git'])).json.error, 'NotFound');
  });

  test('npm init -y adds exactly package.json, with its size', async () => {
    await json(['vault', 'create', 'npm-task']);
    const { env, code } = await exec('npm-task', ['--cwd', '/app', '--', 'npm', 'init', '-y']);
    assert.equal(code, 0, env.result.stderr);
    assert.deepEqual(paths(env.result.changes!.added), ['/app', '/app/package.json']);
    const pkg = (await cli(['--vault', 'npm-task', 'cat', '/app/package.json'])).stdout;
    assert.equal(env.result.changes!.added[1]!.size, Buffer.byteLength(pkg));
    assert.equal(JSON.parse(pkg).name, 'app');
  });

  test('python writing, modifying, renaming and deleting files: added, modified, renamed, deleted with sizes', async () => {
    await json(['vault', 'fork', 'base', 'py-task']);
    await json(['--vault', 'py-task', 'write', '/old.txt', 'to be deleted']);
    await json(['--vault', 'py-task', 'write', '/move-me.txt', 'moving']);
    const script = [
      'import os',
      "open('out.bin','wb').write(os.urandom(1000000))",
      "open('src/app.py','a').write('print(\"v2\")\\n')",
      "os.rename('move-me.txt','moved.txt')",
      "os.remove('old.txt')",
      // A file left open at exit: its bytes are only flushed when the process dies.
      "f=open('unclosed.txt','w'); f.write('y'*70000); f.flush()",
    ].join('\n');
    const { env, code } = await exec('py-task', ['--', 'python3', '-c', script]);
    assert.equal(code, 0, env.result.stderr);
    const c = env.result.changes!;
    assert.deepEqual(c.added, [
      { path: '/out.bin', type: 'file', size: 1000000 },
      { path: '/unclosed.txt', type: 'file', size: 70000 },
    ]);
    assert.deepEqual(c.modified.map((m) => [m.path, m.size_before, m.size_after, m.content_changed]), [['/src/app.py', 12, 24, true]]);
    assert.deepEqual(c.renamed.map((r) => [r.from, r.to, r.size]), [['/move-me.txt', '/moved.txt', 6]]);
    assert.deepEqual(c.deleted, [{ path: '/old.txt', type: 'file', size: 13 }]);
    assert.deepEqual(env.result.changed_files, ['/move-me.txt', '/moved.txt', '/old.txt', '/out.bin', '/src/app.py', '/unclosed.txt']);
    assert.equal((await json(['--vault', 'py-task', 'stat', '/unclosed.txt'])).json.size, 70000);
  });

  test('a command that writes outside the workspace is denied and never runs', async () => {
    const marker = join(tmpdir(), `avfs-deny-marker-${process.pid}`);
    const { env, code } = await exec('base', ['--shell', `echo pwned > ${marker}`]);
    assert.equal(code, EXEC_EXIT.denied);
    assert.equal(env.result.state, 'denied');
    assert.equal(env.result.decision?.action, 'deny');
    assert.ok(env.result.decision!.categories.includes('host_escape'));
    assert.equal(env.result.exit_code, null);
    assert.equal(env.result.error?.error, 'PolicyDenied');
    assert.deepEqual(env.result.states, ['validating', 'policy', 'denied']);
    assert.equal(existsSync(marker), false, 'the command did not run');
    assert.equal(env.result.mountpoint !== null && existsSync(env.result.mountpoint) && (await sh('mountpoint', ['-q', env.result.mountpoint])).code === 0, false, 'nothing was mounted');
  });

  test('require_approval with no approver reachable is denied with a reason, and nothing runs', async () => {
    const { env, code } = await exec('base', ['--shell', 'touch ran.txt && git push origin main']);
    assert.equal(code, EXEC_EXIT.denied);
    assert.equal(env.result.state, 'denied');
    assert.equal(env.result.decision?.action, 'require_approval');
    assert.equal(env.result.approval?.outcome, 'no_approver');
    assert.equal(env.result.error?.error, 'ApprovalRequired');
    assert.match(env.result.error!.message, /no approver was reachable/);
    assert.equal((await json(['--vault', 'base', 'stat', '/ran.txt'])).json.error, 'NotFound');
  });

  test('a person at a terminal approves once, or denies', async () => {
    // `script` gives the CLI a real terminal; the answer is typed into it.
    const run = (answer: string) =>
      sh('script', ['-qec', `${process.execPath} ${CLI} --json --vault base proxy exec --shell 'touch approved-${answer}.txt && git push origin nowhere'`, '/dev/null'], {
        env: { AVFS_HOME: home },
        input: `${answer}\n`,
      });
    const yes = await run('y');
    assert.match(yes.stdout, /needs your approval/);
    const yesEnv = ExecutionEnvelope.parse(JSON.parse(yes.stdout.slice(yes.stdout.indexOf('{'))));
    assert.equal(yesEnv.result.approval?.outcome, 'approved');
    assert.equal(yesEnv.result.approval?.by, 'terminal');
    assert.equal(yesEnv.result.approval?.scope, 'once');
    assert.equal(yesEnv.result.state, 'completed', 'approved: it ran (git push itself fails: there is no remote)');
    assert.ok(yesEnv.result.checkpoint, 'an approved risky command is checkpointed first');
    assert.equal((await json(['--vault', 'base', 'stat', '/approved-y.txt'])).json.type, 'file');
    const no = await run('n');
    const noEnv = ExecutionEnvelope.parse(JSON.parse(no.stdout.slice(no.stdout.indexOf('{'))));
    assert.equal(noEnv.result.state, 'denied');
    assert.equal(noEnv.result.approval?.outcome, 'denied');
    assert.equal((await json(['--vault', 'base', 'stat', '/approved-n.txt'])).json.error, 'NotFound');
    // Every decision and answer is in the audit trail, from the exec surface.
    const audit = (await json(['--vault', 'base', 'audit', '--limit', '200'])).json.entries as Array<{ operation: string; surface: string; details: Record<string, unknown> }>;
    const approvals = audit.filter((e) => e.operation === 'exec_approval');
    assert.deepEqual(approvals.map((e) => [e.surface, e.details.outcome]).slice(0, 2), [['exec', 'denied'], ['exec', 'approved']]);
    assert.ok(audit.some((e) => e.operation === 'exec_denied' && e.surface === 'exec'));
  });

  test('a time-out stops the whole process group, keeps the partial output and still returns an envelope', async () => {
    const { env, code } = await exec('base', ['--timeout', '1500', '--grace', '500', '--', 'sh', '-c', 'echo started; echo $$ > /dev/stderr; sleep 100 & sleep 100']);
    assert.equal(code, EXEC_EXIT.timed_out);
    assert.equal(env.result.state, 'timed_out');
    assert.equal(env.result.timed_out, true);
    assert.equal(env.result.stdout, 'started\n');
    assert.equal(env.result.signal, 'SIGTERM');
    assert.equal(env.result.exit_code, 128 + 15);
    assert.ok(env.result.duration_ms >= 1400 && env.result.duration_ms < 10_000, `ran ${env.result.duration_ms} ms`);
    const pgid = Number(env.result.stderr.trim());
    assert.ok(pgid > 0);
    assert.deepEqual(groupMembers(pgid), [], 'no process of the command\'s group survives (the background sleep included)');
  });

  test('a process that ignores SIGTERM is killed after the grace period', async () => {
    const { env } = await exec('base', ['--timeout', '500', '--grace', '300', '--', 'sh', '-c', "trap '' TERM; echo $$ >&2; while :; do sleep 0.1; done"]);
    assert.equal(env.result.state, 'timed_out');
    assert.equal(env.result.signal, 'SIGKILL');
    assert.deepEqual(groupMembers(Number(env.result.stderr.trim())), []);
  });

  test('processes a command leaves running are stopped when it exits, and counted', async () => {
    const { env } = await exec('base', ['--sandbox', 'none', '--shell', 'sleep 60 & sleep 61 & echo left']);
    assert.equal(env.result.state, 'completed');
    assert.equal(env.result.leftover_processes, 2);
    // In a sandbox they end with it: its pid namespace ends when the command does (setsid is no way out).
    const boxed = await exec('base', ['--shell', '(setsid sleep 1; echo late > late.txt) & sleep 60 & echo left']);
    assert.equal(boxed.env.result.state, 'completed');
    assert.ok(boxed.env.result.duration_ms < 900, `${boxed.env.result.duration_ms} ms`);
    await new Promise((r) => setTimeout(r, 2000));
    const late = await runCli(['--vault', 'base', 'cat', '/late.txt'], { home });
    assert.notEqual(late.code, 0, 'nothing the sandboxed command left wrote after it');
  });

  test('output floods are capped: head and tail kept, totals counted, memory bounded', async () => {
    const { env, code } = await exec('base', ['--max-output', '65536', '--shell', "head -c 50000000 /dev/zero | tr '\\0' x; echo; echo the-end; echo err >&2"]);
    assert.equal(code, 0);
    assert.equal(env.result.stdout_bytes, 50_000_000 + '\nthe-end\n'.length);
    assert.equal(env.result.stdout_truncated, true);
    assert.ok(env.result.stdout.startsWith('x'.repeat(32768)));
    assert.ok(env.result.stdout.endsWith('\nthe-end\n'));
    assert.match(env.result.stdout, /avfs: \d+ bytes of output left out/);
    assert.ok(env.result.stdout.length < 70_000);
    assert.deepEqual([env.result.stderr, env.result.stderr_truncated], ['err\n', false]);
  });

  test('exit codes and signals are reported, and the CLI exits with the command\'s code', async () => {
    const three = await exec('base', ['--', 'sh', '-c', 'exit 3']);
    assert.deepEqual([three.code, three.env.result.exit_code, three.env.success, three.env.result.state], [3, 3, false, 'completed']);
    // A program that kills itself with SIGKILL (a script the policy does not read into).
    await json(['--vault', 'base', 'write', '/die.py', 'import os\nos.kill(os.getpid(), 9)\n']);
    const killed = await exec('base', ['--', 'python3', 'die.py']);
    assert.deepEqual([killed.code, killed.env.result.exit_code, killed.env.result.signal], [137, 137, 'SIGKILL']);
    const missing = await exec('base', ['--', 'no-such-program-avfs']);
    assert.deepEqual([missing.code, missing.env.result.exit_code], [127, 127]);
    assert.match(missing.env.result.stderr, /no-such-program-avfs: not found/);
  });

  test('--readonly: writes fail inside with EROFS and nothing changes', async () => {
    const { env } = await exec('base', ['--readonly', '--', 'python3', '-c', "import errno\ntry:\n open('x.txt','w')\nexcept OSError as e:\n print(errno.errorcode[e.errno])"]);
    assert.equal(env.result.stdout, 'EROFS\n');
    assert.equal(env.result.checkpoint, null);
    assert.equal((await json(['--vault', 'base', 'stat', '/x.txt'])).json.error, 'NotFound');
  });

  test('the automatic checkpoint undoes the command', async () => {
    await json(['vault', 'fork', 'base', 'undo-task']);
    const { env } = await exec('undo-task', ['--', 'rm', '-rf', 'src']);
    assert.equal(env.result.decision?.action, 'allow_with_checkpoint');
    assert.ok(env.result.checkpoint);
    assert.deepEqual(paths(env.result.changes!.deleted), ['/src', '/src/app.py']);
    assert.equal((await json(['--vault', 'undo-task', 'stat', '/src/app.py'])).json.error, 'NotFound');
    const r = await json(['--vault', 'undo-task', 'checkpoint', 'restore', env.result.checkpoint!]);
    assert.equal(r.code, 0);
    assert.equal((await cli(['--vault', 'undo-task', 'cat', '/src/app.py'])).stdout, 'print("v1")\n');
  });

  test('--checkpoint always / never, and the internal baseline never shows among checkpoints', async () => {
    await json(['vault', 'create', 'cp-modes']);
    const always = await exec('cp-modes', ['--checkpoint', 'always', '--', 'ls']);
    assert.match(always.env.result.checkpoint ?? '', /^exec-/);
    // Skipping the policy's checkpoint takes the user's own rules (docs/policy.md): refused, then allowed.
    assert.equal((await exec('cp-modes', ['--checkpoint', 'never', '--', 'touch', 'f'])).env.result.state, 'denied');
    assert.equal((await cli(['policy', 'set-user-rules', '-'], JSON.stringify({ allow_checkpoint_never: true, rules: [] }))).code, 0);
    const never = await exec('cp-modes', ['--checkpoint', 'never', '--', 'touch', 'f']);
    assert.equal((await cli(['policy', 'set-user-rules', '--clear'])).code, 0);
    assert.equal(never.env.result.checkpoint, null);
    assert.deepEqual(paths(never.env.result.changes!.added), ['/f'], 'the summary still works without a checkpoint');
    const list = (await json(['--vault', 'cp-modes', 'checkpoint', 'list'])).json.checkpoints as Array<{ name: string }>;
    assert.deepEqual(list.map((c) => c.name), [always.env.result.checkpoint]);
  });

  test('two calls at once on one vault with --keep-mount both succeed and share one mount', async () => {
    await json(['vault', 'create', 'shared']);
    const [a, b] = await Promise.all([
      exec('shared', ['--keep-mount', '--', 'sh', '-c', 'echo a > a.txt; sleep 0.3']),
      exec('shared', ['--keep-mount', '--', 'sh', '-c', 'echo b > b.txt; sleep 0.3']),
    ]);
    assert.deepEqual([a.code, b.code], [0, 0], a.stderr + b.stderr);
    assert.equal(a.env.result.mountpoint, b.env.result.mountpoint);
    assert.ok(a.env.result.kept_mounted && b.env.result.kept_mounted);
    const mounts = (await json(['mounts'])).json.mounts as Array<{ vault: string; mountpoint: string }>;
    assert.deepEqual(mounts.filter((m) => m.vault === 'shared').map((m) => m.mountpoint), [a.env.result.mountpoint]);
    // The next call reuses it.
    const c = await exec('shared', ['--', 'cat', 'a.txt', 'b.txt']);
    assert.equal(c.env.result.mount_reused, true);
    assert.equal(c.env.result.stdout, 'a\nb\n');
    assert.equal((await json(['unmount', a.env.result.mountpoint!])).code, 0);
  });

  test('--allow-other: a kept mount another user can enter (the kernel checks modes), reused only by calls that ask for it', async () => {
    await json(['vault', 'create', 'open-task']);
    await json(['--vault', 'open-task', 'write', '/public.txt', 'for everyone']);
    const made = await exec('open-task', ['--keep-mount', '--allow-other', '--', 'true']);
    assert.equal(made.code, 0, made.env.result.stderr);
    const mp = made.env.result.mountpoint!;
    const mounts = (await json(['mounts'])).json.mounts as Array<{ mountpoint: string; allow_other: boolean }>;
    assert.equal(mounts.find((m) => m.mountpoint === mp)?.allow_other, true);
    // The temp home is 0700: let nobody walk to the mountpoint.
    await sh('chmod', ['755', home, join(home, 'mnt')]);
    const nobody = await sh('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', '--', 'cat', join(mp, 'public.txt')]);
    assert.equal(nobody.stdout, 'for everyone', nobody.stderr);
    const reuse = await exec('open-task', ['--allow-other', '--', 'true']);
    assert.equal(reuse.env.result.mount_reused, true);
    assert.equal((await json(['unmount', mp])).code, 0);
  });

  test('the environment: AVFS_* variables, --env, --clean-env, cwd in the mount', async () => {
    const { env } = await exec('base', ['--cwd', '/src', '--env', 'GREETING=hi there', '--clean-env', '--', 'sh', '-c', 'echo "$AVFS_VAULT|$AVFS_CWD|$GREETING|${AVFS_UNSET_HERE:-unset}|$PWD"; pwd; ls']);
    const lines = env.result.stdout.split('\n');
    const [vault, cwd, greeting, secret, pwd] = lines[0]!.split('|');
    assert.deepEqual([vault, cwd, greeting, secret], ['base', '/src', 'hi there', 'unset']);
    assert.equal(pwd, join(env.result.mountpoint!, 'src'));
    assert.equal(lines[1], pwd);
    assert.equal(lines[2], 'app.py');
  });

  test('stdio are real pipes and files: /dev/stdout, /dev/stderr and /dev/stdin work, --stdin feeds input', async () => {
    const r = await cli(['--json', '--vault', 'base', 'proxy', 'exec', '--stdin', '--', 'sh', '-c', 'echo to-out > /dev/stdout; echo to-err > /dev/stderr; cat /dev/stdin | tee /dev/stderr'], 'fed\n');
    const env = ExecutionEnvelope.parse(JSON.parse(r.stdout));
    assert.equal(env.result.stdout, 'to-out\nfed\n');
    assert.equal(env.result.stderr, 'to-err\nfed\n');
    const none = await exec('base', ['--', 'sh', '-c', 'cat; echo eof']);
    assert.equal(none.env.result.stdout, 'eof\n', 'without --stdin the command reads an empty input, never the caller\'s terminal');
  });

  test('bad requests and failures still give one envelope and a documented code', async () => {
    const bad = await cli(['--json', '--vault', 'base', 'proxy', 'exec']);
    assert.equal(JSON.parse(bad.stdout).error, 'InvalidInput');
    const both = await cli(['--json', '--vault', 'base', 'proxy', 'exec', '--shell', 'ls', '--', 'ls']);
    assert.equal(JSON.parse(both.stdout).error, 'InvalidInput');
    const noVault = await exec('does-not-exist', ['--', 'ls']);
    assert.deepEqual([noVault.code, noVault.env.result.state, noVault.env.result.error?.error], [EXEC_EXIT.failed, 'failed', 'VaultNotFound']);
    const badCwd = await exec('base', ['--cwd', 'relative', '--', 'ls']);
    assert.deepEqual([badCwd.env.result.state, badCwd.env.result.error?.error], ['failed', 'InvalidPath']);
    // Control characters in a working directory (it is shown to approvers) and an output budget past the limit.
    for (const cwd of ['/a\nb', '/tab\there', '/esc\x1b[31m']) {
      const ctl = await exec('base', ['--cwd', cwd, '--', 'ls']);
      assert.deepEqual([ctl.code, ctl.env.result.state, ctl.env.result.error?.error], [EXEC_EXIT.failed, 'failed', 'InvalidInput'], cwd);
    }
    const huge = await exec('base', ['--max-output', String(64 * 1024 * 1024), '--', 'ls']);
    assert.deepEqual([huge.env.result.state, huge.env.result.error?.error], ['failed', 'InvalidInput']);
    assert.match(huge.env.result.error!.message, /max_output_bytes/);
    const fileCwd = await exec('base', ['--cwd', '/README.md', '--', 'ls']);
    assert.deepEqual([fileCwd.env.result.state, fileCwd.env.result.error?.error], ['failed', 'NotADirectory']);
    // A mountpoint that cannot take a mount: failed while mounting, with the reason.
    const full = join(home, 'not-empty');
    await sh('mkdir', ['-p', join(full, 'x')]);
    const busy = await exec('base', ['--mountpoint', full, '--', 'ls']);
    assert.deepEqual([busy.code, busy.env.result.state, busy.env.result.error?.error], [EXEC_EXIT.failed, 'failed', 'MountError']);
    assert.equal(busy.env.result.states.at(-2), 'mounting');
  });

  test('cancelling the CLI (SIGINT) stops the command and prints the cancelled envelope', async () => {
    const child = spawn(process.execPath, [CLI, '--json', '--vault', 'base', 'proxy', 'exec', '--', 'sh', '-c', 'echo $$; sleep 100'], {
      env: { ...process.env, AVFS_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    // Wait until the command runs (the mount exists and sh started), then interrupt.
    const deadline = Date.now() + 15_000;
    while (!/mnt\/base/.test(await sh('cat', ['/proc/self/mounts']).then((r) => r.stdout)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGINT');
    const code = await new Promise<number>((r) => child.on('close', (c) => r(c ?? -1)));
    const env = ExecutionEnvelope.parse(JSON.parse(out));
    assert.equal(code, EXEC_EXIT.cancelled);
    assert.equal(env.result.state, 'cancelled');
    assert.equal(env.result.cancelled, true);
    assert.deepEqual(groupMembers(Number(env.result.stdout.trim())), []);
  });

  test('without --json the output streams through and a summary follows on stderr', async () => {
    const r = await cli(['--vault', 'base', 'proxy', 'exec', '--', 'sh', '-c', 'echo out; echo err >&2; exit 4']);
    assert.equal(r.code, 4);
    assert.equal(r.stdout, 'out\n');
    assert.match(r.stderr, /^err\n/);
    assert.match(r.stderr, /avfs: exit 4 in \d+ ms/);
  });
});
