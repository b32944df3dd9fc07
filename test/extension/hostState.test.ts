import assert from 'node:assert/strict';
import { test } from 'node:test';
import { afterCrash, attemptsUsed, describeState, IllegalTransitionError, RESTART_DELAYS_MS, STABLE_AFTER_MS, transition, type HostState } from '../../extension/client/hostState';

const ready = (since: number, attempt = 0): Extract<HostState, { name: 'ready' }> => ({ name: 'ready', via: 'spawned', pid: 1, version: '0.1.0', home: '/h', since, attempt });

test('after a crash the host is restarted 1, 2 and 4 s later, then the client gives up', () => {
  const delays: number[] = [];
  let attempt = 0;
  for (;;) {
    const next = afterCrash(attempt, 'killed by SIGKILL');
    if (next.name !== 'restarting') {
      assert.equal(next.name, 'failed');
      assert.match(describeState(next), /killed by SIGKILL; it exited 4 times in a row/);
      break;
    }
    delays.push(next.delayMs);
    attempt = next.attempt;
  }
  assert.deepEqual(delays, [...RESTART_DELAYS_MS]);
  assert.deepEqual(delays, [1000, 2000, 4000]);
});

test('a host that stayed up long enough starts its restarts over', () => {
  assert.equal(attemptsUsed(ready(0, 2), STABLE_AFTER_MS - 1), 2);
  assert.equal(attemptsUsed(ready(0, 2), STABLE_AFTER_MS), 0);
});

test('only legal transitions are allowed; stopped is final', () => {
  const idle: HostState = { name: 'idle' };
  const starting: HostState = { name: 'starting', attempt: 0 };
  assert.equal(transition(idle, starting), starting);
  assert.equal(transition(starting, ready(1)).name, 'ready');
  assert.equal(transition(ready(1), { name: 'restarting', attempt: 1, delayMs: 1000, reason: 'x' }).name, 'restarting');
  assert.equal(transition({ name: 'failed', reason: 'x' }, starting), starting);
  assert.equal(transition(ready(1, 3), afterCrash(3, 'killed')).name, 'failed');
  assert.throws(() => transition(idle, ready(1)), IllegalTransitionError);
  assert.throws(() => transition({ name: 'restarting', attempt: 1, delayMs: 1000, reason: 'x' }, ready(1)), IllegalTransitionError);
  for (const to of [idle, starting, ready(1), { name: 'failed', reason: 'x' } as HostState]) {
    assert.throws(() => transition({ name: 'stopped' }, to), IllegalTransitionError);
  }
});

test('each state reads as a sentence for the status bar', () => {
  assert.match(describeState(ready(1)), /^Vault host 0\.1\.0 \(pid 1\), home \/h$/);
  assert.match(describeState({ ...ready(1), via: 'socket' }), /already running: connected to its socket/);
  assert.match(describeState({ name: 'restarting', attempt: 2, delayMs: 2000, reason: 'exit code 1' }), /exited \(exit code 1\); restarting in 2 s \(2 of 3\)/);
  assert.match(describeState({ name: 'failed', reason: 'R.', fix: 'F.' }), /not running: R\. F\.$/);
});
