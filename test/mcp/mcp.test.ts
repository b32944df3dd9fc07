/**
 * `avfs mcp` driven by the MCP SDK's Client over stdio: the real server process, real vault files,
 * real FUSE mounts for exec, and a real host on a real socket for the calls that go through it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { ExecutionEnvelope } from '../../host/protocol/exec';
import { CLI, runJson, tempDir } from '../helpers';
import { client as hostClient, startHost, type HostProcess } from '../daemon/helpers';
import { sh, waitFor } from '../fuse/helpers';
import { startMcp, textOf, type McpSession } from './helpers';

const unmountAll = (home: string) => sh('bash', ['-c', `for m in $(grep -o "${home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
const structured = <T>(r: CallToolResult): T => r.structuredContent as T;

describe('avfs mcp (no host running: the server runs the operations itself)', () => {
  const t = tempDir('avfs-mcp-');
  const home = t.dir;
  let mcp: McpSession;

  before(async () => {
    assert.equal((await runJson(['vault', 'create', 'work'], { home })).code, 0);
    mcp = await startMcp(home, ['--vault', 'work']);
  });
  after(async () => {
    await mcp?.close();
    await unmountAll(home);
    t.cleanup();
  });

  test('tools/list: every tool with a description, an input and an output schema, and its annotations', async () => {
    const { tools } = await mcp.client.listTools();
    const byName = new Map(tools.map((x) => [x.name, x]));
    const expected = ['read_file', 'write_file', 'edit_file', 'list_directory', 'search_files', 'grep', 'file_info', 'checkpoint_save', 'checkpoint_list', 'checkpoint_diff', 'checkpoint_restore', 'fork_create', 'fork_list', 'vault_list', 'vault_create', 'project_changes', 'exec'];
    assert.deepEqual([...byName.keys()].sort(), [...expected].sort());
    for (const x of tools) {
      assert.ok((x.description ?? '').length > 20, `${x.name} has a description`);
      assert.equal(x.inputSchema.type, 'object');
      assert.equal(x.outputSchema?.type, 'object', `${x.name} has an output schema`);
      assert.equal(typeof x.annotations?.readOnlyHint, 'boolean', `${x.name} says whether it is read-only`);
    }
    for (const ro of ['read_file', 'list_directory', 'search_files', 'grep', 'file_info', 'checkpoint_list', 'checkpoint_diff', 'fork_list', 'vault_list', 'project_changes']) {
      assert.equal(byName.get(ro)!.annotations!.readOnlyHint, true, ro);
    }
    assert.equal(byName.get('checkpoint_restore')!.annotations!.destructiveHint, true);
    assert.equal(byName.get('exec')!.annotations!.readOnlyHint, false);
    assert.equal(byName.get('checkpoint_save')!.annotations!.destructiveHint, false);
    // exec takes what ExecRequest offers (passed through), with the command flattened.
    const execProps = Object.keys((byName.get('exec')!.inputSchema as { properties: object }).properties);
    for (const k of ['command', 'argv', 'cwd', 'timeout_ms', 'readonly', 'checkpoint', 'env', 'stdin']) assert.ok(execProps.includes(k), k);
    // The output schema of exec is the ExecutionEnvelope's.
    assert.ok(Object.keys((byName.get('exec')!.outputSchema as { properties: object }).properties).includes('result'));
  });

  test('write, edit (a unified diff; an ambiguous or missing match changes nothing), read with a line range', async () => {
    const w = await mcp.call('write_file', { path: '/src/app.py', content: 'a = 1\nb = 2\nc = 1\n' });
    assert.equal(w.isError, undefined, textOf(w));
    assert.deepEqual(structured<{ created: boolean; size: number }>(w).created, true);

    const e = await mcp.call('edit_file', { path: 'src/app.py', edits: [{ old_text: 'b = 2', new_text: 'b = 3' }] });
    assert.equal(e.isError, undefined, textOf(e));
    const diff = structured<{ diff: string; replacements: number; written: boolean }>(e);
    assert.match(diff.diff, /^-b = 2$/m);
    assert.match(diff.diff, /^\+b = 3$/m);
    assert.equal(diff.written, true);

    const ambiguous = await mcp.call('edit_file', { path: '/src/app.py', edits: [{ old_text: 'b = 3', new_text: 'b = 4' }, { old_text: '= 1', new_text: '= 9' }] });
    assert.equal(ambiguous.isError, true);
    assert.match(textOf(ambiguous), /InvalidInput: edits\[1\]\.old_text occurs 2 times/);
    const missing = await mcp.call('edit_file', { path: '/src/app.py', edits: [{ old_text: 'zzz', new_text: 'y' }] });
    assert.equal(missing.isError, true);
    assert.match(textOf(missing), /not found/);

    const whole = await mcp.call('read_file', { path: '/src/app.py' });
    assert.equal(textOf(whole), 'a = 1\nb = 3\nc = 1\n', 'the refused edits changed nothing (not even their first, valid edit)');
    const part = await mcp.call('read_file', { path: '/src/app.py', start_line: 2, end_line: 3 });
    assert.equal(textOf(part), 'b = 3\nc = 1\n');
    assert.equal(structured<{ total_lines: number }>(part).total_lines, 3);

    const dry = await mcp.call('edit_file', { path: '/src/app.py', edits: [{ old_text: '= 1', new_text: '= 0', replace_all: true }], dry_run: true });
    assert.equal(structured<{ replacements: number; written: boolean }>(dry).replacements, 2);
    assert.equal(structured<{ written: boolean }>(dry).written, false);
    assert.equal(textOf(await mcp.call('read_file', { path: '/src/app.py' })), 'a = 1\nb = 3\nc = 1\n');
    // What the tools wrote is in the vault file: the CLI reads it.
    const cat = await runJson(['--vault', 'work', 'cat', '/src/app.py'], { home });
    assert.equal(cat.json.content, 'a = 1\nb = 3\nc = 1\n');
  });

  test('list, search by glob, grep, file info', async () => {
    await mcp.call('write_file', { path: '/src/lib/util.py', content: 'def helper():\n    return 42\n' });
    await mcp.call('write_file', { path: '/README.md', content: '# Demo\nuse helper() here\n' });
    const ls = await mcp.call('list_directory', { path: '/src' });
    assert.deepEqual(structured<{ entries: Array<{ name: string }> }>(ls).entries.map((x) => x.name).sort(), ['app.py', 'lib']);
    assert.match(textOf(ls), /\[DIR\]\s+lib/);

    const found = await mcp.call('search_files', { pattern: '**/*.py' });
    assert.deepEqual(structured<{ matches: Array<{ path: string }> }>(found).matches.map((m) => m.path).sort(), ['/src/app.py', '/src/lib/util.py']);
    const excluded = await mcp.call('search_files', { pattern: '**/*.py', exclude: ['src/lib/**'] });
    assert.deepEqual(structured<{ matches: Array<{ path: string }> }>(excluded).matches.map((m) => m.path), ['/src/app.py']);

    const g = await mcp.call('grep', { pattern: 'help(er)?\\(\\)' });
    assert.deepEqual(
      structured<{ matches: Array<{ path: string; line: number }> }>(g).matches.map((m) => `${m.path}:${m.line}`).sort(),
      ['/README.md:2', '/src/lib/util.py:1'],
    );
    const only = await mcp.call('grep', { pattern: 'HELPER', ignore_case: true, include: '**/*.md' });
    assert.deepEqual(structured<{ matches: Array<{ path: string }> }>(only).matches.map((m) => m.path), ['/README.md']);
    const badRe = await mcp.call('grep', { pattern: '(' });
    assert.equal(badRe.isError, true);
    assert.match(textOf(badRe), /InvalidInput: pattern is not a valid regular expression/);

    const info = await mcp.call('file_info', { path: '/src/lib/util.py' });
    assert.equal(structured<{ type: string; size: number }>(info).type, 'file');
    assert.equal(structured<{ size: number }>(info).size, 28);
    const gone = await mcp.call('file_info', { path: '/nope' });
    assert.equal(gone.isError, true);
    assert.match(textOf(gone), /^NotFound:/);
  });

  test('checkpoints: save, list, diff, restore (and the restore can be undone)', async () => {
    const saved = await mcp.call('checkpoint_save', { name: 'before-change', description: 'clean' });
    assert.equal(structured<{ name: string }>(saved).name, 'before-change');
    await mcp.call('write_file', { path: '/src/app.py', content: 'changed\n' });
    await mcp.call('write_file', { path: '/new.txt', content: 'new\n' });
    const d = await mcp.call('checkpoint_diff', { from: 'before-change', patch: true });
    const sum = structured<{ added: Array<{ path: string }>; modified: Array<{ path: string }>; patch?: string }>(d);
    assert.deepEqual(sum.added.map((x) => x.path), ['/new.txt']);
    assert.deepEqual(sum.modified.map((x) => x.path), ['/src/app.py']);
    assert.match(sum.patch ?? '', /\+changed/);
    assert.match(textOf(d), /^A \/new.txt$/m);

    const r = await mcp.call('checkpoint_restore', { name: 'before-change' });
    assert.equal(r.isError, undefined, textOf(r));
    const undo = structured<{ undo_checkpoint: string }>(r).undo_checkpoint;
    assert.equal(textOf(await mcp.call('read_file', { path: '/src/app.py' })), 'a = 1\nb = 3\nc = 1\n');
    assert.equal((await mcp.call('file_info', { path: '/new.txt' })).isError, true);
    const names = structured<{ checkpoints: Array<{ name: string }> }>(await mcp.call('checkpoint_list', {})).checkpoints.map((c) => c.name);
    assert.ok(names.includes('before-change') && names.includes(undo));
    await mcp.call('checkpoint_restore', { name: undo });
    assert.equal(textOf(await mcp.call('read_file', { path: '/new.txt' })), 'new\n');
  });

  test('forks and vaults: create, list', async () => {
    const f = await mcp.call('fork_create', { name: 'work-try' });
    assert.equal(f.isError, undefined, textOf(f));
    assert.equal(structured<{ source: string }>(f).source, 'work');
    // The fork is a vault of its own: a write there leaves the source alone.
    await mcp.call('write_file', { path: '/new.txt', content: 'in the fork\n', vault: 'work-try' });
    assert.equal(textOf(await mcp.call('read_file', { path: '/new.txt' })), 'new\n');
    assert.deepEqual(structured<{ forks: Array<{ name: string }> }>(await mcp.call('fork_list', {})).forks.map((x) => x.name), ['work-try']);
    const c = await mcp.call('vault_create', { name: 'other' });
    assert.equal(structured<{ created: string; current: boolean }>(c).current, false);
    const names = structured<{ vaults: Array<{ name: string }> }>(await mcp.call('vault_list', {})).vaults.map((v) => v.name);
    assert.deepEqual([...names].sort(), ['other', 'work', 'work-try']);
  });

  test('exec: the envelope as structuredContent, the files it changed, progress with its output', async () => {
    const progress: Array<{ progress: number; message?: string }> = [];
    const r = await mcp.call('exec', { command: 'cat new.txt && echo built > out.txt && echo done-marker', cwd: '/' }, { onprogress: (p) => void progress.push(p) });
    assert.equal(r.isError, undefined, textOf(r));
    const env = ExecutionEnvelope.parse(r.structuredContent);
    assert.equal(env.result.state, 'completed');
    assert.equal(env.result.exit_code, 0);
    assert.equal(env.result.stdout, 'new\ndone-marker\n');
    assert.deepEqual(env.result.changed_files, ['/out.txt']);
    assert.ok(env.result.checkpoint, 'a checkpoint was taken before a command that writes');
    assert.match(textOf(r), /^exit 0/);
    assert.equal(textOf(await mcp.call('read_file', { path: '/out.txt' })), 'built\n');
    assert.ok(progress.some((p) => p.message?.includes('done-marker')), `the output came as progress: ${JSON.stringify(progress)}`);
    assert.ok(progress.some((p) => p.message === 'state: executing'));
    for (let i = 1; i < progress.length; i++) assert.ok(progress[i]!.progress > progress[i - 1]!.progress, 'progress only increases');

    // A command that fails is a result (its exit code), not a tool error.
    const fails = await mcp.call('exec', { argv: ['sh', '-c', 'exit 3'] });
    assert.equal(fails.isError, undefined);
    assert.equal(ExecutionEnvelope.parse(fails.structuredContent).result.exit_code, 3);
  });

  test('exec denied by the policy: isError with the decision, the rule and the reason; nothing ran', async () => {
    const r = await mcp.call('exec', { command: 'echo ran > ran.txt; rm -rf /' });
    assert.equal(r.isError, true);
    const env = ExecutionEnvelope.parse(r.structuredContent);
    assert.equal(env.result.state, 'denied');
    assert.equal(env.result.decision?.action, 'deny');
    assert.match(textOf(r), /^denied: nothing ran \(policy: deny, rule builtin:host_escape/);
    assert.equal((await mcp.call('file_info', { path: '/ran.txt' })).isError, true, 'no part of the line ran');
    // With no host (no approver), a command that needs approval is denied as well.
    const ask = await mcp.call('exec', { command: 'python3 -c "import socket; open(\'asked.txt\', \'w\')"' });
    assert.equal(ask.isError, true);
    assert.equal(ExecutionEnvelope.parse(ask.structuredContent).result.approval?.outcome, 'no_approver');
    assert.match(textOf(ask), /approval: no_approver/);
  });

  test('cancelling the tool call cancels the run: its process group is stopped', async () => {
    const ac = new AbortController();
    const progress: string[] = [];
    // Long enough that it cannot end by itself within the waits below, on a machine as loaded as CI's
    // (a mount and a sandbox to start while fork-bomb tests run beside it).
    const call = mcp.call('exec', { command: 'sleep 94.5 && echo never > never.txt' }, { signal: ac.signal, onprogress: (p) => void progress.push(p.message ?? '') });
    // Started: the progress says so (a cancellation right after bwrap's start ends the run before it is reported).
    assert.ok(await waitFor(async () => progress.includes('state: executing') && (await sh('pgrep', ['-f', 'sleep 94.5'])).code === 0, 45_000), 'the command started');
    ac.abort();
    await assert.rejects(call);
    assert.ok(await waitFor(async () => (await sh('pgrep', ['-f', 'sleep 94.5'])).code !== 0, 40_000), 'the command was stopped');
    // The server keeps serving, and the run left nothing.
    assert.equal((await mcp.call('file_info', { path: '/never.txt' })).isError, true);
    assert.ok(progress.includes('state: executing'));
  });

  test('bad input never crashes the server: unknown tool, wrong types, .., NUL, a 10 MB argument, unknown fields', async () => {
    const autostart = mkdtempSync(join(tmpdir(), 'avfs-mcp-autostart-'));
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['no_such_tool', {}, /Tool no_such_tool not found/],
      ['read_file', { path: 5 }, /Input validation error/],
      ['read_file', {}, /Input validation error/],
      ['read_file', { path: '../../etc/passwd' }, /InvalidPath: .*would leave the vault root/],
      ['read_file', { path: '/a\u0000b' }, /InvalidPath: .*NUL/],
      ['read_file', { path: 'x'.repeat(10 * 1024 * 1024) }, /Input validation error/],
      ['write_file', { path: '/a', content: 'x', mode: 'evil' }, /Input validation error/],
      ['exec', { command: 'true', argv: ['true'] }, /InvalidInput: give exactly one of command/],
      ['exec', { command: 'true', env: { 'BAD NAME': 'x' } }, /Input validation error/],
      // Where the vault is mounted, and who else may reach it, are not the agent's to choose.
      ['exec', { command: 'echo planted > x.desktop', mountpoint: autostart, keep_mount: true }, /Input validation error.*mountpoint|Unrecognized key.*mountpoint/s],
      ['exec', { command: 'true', allow_other: true }, /Input validation error.*allow_other|Unrecognized key.*allow_other/s],
      ['read_file', { path: '/src/app.py', vault: '../../etc' }, /InvalidInput|VaultNotFound|InvalidName/],
    ];
    for (const [name, args, re] of cases) {
      const r = await mcp.call(name, args);
      assert.equal(r.isError, true, `${name} ${JSON.stringify(args).slice(0, 80)}`);
      assert.match(textOf(r), re);
    }
    // Raw garbage on the protocol stream: the server answers a JSON-RPC error and goes on.
    const child = spawn(process.execPath, [CLI, 'mcp'], { env: { ...process.env, AVFS_HOME: home }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin.write('this is not json\n');
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } }) + '\n');
    // A message past the 64 MiB limit is dropped as it streams in, and its request answered.
    child.stdin.write(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"`);
    const mb = 'y'.repeat(1024 * 1024);
    for (let i = 0; i < 65; i++) child.stdin.write(mb);
    child.stdin.write('"}}}\n');
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'no/such/method', params: {} }) + '\n');
    assert.ok(await waitFor(() => out.includes('"id":2'), 30_000), out);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { id?: number; result?: unknown; error?: { code: number } });
    assert.ok(lines.find((l) => l.id === 1)?.result, 'initialize answered');
    assert.equal(lines.find((l) => l.id === 2)?.error?.code, -32601);
    assert.equal(lines.find((l) => l.id === 7)?.error?.code, -32600);
    child.stdin.end();
    assert.equal(await new Promise((r) => child.on('exit', r)), 0);
    // And the first session still works.
    assert.equal(textOf(await mcp.call('read_file', { path: '/out.txt' })), 'built\n');
    assert.deepEqual(readdirSync(autostart), [], 'nothing was mounted or written where the agent asked');
    rmSync(autostart, { recursive: true, force: true });
  });

  test('resources: vault files as avfs://<vault>/<path>, listed and read', async () => {
    const { resources } = await mcp.client.listResources();
    const uris = resources.map((r) => r.uri);
    assert.ok(uris.includes('avfs://work/src/lib/util.py'), uris.join(' '));
    const read = await mcp.client.readResource({ uri: 'avfs://work/src/lib/util.py' });
    assert.equal((read.contents[0] as { text: string }).text, 'def helper():\n    return 42\n');
    const fork = await mcp.client.readResource({ uri: 'avfs://work-try/new.txt' });
    assert.equal((fork.contents[0] as { text: string }).text, 'in the fork\n');
    await assert.rejects(mcp.client.readResource({ uri: 'avfs://work/nope.txt' }), (e: Error & { code?: number }) => e.code === -32002 && /NotFound:/.test(e.message));
    await assert.rejects(mcp.client.readResource({ uri: 'avfs://work/%00x' }), (e: Error & { code?: number }) => e.code === -32602 && /InvalidPath:/.test(e.message));
  });

  test('a restore after exec kept a mount up: the mount is taken down first; closing the server unmounts what it kept', async () => {
    const cp = structured<{ name: string }>(await mcp.call('checkpoint_save', {})).name;
    const r = await mcp.call('exec', { command: 'echo x > kept.txt' });
    const env = ExecutionEnvelope.parse(r.structuredContent);
    assert.equal(env.result.kept_mounted, true);
    const restored = await mcp.call('checkpoint_restore', { name: cp });
    assert.equal(restored.isError, undefined, textOf(restored));
    assert.equal((await mcp.call('file_info', { path: '/kept.txt' })).isError, true);
    await mcp.call('exec', { command: 'true' });
    assert.ok(existsSync(env.result.mountpoint!) && (await sh('mountpoint', ['-q', env.result.mountpoint!])).code === 0);
    await mcp.close();
    assert.ok(await waitFor(async () => (await sh('mountpoint', ['-q', env.result.mountpoint!])).code !== 0, 15_000), 'the kept mount went with the server');
  });
});

