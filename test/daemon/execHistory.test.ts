/** The host's memory of runs for exec/list: bounded in runs and in live output. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ExecHistory } from '../../host/protocol/execHistory';
import type { ExecutionEnvelope } from '../../host/protocol/exec';

const envelope = (id: string) => ({ id, request: { command: `cmd ${id}` }, result: { vault: 'v', state: 'completed', total_ms: 5, stdout: '', stderr: '' } }) as unknown as ExecutionEnvelope;
const start = (h: ExecHistory, id: string) => h.started({ id, vault: 'v', command: `cmd ${id}`, surface: 'rpc:test', started_at: new Date().toISOString() });

describe('ExecHistory', () => {
  test('keeps the last finished runs, newest first, and lists running ones before them', () => {
    const h = new ExecHistory(3, 100);
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      start(h, id);
      h.finished(id, envelope(id));
    }
    start(h, 'live');
    h.state('live', 'executing');
    assert.deepEqual(h.list().map((r) => r.id), ['live', 'e', 'd', 'c']);
    assert.equal(h.list()[0]!.state, 'executing');
    assert.deepEqual(h.list(1).map((r) => r.id), ['live', 'e']);
  });

  test('live output keeps its head and its latest part, and says what fell between', () => {
    const h = new ExecHistory(3, 20);
    start(h, 'x');
    h.output('x', 'stdout', 'HEAD-HEAD-');
    for (let i = 0; i < 10; i++) h.output('x', 'stdout', `line${i}\n`);
    const run = h.list()[0]!;
    assert.equal(run.output_truncated, true);
    assert.ok(run.stdout.startsWith('HEAD-HEAD-\n… '), run.stdout);
    assert.ok(run.stdout.endsWith('e8\nline9\n'), run.stdout);
    assert.match(run.stdout, /… 50 characters left out …/);
    assert.equal(run.stderr, '');
  });

  test('a finished run keeps at most the live budget of each stream, however much its envelope held', () => {
    const h = new ExecHistory(3, 20);
    const big = { ...envelope('big'), result: { ...envelope('big').result, stdout: 'HEAD-HEAD-' + 'x'.repeat(100_000) + 'tail-tail!', stderr: 'short', stdout_truncated: false, stderr_truncated: false } } as unknown as ExecutionEnvelope;
    start(h, 'big');
    h.finished('big', big);
    const run = h.get('big')!;
    assert.equal(run.output_truncated, true);
    assert.ok(run.envelope!.result.stdout.length < 100, run.envelope!.result.stdout);
    assert.ok(run.envelope!.result.stdout.startsWith('HEAD-HEAD-') && run.envelope!.result.stdout.endsWith('tail-tail!'));
    assert.equal(run.envelope!.result.stdout_truncated, true);
    assert.equal(run.envelope!.result.stderr, 'short');
    assert.equal(run.envelope!.result.stderr_truncated, false);
    // What the caller got is untouched.
    assert.equal(big.result.stdout.length, 100_020);
  });

  test('a run that ends without an envelope is forgotten', () => {
    const h = new ExecHistory();
    start(h, 'gone');
    h.forget('gone');
    assert.deepEqual(h.list(), []);
  });
});
