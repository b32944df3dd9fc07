/**
 * `avfs approvals --watch`: a terminal as the host's approver, answered from the keyboard (a real
 * CLI process, keys written to its stdin), and its `--json` form for scripts. Real host, real runs.
 */
import assert from 'node:assert/strict';
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLI, runCli, runJson, tempDir } from '../helpers';
import { waitFor } from '../fuse/helpers';
import { type HostProcess, startHost } from './helpers';

interface Watch {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  key: (line: string) => void;
}

function watch(home: string, json = false): Watch {
  const child = spawn(process.execPath, [CLI, ...(json ? ['--json'] : []), 'approvals', '--watch'], { env: { ...process.env, AVFS_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out, key: (line) => child.stdin.write(`${line}\n`) };
}

type Envelope = { result: { state: string; approval: { outcome: string; scope: string | null; rule: string | null; by: string } | null } };
const exec = (home: string, shell: string) => runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--shell', shell], { home }).then((r) => JSON.parse(r.stdout) as Envelope);

describe('avfs approvals --watch', () => {
  const t = tempDir('avfs-watch-');
  const home = t.dir;
  let host: HostProcess;
  before(async () => {
    await runJson(['vault', 'create', 'main'], { home });
    host = await startHost(home, ['--approval-timeout', '60000']);
  });
  after(async () => {
    await host.stop();
    t.cleanup();
  });

  test('without a watch the request is denied at once (no_approver); with one it waits and is answered from the keyboard: once, deny, always', async () => {
    const none = await exec(home, 'git push origin main');
    assert.equal(none.result.approval?.outcome, 'no_approver');

    const w = watch(home);
    try {
      assert.ok(await waitFor(() => w.out().includes('watching approvals'), 20_000), w.out());
      // Once. The command holds an escape sequence (it would clear the screen): shown escaped.
      const once = exec(home, 'git push origin "main\x1b[2J"');
      assert.ok(await waitFor(() => /\[o\]nce \/ \[a\]lways \/ \[d\]eny: $/.test(w.out()), 20_000), w.out());
      assert.match(w.out(), /\$ git push origin "main\\x1b\[2J"/);
      assert.doesNotMatch(w.out(), /\x1b/, 'no raw escape reaches the terminal');
      assert.match(w.out(), /vault main, in \//);
      assert.match(w.out(), /why: .*git push sends commits to a remote/);
      w.key('what?');
      assert.ok(await waitFor(() => w.out().includes('answer o (once), a (always) or d (deny)'), 5_000), 'an unknown key asks again');
      w.key('o');
      const r1 = await once;
      assert.equal(r1.result.approval?.outcome, 'approved');
      assert.equal(r1.result.approval?.scope, 'once');
      assert.equal(r1.result.approval?.by, `cli client (pid ${w.child.pid}, uid ${process.getuid!()}, no terminal)`);
      assert.ok(await waitFor(() => /: approved by cli client/.test(w.out()), 5_000), w.out());

      // Deny.
      const mark = w.out().length;
      const denied = exec(home, 'git push origin dev');
      assert.ok(await waitFor(() => w.out().slice(mark).includes('[o]nce'), 20_000), w.out());
      w.key('d');
      const r2 = await denied;
      assert.equal(r2.result.state, 'denied');
      assert.equal(r2.result.approval?.outcome, 'denied');

      // Always: a rule is added, and the same command then runs without asking.
      const mark2 = w.out().length;
      const always = exec(home, 'git push origin release');
      assert.ok(await waitFor(() => w.out().slice(mark2).includes('[o]nce'), 20_000), w.out());
      w.key('a');
      const r3 = await always;
      assert.equal(r3.result.approval?.scope, 'always');
      assert.ok(r3.result.approval?.rule, 'the rule it added is named');
      const rules = (JSON.parse(readFileSync(join(home, 'policy.json'), 'utf8')) as { rules: Array<{ exact?: string[]; reason?: string }> }).rules;
      assert.deepEqual(rules.map((r) => r.exact), [['git', 'push', 'origin', 'release']]);
      assert.match(rules[0]!.reason ?? '', new RegExp(`by cli client \\(pid ${w.child.pid},`), 'the rule names who allowed it');
      const again = await exec(home, 'git push origin release');
      assert.equal(again.result.approval, null, 'asked no one');
      assert.notEqual(again.result.state, 'denied');
    } finally {
      w.child.kill('SIGTERM');
    }
  });

  test('--json: one request per line out, answers as JSON lines in; bad lines get an error line; a request answered elsewhere is reported settled', async () => {
    const w = watch(home, true);
    const lines = () => w.out().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; request?: { id: string; command: string }; id?: string; record?: { outcome: string; by: string }; error?: string });
    try {
      assert.ok(await waitFor(() => lines().some((l) => l.type === 'watching'), 20_000), w.out());
      const first = exec(home, 'git push origin one');
      assert.ok(await waitFor(() => lines().some((l) => l.type === 'request'), 20_000), w.out());
      const req = lines().find((l) => l.type === 'request')!.request!;
      assert.equal(req.command, 'git push origin one');
      w.key('not json');
      w.key(JSON.stringify({ id: 'nope', answer: 'deny' }));
      w.key(JSON.stringify({ id: req.id, answer: 'sure' }));
      assert.ok(await waitFor(() => lines().filter((l) => l.type === 'error').length === 3, 5_000), w.out());
      assert.deepEqual(lines().filter((l) => l.type === 'error').map((l) => l.error), ['InvalidInput', 'NotFound', 'InvalidInput']);
      w.key(JSON.stringify({ id: req.id, answer: 'approve_once' }));
      assert.equal((await first).result.approval?.outcome, 'approved');
      assert.ok(await waitFor(() => lines().some((l) => l.type === 'settled' && l.id === req.id && l.record?.outcome === 'approved'), 5_000), w.out());

      // Answered elsewhere (avfs deny in another terminal): the watch says it was settled.
      const second = exec(home, 'git push origin two');
      assert.ok(await waitFor(() => lines().filter((l) => l.type === 'request').length === 2, 20_000), w.out());
      const id2 = lines().filter((l) => l.type === 'request')[1]!.request!.id;
      const d = await runCli(['deny', id2], { home });
      assert.equal(d.code, 0, d.stderr);
      assert.equal((await second).result.state, 'denied');
      assert.ok(await waitFor(() => lines().some((l) => l.type === 'settled' && l.id === id2 && l.record?.outcome === 'denied'), 5_000), w.out());
      // The end of its input ends the watch.
      const exited = new Promise<number | null>((r) => w.child.on('exit', (c) => r(c)));
      w.child.stdin.end();
      assert.equal(await exited, 0);
    } finally {
      w.child.kill('SIGTERM');
    }
  });
});
