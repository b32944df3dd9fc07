import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { canTransition, HANDLE_BUFFER_MAX, HandleState, OpenFiles } from '../../host/fuse/openFiles';

/** A fake store is fine here: this is the handle state machine alone; the store is tested for real elsewhere. */
function recorder() {
  const file = new Map<number, Buffer>();
  const calls: Array<{ ino: number; offset: number; length: number }> = [];
  const persist = (ino: number, offset: number, data: Buffer) => {
    calls.push({ ino, offset, length: data.length });
    const old = file.get(ino) ?? Buffer.alloc(0);
    const next = Buffer.alloc(Math.max(old.length, offset + data.length));
    old.copy(next);
    data.copy(next, offset);
    file.set(ino, next);
  };
  return { file, calls, persist };
}

describe('open-file state machine', () => {
  test('legal transitions only', () => {
    assert.ok(canTransition(HandleState.Open, HandleState.Dirty));
    assert.ok(canTransition(HandleState.Dirty, HandleState.Persisting));
    assert.ok(canTransition(HandleState.Persisting, HandleState.Flushed));
    assert.ok(canTransition(HandleState.Persisting, HandleState.Dirty));
    assert.ok(canTransition(HandleState.Flushed, HandleState.Closed));
    assert.ok(!canTransition(HandleState.Dirty, HandleState.Closed), 'a dirty handle is persisted before it closes');
    assert.ok(!canTransition(HandleState.Open, HandleState.Persisting));
    assert.ok(!canTransition(HandleState.Closed, HandleState.Open));
  });

  test('Open → Dirty → Persisting → Flushed → Closed; contiguous writes persist once', () => {
    const r = recorder();
    const files = new OpenFiles(r.persist);
    const of = files.open(7, '/f', true);
    assert.equal(of.state, HandleState.Open);
    files.write(of, 0, Buffer.from('hello '), false);
    files.write(of, 6, Buffer.from('world'), false);
    assert.equal(of.state, HandleState.Dirty);
    assert.equal(r.calls.length, 0, 'buffered, not yet stored');
    files.persist(of);
    assert.equal(of.state, HandleState.Flushed);
    files.persist(of);
    assert.equal(r.calls.length, 1, 'no double persist');
    assert.equal(r.file.get(7)?.toString(), 'hello world');
    assert.equal(files.close(of), true);
    assert.equal(of.state, HandleState.Closed);
  });

  test('the caller may reuse its buffer after write returns (data is copied)', () => {
    const r = recorder();
    const files = new OpenFiles(r.persist);
    const of = files.open(1, '/f', true);
    const buf = Buffer.from('abc');
    files.write(of, 0, buf, false);
    buf.fill(0);
    files.persist(of);
    assert.equal(r.file.get(1)?.toString(), 'abc');
  });

  test('a write that arrives while a persist is running is neither lost nor persisted twice', () => {
    let injected = false;
    const r = recorder();
    const files: OpenFiles = new OpenFiles((ino, offset, data, path) => {
      // Simulate a write racing the persist (e.g. from a re-entrant callback).
      if (!injected) {
        injected = true;
        const of = files.get(1);
        assert.equal(of.state, HandleState.Persisting);
        files.write(of, offset + data.length, Buffer.from('B'), false);
      }
      r.persist(ino, offset, data);
      void path;
    });
    const of = files.open(9, '/f', true);
    assert.equal(of.fh, 1);
    files.write(of, 0, Buffer.from('A'), false);
    files.persist(of);
    assert.equal(of.state, HandleState.Dirty, 'the racing write is pending');
    files.persist(of);
    assert.equal(r.file.get(9)?.toString(), 'AB');
    assert.deepEqual(r.calls.map((c) => [c.offset, c.length]), [[0, 1], [1, 1]]);
  });

  test('memory stays bounded: a long sequential write is persisted in runs of at most 1 MiB', () => {
    const r = recorder();
    const files = new OpenFiles((ino, offset, data) => r.calls.push({ ino, offset, length: data.length }));
    const of = files.open(3, '/big', true);
    const piece = Buffer.alloc(128 * 1024);
    for (let off = 0; off < 64 * 1024 * 1024; off += piece.length) {
      files.write(of, off, piece, false);
      assert.ok(files.bufferedBytes <= HANDLE_BUFFER_MAX);
    }
    files.close(of);
    assert.equal(r.calls.length, 64);
    assert.ok(r.calls.every((c, i) => c.offset === i * HANDLE_BUFFER_MAX && c.length === HANDLE_BUFFER_MAX));
  });

  test('a non-contiguous write persists the pending run first; write-through persists at once', () => {
    const r = recorder();
    const files = new OpenFiles(r.persist);
    const of = files.open(4, '/f', true);
    files.write(of, 0, Buffer.from('aaaa'), false);
    files.write(of, 10, Buffer.from('bb'), false);
    assert.equal(r.calls.length, 1);
    files.write(of, 12, Buffer.from('cc'), true);
    assert.equal(r.calls.length, 2);
    assert.equal(of.state, HandleState.Flushed);
    assert.equal(r.file.get(4)?.subarray(10).toString(), 'bbcc');
  });
});
