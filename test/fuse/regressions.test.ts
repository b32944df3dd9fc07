/**
 * Regressions of the FUSE operation table, driven in-process through createVaultOps (no mount):
 * the kernel's calls are made directly, so each case is fast and deterministic.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { after, before, describe, test } from 'node:test';
import type { FuseCaller, FuseOps } from '../../host/fuse/binding';
import { createVaultOps, type VaultOps } from '../../host/fuse/ops';
import { FileIo } from '../../host/vfs/handles';
import { tempVault } from '../helpers';

const O_RDWR = 2;
/** The kernel's calls come from this process's user. */
const CALLER: FuseCaller = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, pid: process.pid };

/** The ops of a fresh vault, with synchronous wrappers around the callback API. */
function fixture() {
  const t = tempVault();
  const io = new FileIo(t.vfs);
  const errors: string[] = [];
  const vops: VaultOps = createVaultOps(io, { error: (op, path, e) => errors.push(`${op} ${path}: ${e.message}`) });
  const ops = vops.ops as Required<FuseOps>;
  const sync = <T>(fn: (cb: (err: number, v?: T) => void) => void): { err: number; value: T | undefined } => {
    let out: { err: number; value: T | undefined } | undefined;
    fn((err, value) => (out = { err, value }));
    assert.ok(out, 'the op called back synchronously');
    return out;
  };
  const fd = (r: { err: number; value: number | undefined }): number => {
    assert.equal(r.err, 0);
    return r.value!;
  };
  return {
    t,
    io,
    vops,
    errors,
    create: (path: string) => fd(sync<number>((cb) => ops.create(path, 0o644, cb, CALLER))),
    open: (path: string) => fd(sync<number>((cb) => ops.open(path, O_RDWR, cb, CALLER))),
    write: (path: string, h: number, data: string, pos: number): number => {
      const buf = Buffer.from(data);
      return sync<never>((cb) => ops.write(path, h, buf, buf.length, pos, (n) => cb(n), CALLER)).err;
    },
    release: (path: string, h: number): number => sync<never>((cb) => ops.release(path, h, cb, CALLER)).err,
    utimens: (path: string, atime: bigint, mtime: bigint): number => sync<never>((cb) => ops.utimens(path, atime, mtime, cb, CALLER)).err,
    fsync: (path: string, h: number): number => sync<never>((cb) => ops.fsync(path, 0, h, cb, CALLER)).err,
    close: () => {
      vops.flushAll();
      t.cleanup();
    },
  };
}

describe('FUSE ops regressions', () => {
  let f: ReturnType<typeof fixture>;
  before(() => (f = fixture()));
  after(() => f.close());

  test('two handles on one inode: writes reach the store in call order', () => {
    const a0 = f.create('/f');
    assert.equal(f.release('/f', a0), 0);
    const a = f.open('/f');
    const b = f.open('/f');
    assert.equal(f.write('/f', a, 'AAAA', 0), 4);
    assert.equal(f.write('/f', b, 'BBBB', 0), 4);
    assert.equal(f.release('/f', b), 0);
    assert.equal(f.release('/f', a), 0);
    assert.equal(f.t.vfs.readFile('/f').toString(), 'BBBB', 'the later write wins (POSIX)');

    // The same with the releases the other way round, and an interleaved later write on A.
    const c = f.open('/f');
    const d = f.open('/f');
    assert.equal(f.write('/f', c, 'cc', 0), 2);
    assert.equal(f.write('/f', d, 'dddd', 0), 4);
    assert.equal(f.write('/f', c, 'C', 3), 1);
    assert.equal(f.release('/f', c), 0);
    assert.equal(f.release('/f', d), 0);
    assert.equal(f.t.vfs.readFile('/f').toString(), 'dddC');
  });

  test('a nested batch never commits mid-operation: 600 × (create, write 1 byte, release) all succeed', () => {
    f.t.vfs.mkdir('/many');
    for (let i = 0; i < 600; i++) {
      const path = `/many/f${i}`;
      const h = f.create(path);
      assert.equal(f.write(path, h, String(i % 10), 0), 1, `write ${i}`);
      assert.equal(f.release(path, h), 0, `release ${i}`);
    }
    f.io.commit();
    for (let i = 0; i < 600; i++) assert.equal(f.t.vfs.readFile(`/many/f${i}`).toString(), String(i % 10), `file ${i}`);
    assert.deepEqual(f.errors, []);
  });

  test('times set while writes are buffered in the handle survive its release (cp -p, rsync -t)', () => {
    const h = f.create('/copied');
    assert.equal(f.write('/copied', h, 'x'.repeat(5000), 0), 5000);
    assert.equal(f.utimens('/copied', 1528358950111222333n, 1546398245987654321n), 0);
    assert.equal(f.release('/copied', h), 0);
    const st = f.t.vfs.stat('/copied');
    assert.equal(st.size, 5000);
    assert.equal(st.mtime_ns, '1546398245987654321');
    assert.equal(st.atime, '2018-06-07T08:09:10.111Z');
  });

  test('fsync commits and syncs the vault WAL file', () => {
    const wal = `${f.t.vault.file}-wal`;
    const synced: fs.Stats[] = [];
    const real = fs.fsyncSync;
    fs.fsyncSync = (fd: number) => {
      synced.push(fs.fstatSync(fd));
      real(fd);
    };
    syncBuiltinESMExports();
    try {
      const h = f.create('/durable');
      assert.equal(f.write('/durable', h, 'keep me', 0), 7);
      assert.equal(f.fsync('/durable', h), 0);
      assert.equal(f.t.vault.store.inTransaction, false, 'the group is committed');
      const walIno = fs.statSync(wal).ino;
      assert.ok(synced.some((s) => s.ino === walIno), 'the -wal file was fsynced');
      assert.equal(f.release('/durable', h), 0);
    } finally {
      fs.fsyncSync = real;
      syncBuiltinESMExports();
    }
    assert.equal(f.t.vfs.readFile('/durable').toString(), 'keep me');
  });
});
