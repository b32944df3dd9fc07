/**
 * Only a person answers, tried from the attacker's side. A request waits at a real host (a person's
 * `git push`); then a script the person let run once, inside `avfs proxy exec --sandbox none`,
 * tries every way to answer it or to loosen the rules: `avfs approve` / `--always` / `deny`,
 * `avfs approvals --watch`, raw JSON-RPC on the host socket with a forged `by`, offering itself as
 * an approver, `policy/setVaultRules`, a mount server's exec socket claiming to be interactive, and
 * a double-forked child that scrubbed its environment and was re-parented away from the run. Each
 * is refused (SelfApproval, or the mount server's run denied as no_approver). Then a terminal
 * outside the run (`avfs approvals --watch --json`) answers, and the audit trail names that
 * connection's process, never a name a client sent.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { CLI, runCli, runJson, tempDir } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';
import { client, type HostProcess, startHost } from './helpers';
import type { HostConnection } from '../../host/daemon/client';

/** A JSON-RPC client written by hand (no library), as a script in a run would: Content-Length frames on the host socket. */
const RAW = String.raw`
const net = require('node:net');
const fs = require('node:fs');
const { spawn } = require('node:child_process');
const home = process.env.AVFS_HOME;
const [mode, arg] = process.argv.slice(2);
function rpc(calls) {
  const { socket } = JSON.parse(fs.readFileSync(home + '/host.json', 'utf8'));
  return new Promise((resolve) => {
    const s = net.connect(socket);
    let buf = '';
    const answers = [];
    s.on('data', (d) => {
      buf += d;
      for (;;) {
        const m = /^Content-Length: (\d+)\r\n\r\n/.exec(buf);
        if (!m || buf.length < m[0].length + Number(m[1])) break;
        const msg = JSON.parse(buf.slice(m[0].length, m[0].length + Number(m[1])));
        buf = buf.slice(m[0].length + Number(m[1]));
        if (msg.id !== undefined && msg.method === undefined) answers.push(msg);
        if (answers.length === calls.length) { s.destroy(); resolve(answers); }
      }
    });
    s.on('error', (e) => resolve([{ error: { message: String(e) } }]));
    calls.forEach((c, i) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: i + 1, method: c[0], params: c[1] });
      s.write('Content-Length: ' + Buffer.byteLength(body) + '\r\n\r\n' + body);
    });
  });
}
const kind = (a) => (a.error ? (a.error.data && a.error.data.error) || a.error.message : 'ok:' + JSON.stringify(a.result));
async function main() {
  if (mode === 'answer') {
    const [hello, answer] = await rpc([['client/hello', { name: 'VS Code (window 1)', kind: 'vscode' }], ['approval/answer', { id: arg, answer: 'always_allow', by: 'VS Code (window 1)' }]]);
    return kind(answer);
  }
  if (mode === 'hello') return kind((await rpc([['client/hello', { name: 'VS Code (window 1)', kind: 'vscode', approver: true }]]))[0]);
  if (mode === 'rules') return kind((await rpc([['policy/setVaultRules', { vault: 'main', rules: '{"rules":[{"match":"git push","action":"allow"}]}' }]]))[0]);
  if (mode === 'mount') {
    const s = net.connect(arg);
    return new Promise((resolve) => {
      let buf = '';
      s.on('data', (d) => {
        buf += d;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const m = JSON.parse(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
          if (m.type === 'approval') s.write(JSON.stringify({ type: 'answer', outcome: { kind: 'answered', answer: { answer: 'approve_once', by: 'terminal' } } }) + '\n');
          if (m.type === 'done') { s.destroy(); resolve(m.envelope.result.state + ':' + (m.envelope.result.approval ? m.envelope.result.approval.outcome : 'none')); }
        }
      });
      s.on('error', (e) => resolve('error:' + e.message));
      s.write(JSON.stringify({ type: 'run', version: process.env.AVFS_VERSION, request: { vault: 'main', command: { shell: 'git push origin main' } }, env: { PATH: process.env.PATH }, stream: false, approver: { interactive: true, why: '' } }) + '\n');
    });
  }
  if (mode === 'orphan') {
    // Stage 1 starts stage 2 in a session of its own, with a clean environment, and exits at once:
    // stage 2 is re-parented (to init, unless the run's runner holds on to it).
    if (!process.env.STAGE) {
      spawn(process.execPath, [__filename, 'orphan', arg], { detached: true, stdio: 'ignore', env: { PATH: process.env.PATH, AVFS_HOME: home, STAGE: '2', OUT: process.env.OUT } }).unref();
      return 'started';
    }
    const first = process.ppid;
    for (let i = 0; i < 200 && process.ppid === first; i++) await new Promise((r) => setTimeout(r, 25));
    const parent = fs.readFileSync('/proc/' + process.ppid + '/comm', 'utf8').trim();
    const env = fs.readFileSync('/proc/self/environ', 'latin1').includes('AVFS_EXEC_ID') ? 'marked' : 'clean';
    const [hello, answer] = await rpc([['client/hello', { name: 'VS Code (window 1)', kind: 'vscode' }], ['approval/answer', { id: arg, answer: 'approve_once' }]]);
    fs.writeFileSync(process.env.OUT, JSON.stringify({ parent, env, result: kind(answer) }));
    return 'done';
  }
}
main().then((r) => { console.log(r); process.exit(0); });
`;

