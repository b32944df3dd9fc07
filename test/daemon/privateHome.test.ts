/**
 * An avfs home is its user's alone, seen from another local user (made with useradd here): what a
 * umask of 000 would leave open stays closed, a socket directory another user prepared is refused,
 * and a forged host record deletes nothing.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CLI, tempDir } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';

const root = process.getuid?.() === 0;

/** A local user of its own for the test, removed after it. */
function makeUser(): { name: string; uid: number; gid: number; remove: () => void } {
  const name = `avfsx${process.pid}${Math.floor(Math.random() * 1e4)}`;
  const r = spawnSync('useradd', ['-M', '-N', '-s', '/usr/sbin/nologin', name], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`useradd failed: ${r.stderr}`);
  const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout.trim());
  const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout.trim());
  return { name, uid, gid, remove: () => void spawnSync('userdel', [name]) };
}

/** The CLI under umask 000 (what would leave everything it makes open to everyone). */
function avfs(home: string, args: string[], env: Record<string, string> = {}) {
  return sh('sh', ['-c', 'umask 000; exec "$0" "$@"', process.execPath, CLI, ...args], { env: { ...process.env, AVFS_HOME: home, ...env } as Record<string, string>, timeoutMs: 60_000 });
}

function asUser(user: { uid: number; gid: number }, script: string) {
  return sh('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', 'sh', '-c', script]);
}

/** Every entry under `dir` (not below mountpoints), with its mode. */
function walk(dir: string, skip: Set<string>, out: Array<{ path: string; mode: number; kind: string }> = []) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    out.push({ path: p, mode: st.mode & 0o777, kind: st.isDirectory() ? 'dir' : st.isSocket() ? 'socket' : 'file' });
    if (st.isDirectory() && !skip.has(p)) walk(p, skip, out);
  }
  return out;
}

