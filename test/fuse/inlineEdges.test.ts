/**
 * Small files kept inline in their extent rows (SQLite schema 6), through a real mount: writes at
 * offsets that cross INLINE_MAX (4 KiB) and truncates up and down move a piece between its extent
 * row and the chunk table; a hard link shares it. The same calls on a plain file give the bytes to
 * expect, through the mount, and after an unmount, a checkpoint, a change and a restore by the CLI.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCli } from '../helpers';
import { bash, fuseMissing, mountFixture } from './helpers';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

// One script run in the mount and in a plain directory: the same calls on both.
const SCRIPT = `
import os, sys
d = sys.argv[1]
p = os.path.join(d, 'f.bin')
with open(p, 'wb') as f: f.write(b'x' * 100)
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b'crossing-4k', 4090)         # a hole, then bytes across 4096
os.pwrite(fd, b'head', 2)                    # inside the old piece
os.ftruncate(fd, 4096)                       # back to exactly INLINE_MAX
os.pwrite(fd, b'!', 4095)
os.ftruncate(fd, 10)                         # down
os.ftruncate(fd, 5000)                       # up: zeros past 10
os.pwrite(fd, b'end', 4997)
os.close(fd)
os.link(p, os.path.join(d, 'link.bin'))
with open(os.path.join(d, 'link.bin'), 'r+b') as f: f.seek(3); f.write(b'via-link')
with open(os.path.join(d, 'small.txt'), 'wb') as f: f.write(b'a' * 4000)
with open(os.path.join(d, 'small.txt'), 'ab') as f: f.write(b'b' * 200)   # grows past 4 KiB by appending
with open(os.path.join(d, 'small.txt'), 'r+b') as f: f.truncate(3000)
`;

test('writes crossing 4 KiB, truncates and a hard link on a mount give a plain file\'s bytes, before and after a checkpoint restore', { skip: fuseMissing }, async (t) => {
  const m = await mountFixture({ vault: 'edges' });
  t.after(m.cleanup);
  const plain = join(m.dir, 'plain');
  mkdirSync(plain);
  for (const dir of [plain, m.mnt]) await bash(`python3 - ${JSON.stringify(dir)} <<'PY'\n${SCRIPT}\nPY`, m.dir);
  const expect: Record<string, string> = {};
  for (const n of ['f.bin', 'link.bin', 'small.txt']) expect[n] = sha(await readFile(join(plain, n)));
  for (const n of Object.keys(expect)) assert.equal(sha(await readFile(join(m.mnt, n))), expect[n], `${n} through the mount`);
  const st = await bash(`stat -c '%s %h %i' ${JSON.stringify(join(m.mnt, 'f.bin'))} ${JSON.stringify(join(m.mnt, 'link.bin'))}`, m.dir);
  const [a, b] = st.trim().split('\n');
  assert.equal(a, b, 'one inode, two names');
  assert.match(a!, /^5000 2 /);

  const cli = (args: string[]) => runCli(['--vault', 'edges', ...args], { home: m.home });
  assert.equal((await m.cli(['unmount', m.mnt])).code, 0);
  assert.equal((await cli(['checkpoint', 'save', 'edges'])).code, 0);
  assert.equal((await cli(['write', '/f.bin', 'replaced'])).code, 0);
  assert.equal((await cli(['checkpoint', 'restore', 'edges'])).code, 0);
  for (const n of Object.keys(expect)) {
    const r = await cli(['cat', `/${n}`]);
    assert.equal(sha(r.stdoutBytes), expect[n], `${n} after the restore, through the CLI`);
  }
  assert.equal((await m.cli(['mount', 'edges', m.mnt])).code, 0);
  for (const n of Object.keys(expect)) assert.equal(sha(await readFile(join(m.mnt, n))), expect[n], `${n} through the mount again`);
});
