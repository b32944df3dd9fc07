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

test('every error kind has its own exit code and a real errno', () => {
  const byCode = new Map<number, string[]>();
  for (const [kind, e] of Object.entries(ERROR_TABLE)) {
    assert.ok(e.exit > 0 && e.exit < 126, `${kind} exit code is a valid non-zero status`);
    assert.ok(e.errno in constants.errno, `${kind} errno ${e.errno} exists`);
    byCode.set(e.exit, [...(byCode.get(e.exit) ?? []), kind]);
  }
  const shared = [...byCode.values()].filter((kinds) => kinds.length > 1);
  assert.deepEqual(shared, [], 'no two kinds share an exit code');
});