function startHostUnder(home: string, env: Record<string, string> = {}) {
  const child = spawn('sh', ['-c', 'umask 000; exec "$0" "$@"', process.execPath, CLI, 'host'], { env: { ...process.env, AVFS_HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  child.stdout.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, log: () => log, exited };
}

describe('a private avfs home', { skip: root ? undefined : 'needs root to make a second user' }, () => {
  const t = tempDir('avfs-private-');
  let other: ReturnType<typeof makeUser>;
  const home = join(t.dir, 'home');
  const mnt = join(t.dir, 'mnt');
  before(() => {
    // The test's own folder lets everyone in, as a home's parent (/home/alice) usually does.
    chmodSync(t.dir, 0o755);
    other = makeUser();
  });
  after(async () => {
    await sh('bash', ['-c', `for m in $(grep -o "${t.dir}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    other?.remove();
    t.cleanup();
  });

  test('under umask 000: folders 0700, files 0600 (vaults, current, mount records and logs, host.json, the socket); another user reads nothing', async () => {
    assert.equal((await avfs(home, ['vault', 'create', 'main'])).code, 0);
    assert.equal((await avfs(home, ['vault', 'use', 'main'])).code, 0);
    assert.equal((await avfs(home, ['write', '/secret.txt', 'the launch code is 0000'])).code, 0);
    mkdirSync(mnt);
    const m = await avfs(home, ['mount', 'main', mnt]);
    assert.equal(m.code, 0, m.stderr);
    const host = startHostUnder(home);
    try {
      assert.ok(await waitFor(() => host.log().includes(' serving '), 20_000), host.log());
      const x = await avfs(home, ['proxy', 'exec', '--', 'sh', '-c', 'echo ran > ran.txt']);
      assert.equal(x.code, 0, x.stderr);
      const entries = walk(home, new Set([mnt]));
      const kinds = new Set(entries.map((e) => e.kind));
      assert.ok(kinds.has('socket') && entries.some((e) => e.path.endsWith('.avfs')) && entries.some((e) => e.path.endsWith('.log')) && entries.some((e) => e.path.endsWith('host.json')), JSON.stringify(entries));
      const open = entries.filter((e) => e.mode !== (e.kind === 'dir' ? 0o700 : 0o600));
      assert.deepEqual(open, [], 'nothing in the home is open to others');
      assert.equal(lstatSync(home).mode & 0o777, 0o700);
      const r = await asUser(other, `cat ${home}/vaults/main.avfs > /dev/null 2>&1 && echo READ; cp ${home}/vaults/main.avfs /tmp/stolen-$$ >/dev/null 2>&1 && echo COPIED; ls ${home} >/dev/null 2>&1 && echo LISTED; echo done`);
      assert.equal(r.stdout.trim(), 'done', r.stdout);
    } finally {
      host.child.kill('SIGTERM');
      await host.exited;
      await avfs(home, ['unmount', mnt]);
    }
  });

  test('a socket directory for a long home that another user made (or that others may write) is refused; a fresh one is made private', async () => {
    const tmp = join(t.dir, 'tmp');
    mkdirSync(tmp, { mode: 0o1777 });
    chmodSync(tmp, 0o1777);
    const longHome = join(t.dir, 'h'.repeat(120));
    assert.equal((await avfs(longHome, ['vault', 'create', 'main'])).code, 0);
    const dir = join(tmp, `avfs-${process.getuid!()}`);
    // The other user gets there first, and leaves it open for anyone.
    const made = await asUser(other, `mkdir -m 0777 ${dir} && chmod 0777 ${dir} && echo made`);
    assert.equal(made.stdout.trim(), 'made', made.stderr);
    const h = startHostUnder(longHome, { TMPDIR: tmp });
    assert.equal(await h.exited, 14, h.log());
    assert.match(h.log(), /PermissionDenied|not private: it belongs to uid/);
    assert.equal(existsSync(join(longHome, 'host.json')), false, 'no record left behind');
    assert.deepEqual(readdirSync(dir), [], 'nothing was put in it');

    // Ours, but others may write it: refused too.
    await asUser(other, `rmdir ${dir}`);
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const h2 = startHostUnder(longHome, { TMPDIR: tmp });
    assert.equal(await h2.exited, 14, h2.log());
    assert.match(h2.log(), /others may write it \(mode 777\)/);

    // None there: made 0700, and the host listens in it.
    spawnSync('rmdir', [dir]);
    const h3 = startHostUnder(longHome, { TMPDIR: tmp });
    try {
      assert.ok(await waitFor(() => h3.log().includes(' serving '), 20_000), h3.log());
      const st = lstatSync(dir);
      assert.equal(st.mode & 0o777, 0o700);
      const sock = (JSON.parse(readFileSync(join(longHome, 'host.json'), 'utf8')) as { socket: string }).socket;
      assert.ok(sock.startsWith(dir + '/'));
      const ls = await avfs(longHome, ['--json', '--vault', 'main', 'ls', '/'], { TMPDIR: tmp });
      assert.equal(ls.code, 0, ls.stderr);
    } finally {
      h3.child.kill('SIGTERM');
      await h3.exited;
    }
  });

  test('a forged host.json naming any file deletes nothing but itself; a real stale socket of its own is cleared', async () => {
    const h = join(t.dir, 'forged');
    assert.equal((await avfs(h, ['vault', 'create', 'main'])).code, 0);
    const precious = join(t.dir, 'precious.txt');
    writeFileSync(precious, 'keep me');
    const dead = spawnSync('true').pid!;
    writeFileSync(join(h, 'host.json'), JSON.stringify({ pid: dead, socket: precious, started_at: new Date().toISOString(), version: '0.1.0' }));
    const ls = await avfs(h, ['--json', '--vault', 'main', 'ls', '/']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(readFileSync(precious, 'utf8'), 'keep me');
    assert.equal(existsSync(join(h, 'host.json')), false, 'the forged record is gone');

    // A host killed with -9 leaves its record and socket: the next call clears both.
    const host = startHostUnder(h);
    assert.ok(await waitFor(() => host.log().includes(' serving '), 20_000), host.log());
    const sock = (JSON.parse(readFileSync(join(h, 'host.json'), 'utf8')) as { socket: string }).socket;
    const kids = readFileSync(`/proc/${host.child.pid}/task/${host.child.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    host.child.kill('SIGKILL');
    await host.exited;
    for (const k of kids) spawnSync('kill', ['-9', String(k)]);
    assert.ok(lstatSync(sock).isSocket());
    assert.equal((await avfs(h, ['--json', '--vault', 'main', 'ls', '/'])).code, 0);
    assert.equal(existsSync(sock), false, 'its own stale socket is removed');
    assert.equal(existsSync(join(h, 'host.json')), false);
  });
});
