// The Executions page keeps inline diffs and open files for the last few runs only.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEEP_RUNS, remember } from '../../webview/bounded';

test('remember keeps the newest entries, a run looked at again counting as new', () => {
  const diffs = new Map<string, number>();
  for (let i = 0; i < 3 * KEEP_RUNS; i++) {
    remember(diffs, `run-${i}`, i);
    // run-0 is looked at again after each other run: it stays.
    remember(diffs, 'run-0', 0);
  }
  assert.equal(diffs.size, KEEP_RUNS);
  assert.ok(diffs.has('run-0'));
  assert.ok(diffs.has(`run-${3 * KEEP_RUNS - 1}`));
  assert.ok(!diffs.has('run-1'), 'the oldest are dropped');
  assert.deepEqual([...diffs.keys()].at(-1), 'run-0');
});
