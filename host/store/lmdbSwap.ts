/**
 * Putting a compacted copy of an LMDB vault in the old file's place while other processes have
 * it open (lmdb.ts, `compact`). LMDB never gives pages back to the file system, so after a gc
 * that freed much, the store writes a compacted copy and renames it over the vault file. Two
 * hazards, and what stops each:
 *
 * - **A process opening the vault during the swap** could pair the new data file with the old
 *   file's lock file (LMDB keeps the last transaction id and the reader table there, by path:
 *   `<file>-lock`). The swapper holds `<file>-swap` (its pid inside) from before it removes the
 *   old lock file until after the swap (and removes the lock path once more at the end, in case an
 *   open that overlapped made one); an opener waits while that file is there, and after opening
 *   checks that neither the swap file nor the data file changed meanwhile, else it closes and
 *   opens again.
 * - **Processes that had the old file open** keep reading and writing the old inode. The swapper
 *   commits `moved` into the old file inside the write transaction that made the copy (so no
 *   write lands between the copy and the swap); the old file's other users see it at their next
 *   read or write and reopen the vault at its path. A write never lands in the old file: it starts
 *   by checking the path, and a moved file's write is redone on the new one.
 */
import { readFileSync, rmSync, statSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';

/** The file a swapper holds while it swaps `file` (its pid inside). */
export const swapFile = (file: string): string => `${file}-swap`;
export const lockFile = (file: string): string => `${file}-lock`;

/** The key in the old file's `state` that says it was replaced by a compacted copy. */
export const MOVED_KEY = 'moved';

/** How long an open waits for another process's swap before it gives up. */
const SWAP_WAIT_MS = 120_000;

const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms: number): void => void Atomics.wait(sleeper, 0, 0, ms);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Waits while another process swaps `file` (a swap file left by a process that died is removed). */
export function waitForSwap(file: string): void {
  const deadline = Date.now() + SWAP_WAIT_MS;
  for (;;) {
    let text: string;
    try {
      text = readFileSync(swapFile(file), 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw e;
    }
    const pid = Number(text);
    if (pid === process.pid) return;
    // An empty file is a swapper that has not written its pid yet.
    if (text !== '' && Number.isInteger(pid) && pid > 0 && !alive(pid)) {
      rmSync(swapFile(file), { force: true });
      continue;
    }
    if (Date.now() > deadline) {
      throw new AvfsError('StorageError', `vault file ${file} is being compacted by process ${text} and it has not finished in ${SWAP_WAIT_MS / 1000} s`, { file });
    }
    sleep(5);
  }
}

/**
 * What an open compares before and after: the data file's identity, and whether a swap is under
 * way. An open that began before a swap (no swap file then) and overlapped it sees either the swap
 * file still there or a different file at the path (the rename), and opens again.
 */
export function openIdentity(file: string): string {
  const id = (f: string) => {
    const st = statSync(f, { throwIfNoEntry: false });
    return st ? `${st.dev}:${st.ino}` : '-';
  };
  return `${id(file)} ${id(swapFile(file))}`;
}
