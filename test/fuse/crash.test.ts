/** The mount under stress: SIGKILL during heavy writes, and a 1 GiB write in bounded memory. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { open, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { AvfsHome } from '../../host/store/home';
import { Vfs } from '../../host/vfs/vfs';
import { fuseMissing, mountFixture, pidAlive, sh, waitFor } from './helpers';

/** Writes versions of 24 files forever: A-files by write-to-temp + rename, B-files by one in-place pwrite of the whole (same-size) content. */
const WRITER = `
import os, sys
r = 0
while True:
    r += 1
    for i in range(12):
        body = (f'v{r} file a{i} ' * (2000 + 997 * ((r + i) % 200))).encode()
        with open(f'tmp-a{i}', 'wb') as fh:
            fh.write(body)
        os.replace(f'tmp-a{i}', f'a{i}')
        fixed = (f'v{r:08d} file b{i} '.encode() * 10000)[:100000]
        fd = os.open(f'b{i}', os.O_RDWR | os.O_CREAT, 0o644)
        os.pwrite(fd, fixed, 0)
        os.close(fd)
    sys.stdout.write(f'{r}\\n'); sys.stdout.flush()
`;

/** The versions a file's content is made of: exactly one for a consistent file. */
function versionsOf(name: string, data: Buffer): Set<string> {
  const text = data.toString('latin1');
  const re = new RegExp(`v(\\d+) file ${name} `, 'g');
  const seen = new Set<string>();
  for (const m of text.matchAll(re)) seen.add(String(Number(m[1])));
  return seen;
}

function checkFile(name: string, data: Buffer): void {
  const v = versionsOf(name, data);
  assert.equal(v.size, 1, `${name} holds exactly one version, got ${[...v].join(',')} (${data.length} bytes)`);
  const r = Number([...v][0]);
  if (name.startsWith('a')) {
    const i = Number(name.slice(1));
    const expected = Buffer.byteLength(`v${r} file ${name} `) * (2000 + 997 * ((r + i) % 200));
    assert.equal(data.length, expected, `${name} v${r} is whole`);
  } else {
    assert.equal(data.length, 100000);
  }
}

describe('crash safety', { skip: fuseMissing }, () => {
  test('SIGKILL of the mount server during heavy writes: integrity ok, every file an old or new version, next mount works', async () => {
    const f = await mountFixture({ vault: 'crash' });
    try {
      const writer = sh('python3', ['-c', WRITER], { cwd: f.mnt, timeoutMs: 60_000 });
      // Let several rounds commit, then kill the server mid-write.
      await new Promise((r) => setTimeout(r, 2500));
      process.kill(f.pid, 'SIGKILL');
      const w = await writer;
      const rounds = w.stdout.trim().split('\n').filter(Boolean).length;
      assert.ok(rounds >= 1, `the writer completed rounds before the kill (${rounds}); stderr: ${w.stderr.slice(-300)}`);
      assert.notEqual(w.code, 0, 'the writer saw the mount go away');
      await waitFor(() => !pidAlive(f.pid), 5000);

      const file = new AvfsHome(f.home).vaultFile('crash');
      const raw = new Database(file);
      assert.equal(raw.pragma('integrity_check', { simple: true }), 'ok');
      raw.close();
      const vault = new AvfsHome(f.home).open('crash');
      const vfs = new Vfs(vault);
      const names = vfs.readdir('/').map((e) => e.name).filter((n) => !n.startsWith('tmp-'));
      assert.ok(names.length >= 12, `files exist: ${names.join(' ')}`);
      for (const n of names) checkFile(n, vfs.readFile('/' + n));
      vault.close();

      const again = await f.cli(['mount', 'crash', f.mnt]);
      assert.equal(again.code, 0, `the next mount succeeds: ${JSON.stringify(again.json)}`);
      for (const n of names) checkFile(n, await readFile(join(f.mnt, n)));
      console.log(`# killed after ${rounds} rounds; ${names.length} files consistent`);
    } finally {
      await f.cleanup();
    }
  });

  test('writing a 1 GiB file keeps the server memory bounded', async () => {
    const f = await mountFixture({ vault: 'big' });
    try {
      const hwm = () => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${f.pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
      const before = hwm();
      // Distinct content for every 64 KiB chunk, so nothing deduplicates away.
      await sh('python3', ['-c', `
import os
block = bytearray(os.urandom(1 << 20))
with open('big', 'wb') as fh:
    for i in range(1024):
        for off in range(0, 1 << 20, 65536):
            block[off:off + 8] = (i * 16 + off // 65536).to_bytes(8, 'little')
        fh.write(block)
`], { cwd: f.mnt, timeoutMs: 180_000 });
      const after = hwm();
      assert.equal((await stat(join(f.mnt, 'big'))).size, 1024 ** 3);
      const fh = await open(join(f.mnt, 'big'));
      const probe = Buffer.alloc(8);
      await fh.read(probe, 0, 8, 700 * (1 << 20) + 3 * 65536);
      await fh.close();
      assert.equal(probe.readBigUInt64LE(), BigInt(700 * 16 + 3));
      console.log(`# 1 GiB written; server peak RSS ${before.toFixed(0)} MiB before, ${after.toFixed(0)} MiB after`);
      assert.ok(after < 300, `peak RSS ${after.toFixed(0)} MiB stays bounded`);
    } finally {
      await f.cleanup();
    }
  });
});
