import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { cliReference } from '../../host/cli/reference';
import { generatedDocs } from '../../host/protocol/docs';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { ROOT } from '../helpers';

test('generated docs (error table, JSON schemas) are up to date: run `npm run docs`', () => {
  for (const [rel, text] of Object.entries({ ...generatedDocs(), 'docs/cli.md': cliReference() })) {
    assert.equal(readFileSync(join(ROOT, rel), 'utf8'), text, `${rel} is stale`);
  }
});

test('every error kind has its own exit code, a real errno and its own JSON-RPC code outside the reserved range', () => {
  const byCode = new Map<number, string[]>();
  const byRpc = new Map<number, string[]>();
  for (const [kind, e] of Object.entries(ERROR_TABLE)) {
    assert.ok(e.exit > 0 && e.exit < 126, `${kind} exit code is a valid non-zero status`);
    assert.ok(e.errno in constants.errno, `${kind} errno ${e.errno} exists`);
    assert.ok(Number.isInteger(e.rpc) && (e.rpc < -32768 || e.rpc > -32000), `${kind} JSON-RPC code ${e.rpc} is outside -32768..-32000`);
    byCode.set(e.exit, [...(byCode.get(e.exit) ?? []), kind]);
    byRpc.set(e.rpc, [...(byRpc.get(e.rpc) ?? []), kind]);
  }
  assert.deepEqual([...byCode.values()].filter((kinds) => kinds.length > 1), [], 'no two kinds share an exit code');
  assert.deepEqual([...byRpc.values()].filter((kinds) => kinds.length > 1), [], 'no two kinds share a JSON-RPC code');
});

test('file errors map to the VS Code FileSystemError of the same condition', () => {
  const expected = {
    NotFound: 'FileNotFound',
    VaultNotFound: 'FileNotFound',
    AlreadyExists: 'FileExists',
    NotADirectory: 'FileNotADirectory',
    IsADirectory: 'FileIsADirectory',
    ReadOnly: 'NoPermissions',
    PermissionDenied: 'NoPermissions',
    QuotaExceeded: 'NoPermissions',
    Busy: 'Unavailable',
  } as const;
  for (const [kind, name] of Object.entries(expected)) assert.equal(ERROR_TABLE[kind as keyof typeof expected].vscode, name, kind);
});