const ATTACK = String.raw`
set +e
avfs() { node "$CLI" "$@"; }
try() { name=$1; shift; out=$("$@" 2>&1); echo "RESULT $name exit=$? $(echo "$out" | tr '\n' ' ' | cut -c1-300)"; }
try approve avfs approve "$VICTIM"
try approve_always avfs approve "$VICTIM" --always
try deny avfs deny "$VICTIM"
try watch avfs approvals --watch </dev/null
try raw_answer node "$RAW" answer "$VICTIM"
try raw_approver node "$RAW" hello
try raw_rules node "$RAW" rules
try mount_interactive node "$RAW" mount "$MOUNT_SOCK"
OUT="$OUT" node "$RAW" orphan "$VICTIM" >/dev/null
for i in $(seq 1 200); do [ -s "$OUT" ] && break; sleep 0.05; done
echo "RESULT orphan $(cat "$OUT")"
`;

describe('only a person answers: every self-approval path from inside a run is refused', () => {
  const t = tempDir('avfs-selfapproval-');
  const home = t.dir;
  const files = tempDir('avfs-attack-');
  let host: HostProcess;
  let person: HostConnection;
  const pending: Array<{ req: ApprovalRequest; answer: (a: string) => void }> = [];

  before(async () => {
    await runJson(['vault', 'create', 'main'], { home });
    await runJson(['vault', 'create', 'other'], { home });
    // The script is the agent's, in its vault: a person lets it run once.
    await runCli(['--vault', 'main', 'write', '/raw.js'], { home, input: RAW });
    await runCli(['--vault', 'main', 'write', '/attack.sh'], { home, input: ATTACK });
    writeFileSync(join(files.dir, 'raw.js'), RAW);
    // A mount of vault "other" served by its own process (its exec socket is what the script dials).
    mkdirSync(join(home, 'mnt-other'));
    const m = await runJson(['mount', 'other', join(home, 'mnt-other')], { home });
    assert.equal(m.json.state, 'mounted', m.stderr);
    host = await startHost(home, ['--approval-timeout', '120000']);
    // The person at the editor: answers the attack script once (it asks: node runs code), holds the victim.
    person = await client(home, {
      name: 'person',
      approver: true,
      setup: (conn) =>
        conn.onRequest('approval/request', (req: ApprovalRequest) =>
          req.command.includes('attack.sh') ? { answer: 'approve_once' } : new Promise((resolve) => pending.push({ req, answer: (a) => resolve({ answer: a }) })),
        ),
    });
  });
  after(async () => {
    for (const p of pending) p.answer('deny');
    person?.close();
    await host?.stop();
    await runCli(['unmount', join(home, 'mnt-other')], { home });
    await sh('bash', ['-c', `for m in $(grep -o "${home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    t.cleanup();
    files.cleanup();
  });

  test('each attempt is refused; the request still waits; an answer from outside the run settles it, recorded as that process', async () => {
    const victim = runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--shell', 'git push origin main'], { home });
    assert.ok(await waitFor(() => pending.length === 1, 20_000), 'the victim request waits');
    const victimId = pending[0]!.req.id;
    const records = readdirSync(join(home, 'mounts')).filter((f) => f.endsWith('.json'));
    const mountSock = records.map((f) => (JSON.parse(readFileSync(join(home, 'mounts', f), 'utf8')) as { exec_socket?: string }).exec_socket).find(Boolean);
    assert.ok(mountSock, 'the mount server has an exec socket');
    const version = (await runCli(['--version'], { home })).stdout.trim();

    const attack = await runCli(
      [
        // No sandbox: the host's socket and the rule files are in reach (a sandbox hides them); this must hold anyway.
        '--json', '--vault', 'main', 'proxy', 'exec', '--sandbox', 'none',
        '--env', `CLI=${CLI}`, '--env', 'RAW=raw.js', '--env', `VICTIM=${victimId}`, '--env', `MOUNT_SOCK=${mountSock}`,
        '--env', `OUT=${join(files.dir, 'orphan.json')}`, '--env', `AVFS_VERSION=${version}`,
        '--', 'bash', 'attack.sh',
      ],
      { home },
    );
    const envelope = JSON.parse(attack.stdout) as { result: { state: string; stdout: string; stderr: string } };
    assert.equal(envelope.result.state, "completed", `${JSON.stringify(envelope.result)}\n${attack.stderr}`);
    const results = Object.fromEntries(
      envelope.result.stdout
        .split('\n')
        .filter((l) => l.startsWith('RESULT '))
        .map((l) => [l.split(' ')[1]!, l.slice(l.indexOf(' ', 7) + 1)]),
    );
    const refused = `exit=${ERROR_TABLE.SelfApproval.exit}`;
    for (const name of ['approve', 'approve_always', 'deny', 'watch']) {
      assert.match(results[name] ?? 'missing', new RegExp(`^${refused} .*SelfApproval`), `${name}: ${results[name]}`);
      assert.match(results[name]!, /part of the avfs run/, `${name} says why`);
    }
    for (const name of ['raw_answer', 'raw_approver', 'raw_rules']) assert.match(results[name] ?? 'missing', /^exit=0 SelfApproval/, `${name}: ${results[name]}`);
    // The mount server does not take the script's word that a person is at its terminal.
    assert.match(results.mount_interactive ?? 'missing', /^exit=0 denied:no_approver/, `mount: ${results.mount_interactive}`);
    // The double-forked child lost its parent and its environment; it was held by the run's runner, and refused.
    const orphan = JSON.parse(results.orphan ?? '{}') as { parent?: string; env?: string; result?: string };
    assert.deepEqual(orphan, { parent: 'avfs-runner', env: 'clean', result: 'SelfApproval' }, results.orphan);

    // Nothing was answered, no rule was added anywhere, the vault's rules are untouched.
    const waiting = JSON.parse((await runCli(['--json', 'approvals'], { home })).stdout) as { pending: Array<{ id: string }> };
    assert.deepEqual(waiting.pending.map((p) => p.id), [victimId]);
    const ruleFiles = (await runJson(['--vault', 'main', 'policy', 'rules'], { home })).json.files as Array<{ source: string; present: boolean }>;
    assert.deepEqual(ruleFiles.filter((f) => f.present).map((f) => f.source), ['builtin'], 'no user or vault rules were written');
    assert.match(host.log(), /refused answering approval .* part of the avfs run/);

    // A terminal outside any run answers: it settles, and the record names its process.
    const watch = spawn(process.execPath, [CLI, '--json', 'approvals', '--watch'], { env: { ...process.env, AVFS_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    watch.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      assert.ok(await waitFor(() => out.includes(`"id":"${victimId}"`), 20_000), out);
      watch.stdin!.write(`${JSON.stringify({ id: victimId, answer: 'deny' })}\n`);
      const r = await victim;
      const env = JSON.parse(r.stdout) as { result: { state: string; approval: { outcome: string; by: string } } };
      assert.equal(env.result.state, 'denied');
      assert.equal(env.result.approval.outcome, 'denied');
      assert.equal(env.result.approval.by, `cli client (pid ${watch.pid}, uid ${process.getuid!()}, no terminal)`);
    } finally {
      watch.kill('SIGTERM');
    }
  });

  test('a forged `by` from outside a run is not believed either: the answer is recorded as the connection', async () => {
    const victim = runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--shell', 'git push origin main'], { home });
    assert.ok(await waitFor(() => pending.length === 2, 20_000), 'the request waits');
    const id = pending[1]!.req.id;
    const raw = await sh(process.execPath, [join(files.dir, 'raw.js'), 'answer', id], { env: { AVFS_HOME: home } });
    assert.match(raw.stdout, /^ok:.*"settled":true/, raw.stdout + raw.stderr);
    const env = (JSON.parse((await victim).stdout) as { result: { approval: { outcome: string; by: string; scope: string } } }).result;
    assert.equal(env.approval.outcome, 'approved');
    assert.equal(env.approval.scope, 'always');
    assert.doesNotMatch(env.approval.by, /VS Code|window/);
    assert.match(env.approval.by, /^vscode client \(pid \d+, uid \d+/);
    // That answer was "always": the rule it added names the connection too.
    const policyFile = readFileSync(join(home, 'policy.json'), 'utf8');
    assert.doesNotMatch(policyFile, /window 1/);
  });
});
