/**
 * What an agent or a vault controls never reaches a terminal raw: file names with ESC and
 * newlines in `avfs ls`, a command that tries to erase its own dangerous part on screen in
 * `avfs approvals` and at the terminal approver, error messages that quote a path.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { terminalApprover } from '../../host/proxy/approvals';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { runCli, runJson, tempDir } from '../helpers';
import { client, type HostProcess, startHost } from '../daemon/helpers';
import { waitFor } from '../fuse/helpers';

const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202e]/;
const EVIL = 'innocent\r\x1b[2K\x1b]0;title\x07 rm -rf ~\u202egnp.exe';

describe('text from agents and vaults on a terminal', () => {
  const t = tempDir('avfs-termtext-');
  const home = t.dir;
  let host: HostProcess | undefined;
  before(async () => {
    await runJson(['vault', 'create', 'main'], { home });
  });
  after(async () => {
    await host?.stop();
    t.cleanup();
  });

  test('avfs ls, ls -l and tree show names with ESC, CR and newlines escaped, one line each', async () => {
    for (const name of ['plain.txt', 'a\nforged line', `x${EVIL}`]) {
      const w = await runJson(['--vault', 'main', 'write', `/${name}`, 'x'], { home });
      assert.equal(w.code, 0, JSON.stringify(w.json));
    }
    const ls = await runCli(['--vault', 'main', 'ls', '/'], { home });
    assert.equal(ls.code, 0, ls.stderr);
    assert.doesNotMatch(ls.stdout, CONTROL);
    assert.deepEqual(ls.stdout.trimEnd().split('\n'), ['a\\nforged line', 'plain.txt', 'xinnocent\\r\\e[2K\\e]0;title\\x07 rm -rf ~\\u202egnp.exe']);
    for (const args of [['ls', '-l', '/'], ['tree', '/']]) {
      const r = await runCli(['--vault', 'main', ...args], { home });
      assert.equal(r.code, 0, r.stderr);
      assert.doesNotMatch(r.stdout, CONTROL, args.join(' '));
      assert.match(r.stdout, /a\\nforged line/);
    }
    // The names themselves are kept exactly: --json has them as they are.
    const j = await runJson(['--vault', 'main', 'ls', '/'], { home });
    assert.ok((j.json.entries as Array<{ name: string }>).some((e) => e.name === `x${EVIL}`));
    // An error quoting the path shows it escaped too.
    const missing = await runCli(['--vault', 'main', 'cat', `/gone${EVIL}`], { home });
    assert.notEqual(missing.code, 0);
    assert.doesNotMatch(missing.stderr, CONTROL);
    assert.match(missing.stderr, /gone/);
  });

  test('avfs approvals shows a waiting command escaped', async () => {
    host = await startHost(home, ['--approval-timeout', '60000']);
    const silent = await client(home, { name: 'silent approver', approver: true, setup: (conn) => conn.onRequest('approval/request', () => new Promise(() => undefined)) });
    const command = `git push origin main ${EVIL}`;
    const run = runJson(['--vault', 'main', 'proxy', 'exec', '--shell', command], { home });
    try {
      let listed = '';
      assert.ok(
        await waitFor(async () => {
          listed = (await runCli(['approvals'], { home })).stdout;
          return listed.includes('git push');
        }, 20_000),
        listed,
      );
      assert.doesNotMatch(listed, CONTROL);
      assert.match(listed, /\\r\\e\[2K/);
      const id = /^([0-9a-f-]{36})/m.exec(listed)![1]!;
      assert.equal((await runCli(['deny', id], { home })).code, 0);
    } finally {
      await run;
      silent.close();
    }
  });

  test('the terminal approver shows the command, its vault, cwd and reason escaped', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d: Buffer) => (shown += d.toString()));
    const req = { id: 'r1', vault: `v${EVIL}`, cwd: `/w${EVIL}`, command: `curl x | sh ${EVIL}`, reason: `because\n  why: harmless ${EVIL}`, categories: ['network'] } as unknown as ApprovalRequest;
    const asked = terminalApprover({ input, output, timeoutMs: 5000 }).ask(req, new AbortController().signal);
    await waitFor(() => shown.includes('[y/N]'), 5000);
    input.write('n\n');
    const o = await asked;
    assert.equal(o.kind, 'answered');
    // readline's own prompt handling moves the cursor; what the request carried must not.
    const request = shown.slice(0, shown.indexOf('Run it once?')).replace(/\x1b\[1G\x1b\[0J$/, '');
    assert.doesNotMatch(request, CONTROL);
    assert.match(shown, /\$ curl x \| sh innocent\\r\\e\[2K/);
    assert.equal(shown.match(/why:/g)?.length, 2, 'the forged "why:" stays on the reason\'s line');
    assert.match(shown, /why: because\\n {2}why: harmless/);
  });
});
