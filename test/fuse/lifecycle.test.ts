import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { canMoveMount } from '../../host/fuse/session';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { AvfsHome } from '../../host/store/home';
import { runJson, tempDir } from '../helpers';
import { bash, forceUnmount, fuseMissing, type MountFixture, mountFixture, pidAlive, sh, waitFor } from './helpers';

describe('mount lifecycle through the CLI', { skip: fuseMissing }, () => {
  const t = tempDir('avfs-fuse-life-');
  const home = join(t.dir, 'home');
  const mnt = join(t.dir, 'mnt');
  const cli = (args: string[]) => runJson(args, { home });
  before(() => {
    new AvfsHome(home).create('life').close();
    mkdirSync(mnt);
  });
  after(async () => {
    await forceUnmount(home, mnt);
    t.cleanup();
  });

  test('mount reports mounted only when ready; mounts lists it; unmount is idempotent', async () => {
    const m = await cli(['mount', 'life', mnt]);
    assert.equal(m.code, 0, JSON.stringify(m.json));
    assert.equal(m.json.state, 'mounted');
    assert.equal(m.json.mountpoint, mnt);
    assert.equal(m.json.readonly, false);
    const pid = m.json.pid as number;
    assert.ok(pidAlive(pid), 'a background server serves the mount');
    // Ready means usable right away: the root is the vault's root inode.
    assert.equal((await stat(mnt)).ino, 1);
    await writeFile(join(mnt, 'hello.txt'), 'hi\n');
    const list = await cli(['mounts']);
    const mounts = list.json.mounts as Array<{ mountpoint: string; live: boolean; pid: number; vault: string }>;
    assert.deepEqual(mounts.map((x) => [x.vault, x.mountpoint, x.live, x.pid]), [['life', mnt, true, pid]]);

    const u = await cli(['unmount', mnt]);
    assert.equal(u.code, 0);
    assert.equal(u.json.unmounted, true);
    assert.ok(await waitFor(() => !pidAlive(pid), 5000), 'the server exits after unmount');
    assert.equal((await cli(['mounts'])).json.mounts instanceof Array, true);
    assert.deepEqual((await cli(['mounts'])).json.mounts, []);
    const again = await cli(['unmount', mnt]);
    assert.equal(again.code, 0, 'unmounting what is not mounted is not an error');
    assert.equal(again.json.unmounted, false);
    // What was written through the mount is in the vault.
    const cat = await sh(process.execPath, [join(__dirname, '../../dist/avfs.js'), '--vault', 'life', 'cat', '/hello.txt'], { env: { AVFS_HOME: home } });
    assert.equal(cat.stdout, 'hi\n');
  });

  test('typed errors for a busy or invalid mountpoint', async () => {
    const m = await cli(['mount', 'life', mnt]);
    assert.equal(m.code, 0);
    try {
      const twice = await cli(['mount', 'life', mnt]);
      assert.equal(twice.json.error, 'Busy');
      assert.equal(twice.code, ERROR_TABLE.Busy.exit);
    } finally {
      await cli(['unmount', mnt]);
    }
    const missing = await cli(['mount', 'life', join(t.dir, 'nope')]);
    assert.equal(missing.json.error, 'MountError');
    assert.equal(missing.json.reason, 'missing');
    assert.equal(missing.code, ERROR_TABLE.MountError.exit);
    const file = join(t.dir, 'file');
    writeFileSync(file, 'x');
    assert.equal((await cli(['mount', 'life', file])).json.reason, 'not_a_directory');
    const full = join(t.dir, 'full');
    mkdirSync(full);
    writeFileSync(join(full, 'x'), 'x');
    assert.equal((await cli(['mount', 'life', full])).json.reason, 'not_empty');
    assert.equal((await cli(['mount', 'nosuchvault', mnt])).json.error, 'VaultNotFound');
  });

  test('a killed server leaves no stale mount: the next mount succeeds', async () => {
    const m = await cli(['mount', 'life', mnt]);
    assert.equal(m.code, 0);
    process.kill(m.json.pid as number, 'SIGKILL');
    assert.ok(await waitFor(() => !pidAlive(m.json.pid as number), 5000));
    // auto_unmount drops it, or `mounts` / the next `mount` clears the dead mount.
    const list = await cli(['mounts']);
    assert.deepEqual(list.json.mounts, []);
    const again = await cli(['mount', 'life', mnt]);
    assert.equal(again.code, 0, JSON.stringify(again.json));
    assert.equal(await readFile(join(mnt, 'hello.txt'), 'utf8'), 'hi\n');
    assert.equal((await cli(['unmount', mnt])).json.unmounted, true);
  });

  test('a stale mount without auto_unmount is cleaned by the next mount', async () => {
    // Simulate what a killed server without the watchdog leaves: a dead FUSE mount.
    const m = await cli(['mount', 'life', mnt]);
    assert.equal(m.code, 0);
    const watchdog = await sh('pgrep', ['-f', `fusermount.*${mnt}`]);
    for (const p of watchdog.stdout.split('\n').filter(Boolean)) process.kill(Number(p), 'SIGKILL');
    process.kill(m.json.pid as number, 'SIGKILL');
    await waitFor(() => !pidAlive(m.json.pid as number), 5000);
    const again = await cli(['mount', 'life', mnt]);
    assert.equal(again.code, 0, JSON.stringify(again.json));
    assert.equal(await readFile(join(mnt, 'hello.txt'), 'utf8'), 'hi\n');
    await cli(['unmount', mnt]);
  });
});

