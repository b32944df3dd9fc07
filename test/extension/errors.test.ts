import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ERROR_KINDS, ERROR_TABLE } from '../../host/protocol/errors';
import { errorMessage, fsErrorName, HostCallError, typedErrorOf } from '../../extension/errors';
import { ago, formatBytes, plural } from '../../extension/format';

test("a failed call's FileSystemError is the error table's, by kind; no host to ask is Unavailable", () => {
  const call = (kind: (typeof ERROR_KINDS)[number]) => new HostCallError('fs/stat', { error: kind, message: 'm' });
  for (const kind of ERROR_KINDS) assert.equal(fsErrorName(call(kind)), ERROR_TABLE[kind].vscode, kind);
  // What a file system needs most, spelled out.
  assert.equal(fsErrorName(call('NotFound')), 'FileNotFound');
  assert.equal(fsErrorName(call('AlreadyExists')), 'FileExists');
  assert.equal(fsErrorName(call('NotADirectory')), 'FileNotADirectory');
  assert.equal(fsErrorName(call('IsADirectory')), 'FileIsADirectory');
  assert.equal(fsErrorName(call('QuotaExceeded')), 'NoPermissions');
  assert.equal(fsErrorName(call('InvalidInput')), null);
  assert.equal(fsErrorName(new HostCallError('fs/stat', { error: 'HostUnavailable', message: 'gone' })), 'Unavailable');
  assert.equal(fsErrorName(new Error('anything else')), 'Unavailable');
});

test("a JSON-RPC error's data is taken as the typed error only when it has the protocol's shape", () => {
  assert.deepEqual(typedErrorOf({ error: 'NotFound', message: 'no such file or directory: /x', path: '/x' }), {
    error: 'NotFound',
    message: 'no such file or directory: /x',
    path: '/x',
  });
  assert.equal(typedErrorOf({ error: 'NoSuchKind', message: 'x' }), undefined);
  assert.equal(typedErrorOf({ message: 'x' }), undefined);
  assert.equal(typedErrorOf(undefined), undefined);
});

test('a quota refusal says which quota, its limit and what the write needed', () => {
  const size = new HostCallError('fs/writeFile', {
    error: 'QuotaExceeded',
    message: 'quota exceeded: max_file_size_mb is 1048576 bytes; file would grow to 2097152 bytes (/big.txt)',
    quota: 'max_file_size_mb',
    limit: 1048576,
    current: 10,
    requested: 2097152,
    unit: 'bytes',
    path: '/big.txt',
  });
  assert.equal(
    errorMessage(size),
    'Vault quota max_file_size_mb exceeded (/big.txt): the limit is 1 MiB per file and the file would grow to 2 MiB. ' +
      'Nothing was written; raise or clear the quota with "AVFS: Set Quota".',
  );
  const files = new HostCallError('fs/writeFile', {
    error: 'QuotaExceeded',
    message: 'quota exceeded: max_files is 3 files; needs 1 more files, 3 in use (/d)',
    quota: 'max_files',
    limit: 3,
    current: 3,
    requested: 1,
    unit: 'files',
    path: '/d',
  });
  assert.match(errorMessage(files), /^Vault quota max_files exceeded \(\/d\): the limit is 3 files, 3 files in use, and this needs 1 file more\./);
  // Without the details, the host's own message (which names the quota) is shown as it is.
  const bare = new HostCallError('fs/writeFile', { error: 'QuotaExceeded', message: 'quota exceeded: max_size_mb is 1 MiB' });
  assert.equal(errorMessage(bare), 'quota exceeded: max_size_mb is 1 MiB');
  assert.equal(errorMessage(new Error('plain')), 'plain');
});

test('sizes, counts and ages read as people write them', () => {
  assert.equal(formatBytes(0), '0 B');
  assert.equal(formatBytes(1023), '1023 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(256 * 1024 * 1024), '256 MiB');
  assert.equal(formatBytes(12.34 * 1024 * 1024), '12 MiB');
  assert.equal(plural(1, 'file'), '1 file');
  assert.equal(plural(2, 'entry', 'entries'), '2 entries');
  const now = Date.parse('2026-01-10T12:00:00Z');
  assert.equal(ago('2026-01-10T11:59:50Z', now), 'just now');
  assert.equal(ago('2026-01-10T11:55:00Z', now), '5 min ago');
  assert.equal(ago('2026-01-10T09:00:00Z', now), '3 h ago');
  assert.equal(ago('2026-01-08T12:00:00Z', now), '2 days ago');
  assert.equal(ago('2025-10-01T12:00:00Z', now), '2025-10-01');
});
