/**
 * Real pipes and files for a child's stdio. Node hands children UNIX socket pairs, and a socket
 * cannot be reopened through /proc: a command that writes to `/dev/stdout` or `/dev/stderr`
 * (`tee /dev/stderr`, `echo oops > /dev/stderr`, common in scripts) fails with ENXIO. A FIFO is
 * a real pipe: made in a private directory, opened at both ends, then unlinked. Input is given
 * as a file (unlinked once open), so `/dev/stdin` works too and the command sees its end.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface OutputPipe {
  /** The reading end, this process's. */
  stream: Socket;
  /** The writing end, for the child (close it here once the child has it). */
  childFd: number;
}

function privateDir<T>(fn: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'avfs-stdio-'));
  try {
    return fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `n` pipes the child writes into and this process reads. */
export function outputPipes(n: number): OutputPipe[] {
  return privateDir((dir) => {
    const names = Array.from({ length: n }, (_, i) => join(dir, `out${i}`));
    execFileSync('mkfifo', ['-m', '600', ...names]);
    return names.map((name) => {
      // The reading end first, non-blocking, so that opening it does not wait for a writer.
      const ours = openSync(name, constants.O_RDONLY | constants.O_NONBLOCK);
      const childFd = openSync(name, constants.O_WRONLY);
      return { stream: new Socket({ fd: ours, readable: true, writable: false }), childFd };
    });
  });
}

/** A read-only descriptor of `data` for the child's standard input. */
export function inputFile(data: string | Buffer): number {
  return privateDir((dir) => {
    const name = join(dir, 'in');
    writeFileSync(name, data, { mode: 0o600 });
    return openSync(name, constants.O_RDONLY);
  });
}

export function closeFds(fds: number[]): void {
  for (const fd of fds) closeSync(fd);
}