describe('rules of the path API hold in the mount', { skip: fuseMissing }, () => {
  test('read-only mount: reads work, writes fail with EROFS', async () => {
    const f = await mountFixture({ vault: 'ro' });
    await writeFile(join(f.mnt, 'a.txt'), 'A');
    await f.cli(['unmount', f.mnt]);
    const r = await f.cli(['mount', 'ro', f.mnt, '--readonly']);
    try {
      assert.equal(r.json.readonly, true);
      assert.equal(await readFile(join(f.mnt, 'a.txt'), 'utf8'), 'A');
      for (const op of [() => writeFile(join(f.mnt, 'a.txt'), 'B'), () => writeFile(join(f.mnt, 'new.txt'), 'B')]) {
        await assert.rejects(op, (e: NodeJS.ErrnoException) => e.code === 'EROFS');
      }
      const mk = await sh('mkdir', [join(f.mnt, 'd')]);
      assert.match(mk.stderr, /Read-only file system/);
    } finally {
      await f.cleanup();
    }
  });

  test('quotas answer EDQUOT: max_size_mb and max_files', async () => {
    const f = await mountFixture({ vault: 'q', quotas: { max_size_mb: 1, max_files: 5 } });
    try {
      const dd = await sh('dd', ['if=/dev/zero', `of=${join(f.mnt, 'big')}`, 'bs=64k', 'count=32']);
      assert.notEqual(dd.code, 0);
      assert.match(dd.stderr, /Disk quota exceeded/);
      const size = (await stat(join(f.mnt, 'big'))).size;
      assert.ok(size <= 1024 * 1024, `nothing past the quota was stored (${size})`);
      await bash('rm big; for i in 1 2 3 4 5; do touch f$i; done', f.mnt);
      const six = await sh('touch', [join(f.mnt, 'f6')]);
      assert.match(six.stderr, /Disk quota exceeded/);
      const df = await bash('df -B1 --output=size,used . | tail -1', f.mnt);
      assert.equal(df.trim().split(/\s+/)[0], String(1024 * 1024), 'df reports the size quota');
    } finally {
      await f.cleanup();
    }
  });

  test('writes through the mount land in the journal (one write entry per flushed handle)', async () => {
    const f = await mountFixture({ vault: 'j' });
    try {
      await bash('mkdir d && for i in 1 2 3; do printf x%.0s $(seq 100) >> d/log; done && mv d/log d/log2 && rm d/log2 && rmdir d', f.mnt);
      await f.cli(['unmount', f.mnt]);
      const v = new AvfsHome(f.home).open('j');
      const rows = v.journal.after(0).filter((r) => r.op !== 'vault_create').map(({ op, path, path2, size, surface }) => ({ op, path, path2, size, surface }));
      v.close();
      assert.deepEqual(
        rows.map((r) => [r.op, r.path, r.size, r.surface]),
        [
          ['mkdir', '/d', null, 'fuse'],
          ['create', '/d/log', 0, 'fuse'],
          ['write', '/d/log', 100, 'fuse'],
          ['write', '/d/log', 200, 'fuse'],
          ['write', '/d/log', 300, 'fuse'],
          ['rename', '/d/log', null, 'fuse'],
          ['unlink', '/d/log2', null, 'fuse'],
          ['rmdir', '/d', null, 'fuse'],
        ],
      );
    } finally {
      await f.cleanup();
    }
  });
});

describe('the CLI and a live mount see each other', { skip: fuseMissing }, () => {
  let f: MountFixture;
  before(async () => {
    f = await mountFixture({ vault: 'vis' });
  });
  after(async () => f.cleanup());

  test('a file written through the mount is visible to the CLI once closed', async () => {
    await writeFile(join(f.mnt, 'from-mount.txt'), 'mounted\n');
    const r = await f.cli(['--vault', f.vault, 'stat', '/from-mount.txt']);
    assert.equal(r.json.size, 8);
  });

  // How long it takes is measured side by side in `npm run bench -- fuse` (a wall-clock bound
  // here would only measure the machine's load).
  test('a CLI write to a file the mount has cached shows in the mount', async () => {
    const p = join(f.mnt, 'from-cli.txt');
    for (let i = 0; i < 3; i++) {
      // Read it first so the kernel holds cached attributes and pages.
      await readFile(p).catch(() => undefined);
      const content = `version ${i} ${'x'.repeat(i * 10)}\n`;
      const w = await f.cli(['--vault', f.vault, 'write', '/from-cli.txt', content]);
      assert.equal(w.code, 0);
      const ok = await waitFor(async () => (await readFile(p, 'utf8').catch(() => '')) === content, 15_000, 10);
      assert.ok(ok, `CLI write ${i} became visible through the mount`);
    }
  });
});

describe('state machines', () => {
  test('mount lifecycle transitions', () => {
    assert.ok(canMoveMount('unmounted', 'mounting'));
    assert.ok(canMoveMount('mounting', 'mounted'));
    assert.ok(canMoveMount('mounting', 'unmounted'));
    assert.ok(canMoveMount('mounted', 'unmounting'));
    assert.ok(canMoveMount('unmounting', 'unmounted'));
    assert.ok(!canMoveMount('unmounted', 'mounted'));
    assert.ok(!canMoveMount('mounted', 'unmounted'));
    assert.ok(!canMoveMount('unmounting', 'mounted'));
  });
});
