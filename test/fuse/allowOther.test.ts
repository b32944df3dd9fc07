/**
 * `avfs mount --allow-other`: another user than the mounter can use the mount, and the kernel
 * checks each access against owner and mode bits (default_permissions), as on a local disk.
 * The other user is `nobody`, run through setpriv (util-linux).
 */
import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fuseMissing, type MountFixture, mountFixture, sh } from './helpers';

const NOBODY = 65534;
const asNobody = (script: string, cwd: string) =>
  sh('setpriv', [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', '--', 'sh', '-c', script], { cwd });

describe('a mount used by another user', { skip: fuseMissing ?? (process.getuid?.() !== 0 ? 'needs root to run a command as nobody' : undefined) }, () => {
  let open: MountFixture;
  let closed: MountFixture;
  before(async () => {
    open = await mountFixture({ vault: 'shared', extraArgs: ['--allow-other'] });
    closed = await mountFixture({ vault: 'private' });
    // mkdtemp made the fixture directories 0700: let nobody reach the mountpoints.
    for (const f of [open, closed]) chmodSync(f.dir, 0o755);
    for (const f of [open, closed]) {
      await writeFile(join(f.mnt, 'public.txt'), 'for everyone\n', { mode: 0o644 });
      await writeFile(join(f.mnt, 'secret.txt'), 'root only\n', { mode: 0o600 });
      await mkdir(join(f.mnt, 'drop'), { mode: 0o777 });
      await chmod(join(f.mnt, 'drop'), 0o777);
    }
  });
  after(async () => {
    await open?.cleanup();
    await closed?.cleanup();
  });

  test('with --allow-other: reads and writes where the modes allow, EACCES where they do not', async () => {
    const r = await asNobody(
      `id -u; ls; cat public.txt
       cat secret.txt 2>&1 || true
       (echo x > new-at-root.txt) 2>&1 || true
       echo mine > drop/mine.txt && cat drop/mine.txt`,
      open.mnt,
    );
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines[0], String(NOBODY));
    assert.deepEqual(lines.slice(1, 4), ['drop', 'public.txt', 'secret.txt']);
    assert.equal(lines[4], 'for everyone');
    assert.match(lines[5] ?? '', /secret\.txt: Permission denied/);
    assert.match(lines[6] ?? '', /new-at-root\.txt: Permission denied/);
    assert.equal(lines[7], 'mine');
    const listed = await open.cli(['--vault', 'shared', 'ls', '/drop']);
    assert.deepEqual((listed.json.entries as Array<{ name: string }>).map((e) => e.name), ['mine.txt']);
  });

  test('what another user creates belongs to that user, as in a plain directory', async () => {
    const plain = join(open.dir, 'plain-drop');
    await mkdir(plain);
    await chmod(plain, 0o777);
    const script = `mkdir owned && cd owned && echo mine > f && mkdir d && mkfifo p && ln -s f l && touch d/inner
      stat -c '%n %u:%g %A' f d p d/inner && stat -c '%n %u:%g' l
      echo more >> f && cat f && chmod 600 f && stat -c '%n %a' f`;
    const inMount = await asNobody(script, join(open.mnt, 'drop'));
    const inPlain = await asNobody(script, plain);
    assert.equal(inPlain.code, 0, inPlain.stderr);
    assert.equal(inMount.code, 0, inMount.stderr);
    assert.equal(inMount.stdout, inPlain.stdout);
    const lines = inMount.stdout.trim().split('\n');
    assert.deepEqual(lines.slice(0, 5), [
      `f ${NOBODY}:${NOBODY} -rw-r--r--`,
      `d ${NOBODY}:${NOBODY} drwxr-xr-x`,
      `p ${NOBODY}:${NOBODY} prw-r--r--`,
      `d/inner ${NOBODY}:${NOBODY} -rw-r--r--`,
      `l ${NOBODY}:${NOBODY}`,
    ]);
    assert.deepEqual(lines.slice(5), ['mine', 'more', 'f 600'], 'the owner can write and chmod what it made');
    const listed = await open.cli(['--vault', 'shared', 'stat', '/drop/owned/f', '--json']);
    assert.equal(listed.json.uid, NOBODY, 'the vault records the owner');
  });

  test('without it, another user cannot enter the mount at all', async () => {
    const r = await asNobody('ls . 2>&1; cat public.txt 2>&1', closed.mnt);
    assert.match(r.stdout, /Permission denied/);
    assert.doesNotMatch(r.stdout, /for everyone/);
  });
});
