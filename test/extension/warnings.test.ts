import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PruneResult } from '../../host/protocol/methods/checkpoint';
import { pruneConfirmation } from '../../extension/warnings';

const cp = (name: string, alone: number | null) => ({
  name,
  created_at: '2026-01-10T10:00:00Z',
  description: null,
  auto: true,
  file_count: 3,
  total_size: 10,
  total_size_human: '10 B',
  alone_size: alone,
  alone_size_human: alone === null ? null : `${alone} B`,
});

function plan(over: Partial<PruneResult>): PruneResult {
  return {
    dry_run: true,
    retention: { keep_last: 2, max_age_ms: null, max_age: null, off: false, hold_recent_ms: 600_000, hold_recent: '10m', description: 'keeps the last 2; a run holds its restore point until 10m after it ended' },
    pruned: [],
    held: [],
    kept: 2,
    freed_size: 0,
    freed_size_human: '0 B',
    gc: { chunks_total: 5, orphans_found: 0, orphans_deleted: 0, bytes_freed: 0, dry_run: true },
    ...over,
  };
}

test('the prune modal names what goes, what is held and why, and the bytes that come back', () => {
  const many = Array.from({ length: 10 }, (_, i) => cp(`exec-${i}`, i === 0 ? 2048 : 0));
  const ask = pruneConfirmation('work', plan({ pruned: many, held: [{ name: 'exec-x', reason: 'the run r1 that took it has not ended' }], freed_size: 2048, gc: { chunks_total: 5, orphans_found: 1, orphans_deleted: 0, bytes_freed: 1024, dry_run: true } }));
  assert.ok(ask);
  assert.equal(ask.message, 'Prune 10 automatic checkpoints of vault "work" and reclaim 3 KiB?');
  const lines = ask.detail.split('\n');
  assert.equal(lines[0], 'Retention: keeps the last 2; a run holds its restore point until 10m after it ended.');
  assert.ok(lines.includes('  exec-0 (2 KiB alone)'));
  assert.ok(lines.includes('  exec-1'));
  assert.ok(lines.includes('  … and 2 more'), 'at most 8 listed');
  assert.ok(lines.includes('1 checkpoint past it is kept for now: the run r1 that took it has not ended'));
  assert.ok(lines.includes('3 KiB come back to the disk (2 KiB the deleted checkpoints held alone, 1 KiB nothing references already).'));
});

test('nothing to prune and nothing to reclaim asks nothing; orphans alone are still offered', () => {
  assert.equal(pruneConfirmation('work', plan({})), undefined);
  const ask = pruneConfirmation('work', plan({ gc: { chunks_total: 5, orphans_found: 1, orphans_deleted: 0, bytes_freed: 4096, dry_run: true } }));
  assert.equal(ask?.message, 'Reclaim 4 KiB of vault "work"?');
});
