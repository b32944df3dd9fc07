/**
 * The operations that have no CLI command of their own, or options only other callers use (the
 * editor's file systems): run in-process on real vault files, with params validated as the host
 * validates them.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { OPS } from '../../host/ops';
import type { OpName, OpsContext } from '../../host/ops/context';
import { oneShotVaults } from '../../host/ops/vaultAccess';
import { createPolicyEngine } from '../../host/policy/engine';
import { AvfsError, toAvfsError } from '../../host/protocol/errors';
import { METHODS, type MethodParams, type MethodResult } from '../../host/protocol/methods';
import { AvfsHome } from '../../host/store/home';
import { tempDir } from '../helpers';

describe('operations', () => {
  const t = tempDir('avfs-ops-');
  const home = new AvfsHome(join(t.dir, 'home'));
  const ctx: OpsContext = { home, surface: 'rpc', vaults: oneShotVaults(home), engine: () => createPolicyEngine() };
  const call = async <M extends OpName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>> =>
    (OPS[method] as (c: OpsContext, p: unknown) => Promise<MethodResult<M>>)(ctx, METHODS[method].params.parse(params));
  /** The kind of error a call fails with. */
  const kindOf = async (p: Promise<unknown>) =>
    p.then(
      () => 'no error',
      (e: unknown) => toAvfsError(e).kind,
    );
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const text = async (path: string) => Buffer.from((await call('fs/readFile', { vault: 'v', path })).data, 'base64').toString();

  before(async () => {
    await call('vault/create', { name: 'v' });
    await call('fs/writeFile', { vault: 'v', path: '/src/app.py', data: b64('print(1)\n'), parents: true });
    await call('fs/link', { vault: 'v', path: '/link', target: 'src', symbolic: true });
    await call('checkpoint/save', { vault: 'v', name: 'before' });
    await call('fs/writeFile', { vault: 'v', path: '/src/app.py', data: b64('print(2)\n') });
    await call('fs/delete', { vault: 'v', path: '/link' });
  });
  after(t.cleanup);

  test('a checkpoint is read by path as it was: stat, directory, file, through a symlink it had', async () => {
    const st = await call('checkpoint/stat', { vault: 'v', name: 'before', path: '/src/app.py' });
    assert.deepEqual([st.type, st.size, st.path], ['file', 9, '/src/app.py']);
    const link = await call('checkpoint/stat', { vault: 'v', name: 'before', path: '/link' });
    assert.deepEqual([link.type, link.target], ['symlink', 'src'], 'stat does not follow the last symlink');
    const dir = await call('checkpoint/readDirectory', { vault: 'v', name: 'before', path: '/link' });
    assert.deepEqual(dir.entries.map((e) => e.name), ['app.py']);
    const file = await call('checkpoint/readFile', { vault: 'v', name: 'before', path: '/link/app.py' });
    assert.equal(Buffer.from(file.data, 'base64').toString(), 'print(1)\n');
    assert.equal(await text('/src/app.py'), 'print(2)\n', 'the live tree moved on');
    assert.equal(await kindOf(call('checkpoint/readFile', { vault: 'v', name: 'before', path: '/nope' })), 'NotFound');
    assert.equal(await kindOf(call('checkpoint/readFile', { vault: 'v', name: 'before', path: '/src' })), 'IsADirectory');
    assert.equal(await kindOf(call('checkpoint/readDirectory', { vault: 'v', name: 'before', path: '/src/app.py' })), 'NotADirectory');
    assert.equal(await kindOf(call('checkpoint/stat', { vault: 'v', name: 'gone', path: '/' })), 'NotFound');
  });

  test('writeFile keeps VS Code\'s create and overwrite rules', async () => {
    assert.equal(await kindOf(call('fs/writeFile', { vault: 'v', path: '/new.txt', data: b64('x'), create: false })), 'NotFound');
    assert.equal(await kindOf(call('fs/writeFile', { vault: 'v', path: '/src/app.py', data: b64('x'), overwrite: false })), 'AlreadyExists');
    assert.equal(await text('/src/app.py'), 'print(2)\n', 'a refused write changes nothing');
    const r = await call('fs/writeFile', { vault: 'v', path: '/src/app.py', data: b64('y'), create: false });
    assert.deepEqual([r.created, r.size], [false, 1]);
  });

  test('rename and copy refuse to replace a file when overwrite is false', async () => {
    await call('fs/writeFile', { vault: 'v', path: '/one', data: b64('1') });
    await call('fs/writeFile', { vault: 'v', path: '/two', data: b64('2') });
    assert.equal(await kindOf(call('fs/rename', { vault: 'v', from: '/one', to: '/two', overwrite: false })), 'AlreadyExists');
    assert.equal(await kindOf(call('fs/copy', { vault: 'v', from: '/one', to: '/two', overwrite: false })), 'AlreadyExists');
    assert.equal(await text('/two'), '2');
    await call('fs/rename', { vault: 'v', from: '/one', to: '/two' });
    assert.equal(await text('/two'), '1');
  });

  test('readDirectory: dot files unless all is false; a file listed as itself only with list_file', async () => {
    await call('fs/writeFile', { vault: 'v', path: '/.hidden', data: b64('h') });
    const names = async (p: MethodParams<'fs/readDirectory'>) => (await call('fs/readDirectory', p)).entries.map((e) => e.name);
    assert.ok((await names({ vault: 'v', path: '/' })).includes('.hidden'));
    assert.ok(!(await names({ vault: 'v', path: '/', all: false })).includes('.hidden'));
    assert.equal(await kindOf(call('fs/readDirectory', { vault: 'v', path: '/two' })), 'NotADirectory');
    assert.deepEqual(await names({ vault: 'v', path: '/two', list_file: true }), ['two']);
  });

  test('paths from other callers must be absolute; host paths absolute or with the caller\'s cwd', async () => {
    assert.equal(await kindOf(call('fs/stat', { vault: 'v', path: 'src' })), 'InvalidPath');
    assert.equal(await kindOf(call('fs/stat', { vault: 'v', path: '' })), 'InvalidPath');
    assert.equal(await kindOf(call('fs/import', { vault: 'v', host_path: 'relative/dir' })), 'InvalidInput');
    assert.equal(await kindOf(call('fs/export', { vault: 'v', path: '/src', host_path: 'out', host_cwd: 'not/absolute' })), 'InvalidInput');
    const r = await call('fs/export', { vault: 'v', path: '/src', host_path: 'out', host_cwd: t.dir });
    assert.equal(r.destination, 'out');
    assert.equal(r.files_exported, 1);
    assert.equal(await kindOf(call('mount/mount', { vault: 'v', mountpoint: 'relative' })), 'InvalidInput');
    assert.equal(await kindOf(call('mount/unmount', { mountpoint: 'relative' })), 'InvalidInput');
  });

  test('bad params are InvalidInput naming the field, and write nothing', async () => {
    const bad = async (method: OpName, params: unknown) => {
      try {
        await (OPS[method] as (c: OpsContext, p: unknown) => unknown)(ctx, METHODS[method].params.parse(params));
        return 'no error';
      } catch (e) {
        const ae = toAvfsError(e);
        assert.ok(ae instanceof AvfsError);
        return `${ae.kind} ${String(ae.details.field)}`;
      }
    };
    assert.equal(await bad('vault/create', { name: 'q', quotas: { max_files: -1 } }), 'InvalidInput quotas.max_files');
    assert.equal(await bad('fs/chmod', { vault: 'v', path: '/two', mode: 0o17777 }), 'InvalidInput mode');
    assert.equal(await bad('quota/set', { vault: 'v', key: 'max_bananas', value: 1 }), 'InvalidInput key');
    assert.equal(home.exists('q'), false);
  });
});
