/**
 * Real pipes and files for a child's stdio. Node hands children UNIX socket pairs, and a socket
 * cannot be reopened through /proc: a command that writes to `/dev/stdout` or `/dev/stderr`
 * (`tee /dev/stderr`, `echo oops > /dev/stderr`, common in scripts) fails with ENXIO. Output goes
 * through real pipes: pipe(2) from avfs's addon, or where it is not built, FIFOs made with
 * `mkfifo` in a private directory, opened at both ends, then unlinked. Input is given as a file
 * (unlinked once open), so `/dev/stdin` works too and the command sees its end.
 */
import { execFile, execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadNativeAddon } from '../fuse/addon';

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

/** Both ends of a FIFO that is already unlinked. */
type Ends = { ours: number; child: number };

function openEnds(names: string[]): Ends[] {
  // The reading end first, non-blocking, so that opening it does not wait for a writer.
  return names.map((name) => ({ ours: openSync(name, constants.O_RDONLY | constants.O_NONBLOCK), child: openSync(name, constants.O_WRONLY) }));
}

const fifoNames = (dir: string, n: number) => Array.from({ length: n }, (_, i) => join(dir, `out${i}`));

const asPipes = (ends: Ends[]): OutputPipe[] => ends.map((e) => ({ stream: new Socket({ fd: e.ours, readable: true, writable: false }), childFd: e.child }));

type MakePipe = () => [number, number];
let nativePipe: MakePipe | null | undefined;

/** pipe(2) from avfs's addon; null when the addon is not built or does not load here. */
function pipeMaker(): MakePipe | null {
  if (nativePipe === undefined) {
    try {
      nativePipe = loadNativeAddon<{ pipe?: MakePipe }>()?.pipe ?? null;
    } catch {
      nativePipe = null;
    }
  }
  return nativePipe;
}

let closeOnExec: (() => void) | null | undefined;

/**
 * Makes every descriptor of this process from 3 up close-on-exec (avfs's addon), before a
 * sandboxed command starts: bwrap passes on whatever its starter holds, so a descriptor this
 * process inherited from its caller (an agent's pipe, a file open outside the vault) or a library
 * opened without the flag would be the run's way out. Its standard input, output and error are
 * given at spawn. Where the addon does not load no mount can be made, and nothing is done.
 */
export function noInheritedFds(): void {
  if (closeOnExec === undefined) {
    try {
      closeOnExec = loadNativeAddon<{ closeOnExecFrom3?: () => void }>()?.closeOnExecFrom3 ?? null;
    } catch {
      closeOnExec = null;
    }
  }
  closeOnExec?.();
}

/** Anonymous pipes from avfs's addon; undefined when it cannot make them here. */
function anonymousPipes(n: number): Ends[] | undefined {
  const pipe = pipeMaker();
  if (!pipe) return undefined;
  return Array.from({ length: n }, () => {
    const [ours, child] = pipe();
    return { ours, child };
  });
}

/** `n` pipes the child writes into and this process reads. */
export function outputPipes(n: number): OutputPipe[] {
  return asPipes(
    anonymousPipes(n) ??
      privateDir((dir) => {
        execFileSync('mkfifo', ['-m', '600', ...fifoNames(dir, n)]);
        return openEnds(fifoNames(dir, n));
      }),
  );
}

/**
 * Making a pair of output pipes runs `mkfifo`, a few milliseconds a command would wait for. A
 * process that starts command after command (the runner of the host and of mount servers) keeps
 * the next command's pair made ahead; a one-shot call starts making its pair while it mounts.
 */
let keepSpare = false;
let spare: Ends[] | undefined;
let making: Promise<void> | undefined;

function makeSpare(): Promise<void> {
  // With the addon a pair costs two pipe(2) calls: nothing to make ahead.
  if (spare || pipeMaker()) return Promise.resolve();
  making ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'avfs-stdio-'));
    try {
      await promisify(execFile)('mkfifo', ['-m', '600', ...fifoNames(dir, 2)]);
      spare = openEnds(fifoNames(dir, 2));
    } catch {
      /* the command makes its own */
    } finally {
      rmSync(dir, { recursive: true, force: true });
      making = undefined;
    }
  })();
  return making;
}

/** Keeps a pair of output pipes made ahead, for every next command. */
export function keepSparePipes(): void {
  keepSpare = true;
  void makeSpare();
}

/** Starts making the pipes of the one command this process is about to run. */
export function prepareOutputPipes(): void {
  void makeSpare();
}

/** A command's stdout and stderr pipes: the pair made ahead if there is one. */
export async function stdoutAndStderr(): Promise<[OutputPipe, OutputPipe]> {
  if (making) await making;
  const ends = spare;
  spare = undefined;
  const pipes = ends ? asPipes(ends) : outputPipes(2);
  if (keepSpare) void makeSpare();
  return pipes as [OutputPipe, OutputPipe];
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
