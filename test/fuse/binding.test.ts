/**
 * avfs's FUSE binding on its own (host/fuse/binding.ts over host/fuse/native/), serving a tiny
 * file system in a child process (test/fuse/bindingServer.ts): a handler may answer later;
 * unmount does not wait for an answer that never comes; a process that has unmounted ends by
 * itself; a process that exits while mounted does not hang on the FUSE thread, and the kernel
 * drops its mount.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { mountFuse } from '../../host/fuse/binding';
import { mountEntry } from '../../host/fuse/registry';
import { tempDir } from '../helpers';
import { fuseMissing, sh, waitFor } from './helpers';

const ROOT = join(__dirname, '..', '..');

interface Server {
  mnt: string;
  output: () => string;
  /** The exit code (or signal) once the process has ended. */
  exit: () => number | string | undefined;
  signal: (sig: NodeJS.Signals) => void;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function serve(): Promise<Server> {
  const t = tempDir('avfs-binding-');
  const mnt = join(t.dir, 'mnt');
  mkdirSync(mnt);
  const child = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'bindingServer.ts'), mnt], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let exit: number | string | undefined;
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.on('exit', (code, sig) => (exit = code ?? sig ?? 'unknown'));
  cleanups.push(async () => {
    if (exit === undefined) child.kill('SIGKILL');
    await sh('fusermount', ['-uz', mnt]);
    t.cleanup();
  });
  assert.ok(await waitFor(() => out.includes('ready') || exit !== undefined, 20_000), 'the server reports ready');
  assert.equal(exit, undefined, `the server exited early: ${out}`);
  return { mnt, output: () => out, exit: () => exit, signal: (sig) => child.kill(sig) };
}

describe('the FUSE binding', { skip: fuseMissing }, () => {
  test('a mount libfuse refuses says why: what libfuse printed on stderr is in the error, on one line', async () => {
    const dir = tempDir('avfs-nomount-');
    const missing = join(dir.dir, 'gone');
    try {
      await assert.rejects(
        mountFuse(missing, {}, { source: 'avfs:t' }),
        (e: Error) => {
          assert.match(e.message, /: fuse_mount failed: fuse: .*gone.*No such file or directory$/);
          assert.doesNotMatch(e.message, /\n/);
          return true;
        },
      );
    } finally {
      dir.cleanup();
    }
  });

  test('a handler may answer later: getattr after 200 ms, read on the next turn of the event loop', async () => {
    const s = await serve();
    const r = await sh('sh', ['-c', 'stat -c %s slow && cat slow'], { cwd: s.mnt });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, '15\nanswered later\n');
  });

  test('unmount fails a call that is never answered with EIO, detaches the mount, and the process then ends by itself', async () => {
    const s = await serve();
    const pending = sh('stat', ['hang'], { cwd: s.mnt });
    await new Promise((r) => setTimeout(r, 300));
    s.signal('SIGINT');
    const r = await pending;
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /Input\/output error/);
    assert.ok(await waitFor(() => s.output().includes('unmounted'), 10_000), 'unmount resolved');
    assert.equal(mountEntry(s.mnt), undefined, 'the mount is gone');
    assert.ok(await waitFor(() => s.exit() !== undefined, 10_000), 'the process ended without process.exit');
    assert.equal(s.exit(), 0);
  });

  test('a process that exits while mounted, with a call waiting for an answer, ends at once and the kernel drops its mount', async () => {
    const s = await serve();
    const pending = sh('stat', ['hang'], { cwd: s.mnt });
    await new Promise((r) => setTimeout(r, 300));
    s.signal('SIGHUP');
    assert.ok(await waitFor(() => s.exit() !== undefined, 10_000), 'the process ended');
    assert.equal(s.exit(), 0);
    const r = await pending;
    assert.notEqual(r.code, 0, 'the waiting call failed');
    assert.ok(await waitFor(() => mountEntry(s.mnt) === undefined, 10_000), 'auto_unmount removed the mount');
  });
});