describe('avfs mcp through a running host: audit trail, Executions, approvals', () => {
  const t = tempDir('avfs-mcp-host-');
  const home = t.dir;
  let host: HostProcess;
  let mcp: McpSession;

  before(async () => {
    assert.equal((await runJson(['vault', 'create', 'main'], { home })).code, 0);
    host = await startHost(home);
    mcp = await startMcp(home);
  });
  after(async () => {
    await mcp?.close();
    await host?.stop();
    await unmountAll(home);
    t.cleanup();
  });

  test('calls go through the host: its clients see the run, the audit trail records the writes', async () => {
    const watcher = await hostClient(home, { name: 'watcher' });
    const started: string[] = [];
    watcher.conn.onNotification('exec/started', (n: { surface: string }) => void started.push(n.surface));
    assert.ok(await waitFor(() => /through the running host/.test(mcp.log()), 10_000), mcp.log());
    await mcp.call('write_file', { path: '/via-host.txt', content: 'hi\n' });
    const r = await mcp.call('exec', { command: 'cat via-host.txt' });
    assert.equal(ExecutionEnvelope.parse(r.structuredContent).result.stdout, 'hi\n');
    const { runs } = await watcher.callHost('exec/list', {});
    assert.ok(runs.some((x) => x.id === (r.structuredContent as { id: string }).id && x.surface.startsWith('rpc:avfs mcp')), JSON.stringify(runs.map((x) => x.surface)));
    assert.ok(started.some((s) => s.startsWith('rpc:avfs mcp')));
    const audit = await runJson(['--vault', 'main', 'audit'], { home });
    assert.match(JSON.stringify(audit.json), /via-host\.txt/);
    watcher.close();
  });

  test('a command that needs approval waits for an approver of the host: approved it runs, denied it is isError and runs nothing', async () => {
    let answer: 'approve_once' | 'deny' = 'approve_once';
    const asked: ApprovalRequest[] = [];
    const approver = await hostClient(home, {
      name: 'approver',
      approver: true,
      setup: (conn) => conn.onRequest('approval/request', (req: ApprovalRequest) => (asked.push(req), { answer, by: 'test approver' })),
    });
    const ok = await mcp.call('exec', { command: 'python3 -c "import socket; print(\'approved\')"' });
    assert.equal(ok.isError, undefined, textOf(ok));
    assert.equal(ExecutionEnvelope.parse(ok.structuredContent).result.stdout, 'approved\n');
    assert.equal(asked.length, 1);
    answer = 'deny';
    const no = await mcp.call('exec', { command: 'python3 -c "import socket; open(\'denied.txt\', \'w\')"' });
    assert.equal(no.isError, true);
    const env = ExecutionEnvelope.parse(no.structuredContent);
    assert.equal(env.result.state, 'denied');
    assert.equal(env.result.approval?.outcome, 'denied');
    // The host names the answerer by what it knows of the connection (pid, uid), not by what it claims.
    assert.match(textOf(no), /approval: denied by .*pid \d+/);
    assert.equal((await mcp.call('file_info', { path: '/denied.txt' })).isError, true);
    approver.close();
  });

  test('cancelling an exec through the host: the host records the run as cancelled (the envelope is kept)', async () => {
    const ac = new AbortController();
    const call = mcp.call('exec', { command: 'sleep 32.5' }, { signal: ac.signal });
    assert.ok(await waitFor(async () => (await sh('pgrep', ['-f', 'sleep 32.5'])).code === 0, 15_000));
    ac.abort();
    await assert.rejects(call);
    const watcher = await hostClient(home, { name: 'watcher' });
    let state: string | undefined;
    assert.ok(
      await waitFor(async () => {
        const { runs } = await watcher.callHost('exec/list', {});
        state = runs.find((x) => x.command === 'sleep 32.5')?.envelope?.result.state;
        return state !== undefined;
      }, 15_000),
    );
    assert.equal(state, 'cancelled');
    watcher.close();
  });
});
