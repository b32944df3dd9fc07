/**
 * An agent's vault made from the project it was asked to work on: `avfs mcp --from DIR` serves the
 * vault made from that folder (made on first start, found again after, refused when the name holds
 * another project), the `project_changes` tool shows the agent what it changed against the project
 * base and what would conflict, and `avfs hook install claude-code --from DIR` routes Bash into such
 * a vault. Real MCP server process driven by the SDK client, real folders, the real CLI.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { runCli, runJson, tempDir } from '../helpers';
import { startMcp, textOf } from '../mcp/helpers';

interface Changes {
  base: { source: string };
  changes: Array<{ path: string; action: string; status: string; reason?: string }>;
  conflicts: Array<{ path: string; reason: string }>;
  patch?: string;
}

describe('an agent\'s vault made from its project (MCP and the Claude Code hook)', () => {
  const t = tempDir('avfs-apply-agents-');
  after(t.cleanup);
  const home = join(t.dir, 'home');
  const proj = join(t.dir, 'my-app');
  fs.mkdirSync(join(proj, 'src'), { recursive: true });
  fs.writeFileSync(join(proj, 'src', 'app.py'), 'print("hello")\n');
  fs.writeFileSync(join(proj, 'src', 'util.py'), 'def f():\n    return 1\n');

  test('avfs mcp --from: the vault is made from the project, project_changes shows the work and the conflicts, apply brings it back', async () => {
    const session = await startMcp(home, ['--vault', 'task'], {}, ['--from', proj]);
    try {
      assert.match(session.log(), new RegExp(`vault task made from ${fs.realpathSync(proj)}`));
      const w = await session.call('write_file', { path: '/src/app.py', content: 'print("agent")\n' });
      assert.equal(w.isError, undefined, textOf(w));
      await session.call('write_file', { path: '/src/util.py', content: 'def f():\n    return 3\n' });
      fs.writeFileSync(join(proj, 'src', 'util.py'), 'def f():\n    return 2  # the developer\n');
      const r = await session.call('project_changes', { patch: true });
      assert.equal(r.isError, undefined, textOf(r));
      const c = r.structuredContent as unknown as Changes;
      assert.equal(c.base.source, fs.realpathSync(proj));
      assert.deepEqual(c.changes.map((x) => `${x.action} ${x.path} ${x.status}`), ['modify src/app.py apply', 'modify src/util.py conflict']);
      assert.deepEqual(c.conflicts, [{ path: 'src/util.py', kind: 'content', reason: 'changed in the project' }]);
      assert.match(c.patch ?? '', /\+print\("agent"\)/);
      assert.match(textOf(r), /^! modify src\/util\.py \(changed in the project\)$/m);
      assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("hello")\n', 'project_changes writes nothing');
    } finally {
      await session.close();
    }

    // Started again for the same project: the same vault, with the agent's work.
    const again = await startMcp(home, ['--vault', 'task'], {}, ['--from', proj]);
    try {
      assert.match(again.log(), /vault task was made from/);
      const f = await again.call('read_file', { path: '/src/app.py' });
      assert.equal(textOf(f), 'print("agent")\n');
    } finally {
      await again.close();
    }

    // Another project under the same name is refused: the server does not start.
    const other = join(t.dir, 'other');
    fs.mkdirSync(other);
    const refused = await runCli(['--vault', 'task', 'mcp', '--from', other], { home });
    assert.equal(refused.code, ERROR_TABLE.AlreadyExists.exit, refused.stderr);
    assert.match(refused.stderr, /vault task was made from .*my-app, not .*other/);

    // The developer keeps their util.py (the vault takes it), then applies the rest.
    assert.equal((await runCli(['--vault', 'task', 'write', '/src/util.py', fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8')], { home })).code, 0);
    const applied = await runJson(['apply', '--vault', 'task'], { home });
    assert.equal(applied.code, 0, JSON.stringify(applied.json));
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("agent")\n');
  });

  test('project_changes on a vault with no base is a typed error', async () => {
    assert.equal((await runJson(['vault', 'create', 'plain'], { home })).code, 0);
    const s = await startMcp(home, ['--vault', 'plain']);
    try {
      const r: CallToolResult = await s.call('project_changes', {});
      assert.equal(r.isError, true);
      assert.match(textOf(r), /^NotFound: vault plain was not made from a project/);
    } finally {
      await s.close();
    }
  });

  test('avfs hook install claude-code --from: the hook routes into the vault made from the project', async () => {
    const user = join(t.dir, 'user');
    fs.mkdirSync(user);
    const first = await runJson(['hook', 'install', 'claude-code', '--user', '--from', proj], { home, env: { HOME: user } });
    assert.equal(first.code, 0, JSON.stringify(first.json));
    assert.deepEqual(first.json.vault, { vault: 'my-app', source: fs.realpathSync(proj), created: true });
    assert.match(String(first.json.command), / hook claude-code --route 'my-app'$| hook claude-code --route my-app$/);
    const settings = fs.readFileSync(join(user, '.claude', 'settings.json'), 'utf8');
    assert.match(settings, /--route/);
    const files = await runJson(['--vault', 'my-app', 'ls', '/src'], { home });
    assert.equal(files.code, 0, JSON.stringify(files.json));
    const second = await runJson(['hook', 'install', 'claude-code', '--user', '--from', proj], { home, env: { HOME: user } });
    assert.deepEqual(second.json.vault, { vault: 'my-app', source: fs.realpathSync(proj), created: false });
    assert.equal(second.json.action, 'unchanged');
  });
});
