import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AvfsError } from '../../host/protocol/errors';
import { normalizePath as hostNormalizePath } from '../../host/vfs/paths';
import { BadUriError, basename, checkpointUri, joinPath, normalizePath, parentPath, parseCheckpointUri, parseVaultUri, vaultUri } from '../../extension/uris';

test('avfs://<vault>/<path> round-trips, with the path normalised to what the host takes', () => {
  const uri = vaultUri({ vault: 'demo', path: 'src//app.py/' });
  assert.deepEqual(uri, { scheme: 'avfs', authority: 'demo', path: '/src/app.py', query: '' });
  assert.deepEqual(parseVaultUri(uri), { vault: 'demo', path: '/src/app.py' });
  assert.deepEqual(parseVaultUri({ scheme: 'avfs', authority: 'demo', path: '', query: '' }), { vault: 'demo', path: '/' });
  assert.deepEqual(parseVaultUri({ scheme: 'avfs', authority: 'demo', path: '/./a/./b', query: '' }), { vault: 'demo', path: '/a/b' });
});

test('a checkpoint URI carries the checkpoint as JSON in the query and round-trips', () => {
  const uri = checkpointUri({ vault: 'demo-fork_2', path: '/src/app.py', checkpoint: 'before-restore-2026-01-01T00:00:00.000Z-3' });
  assert.equal(uri.scheme, 'avfs-checkpoint');
  assert.equal(uri.path, '/src/app.py');
  assert.deepEqual(JSON.parse(uri.query), { checkpoint: 'before-restore-2026-01-01T00:00:00.000Z-3' });
  assert.deepEqual(parseCheckpointUri(uri), { vault: 'demo-fork_2', path: '/src/app.py', checkpoint: 'before-restore-2026-01-01T00:00:00.000Z-3' });
});

test('URIs that name no vault, another scheme or no checkpoint are refused with BadUriError', () => {
  const bad = [
    () => parseVaultUri({ scheme: 'file', authority: '', path: '/etc/passwd', query: '' }),
    () => parseVaultUri({ scheme: 'avfs', authority: '', path: '/x', query: '' }),
    () => parseVaultUri({ scheme: 'avfs', authority: '-x', path: '/x', query: '' }),
    () => parseVaultUri({ scheme: 'avfs', authority: 'a b', path: '/x', query: '' }),
    () => parseCheckpointUri({ scheme: 'avfs', authority: 'demo', path: '/x', query: '{"checkpoint":"a"}' }),
    () => parseCheckpointUri({ scheme: 'avfs-checkpoint', authority: 'demo', path: '/x', query: '' }),
    () => parseCheckpointUri({ scheme: 'avfs-checkpoint', authority: 'demo', path: '/x', query: 'checkpoint=a' }),
    () => parseCheckpointUri({ scheme: 'avfs-checkpoint', authority: 'demo', path: '/x', query: '{"checkpoint":""}' }),
    () => parseCheckpointUri({ scheme: 'avfs-checkpoint', authority: 'demo', path: '/x', query: '{"checkpoint":"a","extra":1}' }),
  ];
  for (const parse of bad) assert.throws(parse, BadUriError);
});

test('path helpers: join, basename and parent of vault paths', () => {
  assert.equal(normalizePath('a/b/'), '/a/b');
  assert.equal(joinPath('/', 'src'), '/src');
  assert.equal(joinPath('/src', 'app.py'), '/src/app.py');
  assert.equal(basename('/src/app.py'), 'app.py');
  assert.equal(basename('/'), '/');
  assert.equal(parentPath('/src/app.py'), '/src');
  assert.equal(parentPath('/src'), '/');
  assert.equal(parentPath('/'), '/');
});

test("`..` means one thing on every side: the editor's avfs: URIs resolve it as the host's file system does, and refuse what leaves the root", () => {
  const cases: [string, string][] = [
    ['/a/../b', '/b'],
    ['/a/b/..', '/a'],
    ['/a/./b/../../c/', '/c'],
    ['/..a/b', '/..a/b'],
    ['/a/...', '/a/...'],
  ];
  for (const [path, want] of cases) {
    assert.equal(hostNormalizePath(path), want, `host: ${path}`);
    assert.equal(normalizePath(path), want, `editor: ${path}`);
    assert.equal(parseVaultUri({ scheme: 'avfs', authority: 'demo', path, query: '' }).path, want, `avfs://demo${path}`);
    assert.deepEqual(vaultUri({ vault: 'demo', path }), { scheme: 'avfs', authority: 'demo', path: want, query: '' });
  }
  for (const path of ['/..', '/a/../..', '/../etc/passwd', '/a/b/../../../x']) {
    assert.throws(() => hostNormalizePath(path), (e: unknown) => e instanceof AvfsError && e.kind === 'InvalidPath', `host: ${path}`);
    assert.throws(() => parseVaultUri({ scheme: 'avfs', authority: 'demo', path, query: '' }), BadUriError, `avfs://demo${path}`);
    assert.throws(() => parseCheckpointUri({ scheme: 'avfs-checkpoint', authority: 'demo', path, query: '{"checkpoint":"a"}' }), BadUriError);
  }
  assert.equal(joinPath('/src', '..'), '/');
  assert.equal(parentPath('/a/b/../c'), '/a');
});

