import assert from 'node:assert/strict';
import { test } from 'node:test';
import { impactOf } from '../../extension/events';

const change = (op: string, path: string | null, path2: string | null = null, seq = 1) => ({ seq, op, path, path2, surface: 'cli' });

test('journal operations become created / changed / deleted file events, one per path', () => {
  const impact = impactOf({
    vault: 'demo',
    kind: 'files',
    truncated: false,
    changes: [
      change('create', '/new.txt'),
      change('write', '/new.txt'),
      change('write', '/old.txt'),
      change('mkdir', '/dir'),
      change('unlink', '/gone.txt'),
      change('rename', '/a', '/b'),
      change('copy', '/src', '/copy'),
      change('setattr', '/mode'),
      change('some_future_op', '/x'),
    ],
  });
  assert.equal(impact.wholeTree, false);
  assert.deepEqual(impact.files, [
    { kind: 'created', path: '/new.txt' },
    { kind: 'changed', path: '/old.txt' },
    { kind: 'created', path: '/dir' },
    { kind: 'deleted', path: '/gone.txt' },
    { kind: 'deleted', path: '/a' },
    { kind: 'created', path: '/b' },
    { kind: 'created', path: '/copy' },
    { kind: 'changed', path: '/mode' },
    { kind: 'changed', path: '/x' },
  ]);
});

test('a restore, an import, a truncated batch or a deleted vault means the whole tree is re-read', () => {
  assert.equal(impactOf({ vault: 'v', kind: 'checkpoints', truncated: false, changes: [change('checkpoint_restore', null)] }).wholeTree, true);
  assert.equal(impactOf({ vault: 'v', kind: 'files', truncated: false, changes: [change('import', '/docs')] }).wholeTree, true);
  assert.equal(impactOf({ vault: 'v', kind: 'files', truncated: true, changes: [change('write', '/a')] }).wholeTree, true);
  const deleted = impactOf({ vault: 'v', kind: 'deleted', truncated: false, changes: [] });
  assert.equal(deleted.wholeTree, true);
  assert.deepEqual(deleted.files, [{ kind: 'deleted', path: '/' }]);
  // A checkpoint saved changes no file.
  const saved = impactOf({ vault: 'v', kind: 'checkpoints', truncated: false, changes: [change('checkpoint_save', null)] });
  assert.deepEqual(saved, { vault: 'v', files: [], wholeTree: false, checkpoints: true });
  assert.equal(impactOf({ vault: 'v', kind: 'files', truncated: false, changes: [change('write', '/a')] }).checkpoints, false);
});

test('a path deleted and created again in one batch ends as created', () => {
  const impact = impactOf({ vault: 'v', kind: 'files', truncated: false, changes: [change('unlink', '/f'), change('create', '/f'), change('write', '/f')] });
  assert.deepEqual(impact.files, [{ kind: 'created', path: '/f' }]);
});
