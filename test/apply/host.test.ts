/**
 * Apply driven through a real `avfs host` on its socket, as the extension calls it (project/create,
 * the dry run it shows as the multi-file diff, then project/apply), with the agent's work made by a
 * command the host runs in the vault's mount. A conflict comes back over the socket as the typed
 * error with every path, and nothing is written on either side.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { HostConnection } from '../../host/daemon/client';
import { AvfsError } from '../../host/protocol/errors';
import { tempDir } from '../helpers';
import { client, type HostProcess, startHost } from '../daemon/helpers';

/** Every entry of a folder: type, permission bits, bytes or target. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(join(root, r));
      if (st.isDirectory()) {
        out[r] = `dir ${(st.mode & 0o7777).toString(8)}`;
        walk(r);
      } else out[r] = st.isSymbolicLink() ? `-> ${fs.readlinkSync(join(root, r))}` : `file ${(st.mode & 0o7777).toString(8)} ${fs.readFileSync(join(root, r), 'utf8')}`;
    }
  };
  walk('');
  return out;
}

describe('apply through a running host, on its socket', () => {
  const t = tempDir('avfs-apply-host-');
  const home = join(t.dir, 'home');
  const proj = join(t.dir, 'project');
  let host: HostProcess;
  let c: HostConnection;
  const b64 = (s: string) => Buffer.from(s).toString('base64');

  before(async () => {
    fs.mkdirSync(join(proj, 'src'), { recursive: true });
    fs.writeFileSync(join(proj, 'src', 'app.py'), 'print("hello")\n');
    fs.writeFileSync(join(proj, 'src', 'util.py'), 'def f():\n    return 1\n');
    fs.writeFileSync(join(proj, 'old.txt'), 'old\n');
    host = await startHost(home, ['--verbose']);
    c = await client(home, { name: 'test window' });
  });
  after(async () => {
    c?.close();
    await host?.stop();
    t.cleanup();
  });

  test('a vault made from the folder, a command run in it, the plan, then the apply', async () => {
    const made = await c.call('project/create', { name: 'task', host_path: proj });
    assert.equal(made.base.source, fs.realpathSync(proj));
    const run = await c.call('exec/run', { vault: 'task', command: { argv: ['sh', '-c', 'echo "print(1)" > src/app.py && mkdir lib && echo new > lib/n.txt && rm old.txt'] } });
    assert.equal(run.result.exit_code, 0, JSON.stringify(run.result));
    const before = snapshot(proj);
    const plan = await c.call('project/apply', { vault: 'task', dry_run: true });
    assert.deepEqual(
      plan.changes.map((x) => `${x.action} ${x.path} ${x.status}`),
      ['add lib apply', 'add lib/n.txt apply', 'delete old.txt apply', 'modify src/app.py apply'],
    );
    assert.deepEqual(snapshot(proj), before, 'the plan writes nothing');
    const r = await c.call('project/apply', { vault: 'task' });
    assert.equal(r.applied, 4);
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print(1)\n');
    assert.equal(fs.readFileSync(join(proj, 'lib', 'n.txt'), 'utf8'), 'new\n');
    assert.equal(fs.existsSync(join(proj, 'old.txt')), false);
    assert.match(host.log(), / call project\/apply from test window: ok/);
    assert.deepEqual((await c.call('project/apply', { vault: 'task', dry_run: true })).changes, [], 'the base moved with the apply');
  });

  test('a conflict is the typed error over the socket, every path listed, nothing written; choosing a side per file clears it', async () => {
    fs.writeFileSync(join(proj, 'src', 'util.py'), 'def f():\n    return 2  # the developer\n');
    fs.writeFileSync(join(proj, 'lib', 'n.txt'), 'mine\n');
    await c.call('fs/writeFile', { vault: 'task', path: '/src/util.py', data: b64('def f():\n    return 3  # the agent\n') });
    await c.call('fs/writeFile', { vault: 'task', path: '/lib/n.txt', data: b64('theirs\n') });
    await c.call('fs/writeFile', { vault: 'task', path: '/src/app.py', data: b64('print(2)\n') });
    const before = snapshot(proj);
    await assert.rejects(c.call('project/apply', { vault: 'task' }), (e: unknown) => {
      assert.ok(e instanceof AvfsError, String(e));
      assert.equal(e.kind, 'Conflict');
      assert.deepEqual(e.details.conflicts, [
        { path: 'lib/n.txt', kind: 'content', reason: 'changed in the project' },
        { path: 'src/util.py', kind: 'content', reason: 'changed in the project' },
      ]);
      return true;
    });
    assert.deepEqual(snapshot(proj), before, 'nothing was written, not even the change without a conflict');
    const plan = await c.call('project/apply', { vault: 'task', dry_run: true });
    assert.deepEqual(plan.conflicts.map((x) => x.path), ['lib/n.txt', 'src/util.py'], 'the base did not move');

    // The developer keeps the project's util.py (the vault takes it) and the vault's n.txt (applied alone).
    await c.call('fs/writeFile', { vault: 'task', path: '/src/util.py', data: b64(fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8')) });
    fs.writeFileSync(join(proj, 'lib', 'n.txt'), 'new\n');
    const r = await c.call('project/apply', { vault: 'task' });
    assert.deepEqual(r.conflicts, []);
    assert.equal(fs.readFileSync(join(proj, 'lib', 'n.txt'), 'utf8'), 'theirs\n');
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print(2)\n');
    assert.equal(fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8'), 'def f():\n    return 2  # the developer\n');
  });
});
