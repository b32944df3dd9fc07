/**
 * Standard input of unknown size, read as it arrives and kept in memory only up to a point, then
 * in a private temporary file, so memory stays bounded whatever the size. A check sees the
 * running total and may throw to stop reading at once (a quota that the input has passed).
 */
import { closeSync, fstatSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { CHUNK_SIZE } from '../store/schema';

/** Input up to this size stays in memory. */
const IN_MEMORY_MAX = 8 * 1024 * 1024;
/** Blocks handed to the writer: whole chunks, so no write straddles one. */
const BLOCK = 16 * CHUNK_SIZE;

export interface Spool {
  readonly size: number;
  /** The input again, in blocks of BLOCK bytes (the last one shorter). */
  blocks(): Iterable<Buffer>;
  /** Removes the temporary file, if any. */
  dispose(): void;
}

export async function spoolStdin(check: (total: number) => void, input: NodeJS.ReadableStream = process.stdin): Promise<Spool> {
  const held: Buffer[] = [];
  let size = 0;
  let file: { dir: string; fd: number } | undefined;
  if (input === process.stdin) refuseUnreadableStdin();
  try {
    for await (const chunk of input) {
      const b = chunk as Buffer;
      size += b.length;
      check(size);
      if (file) {
        writeSync(file.fd, b);
        continue;
      }
      held.push(b);
      if (size > IN_MEMORY_MAX) {
        const dir = mkdtempSync(join(tmpdir(), 'avfs-stdin-'));
        file = { dir, fd: openSync(join(dir, 'input'), 'w+', 0o600) };
        for (const h of held.splice(0)) writeSync(file.fd, h);
      }
    }
  } catch (e) {
    if (file) dispose(file);
    throw stdinError(e);
  }
  const spooled = file;
  return {
    size,
    blocks: spooled ? () => fileBlocks(spooled.fd, size) : () => memoryBlocks(Buffer.concat(held, size)),
    dispose: () => {
      if (spooled) dispose(spooled);
    },
  };
}

/**
 * Node reads a directory on standard input as an empty stream (it is no file, pipe or terminal),
 * which would replace the target with nothing: refused before any byte is taken.
 */
function refuseUnreadableStdin(): void {
  let isDir = false;
  try {
    isDir = fstatSync(0).isDirectory();
  } catch (e) {
    throw stdinError(e);
  }
  if (isDir) throw new AvfsError('InvalidInput', 'standard input is a directory, not data to write', { field: 'stdin' });
}

/** What read(2) of a standard input that cannot give data answers. */
const READ_ERRORS = new Set(['EBADF', 'EISDIR', 'EIO', 'EINVAL', 'ENXIO']);

/** A read error of standard input (not open for reading, EIO…) is bad input, not a bug; typed errors (a quota) pass. */
function stdinError(e: unknown): unknown {
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string' || !READ_ERRORS.has(code)) return e;
  return new AvfsError('InvalidInput', `cannot read standard input: ${(e as Error).message}`, { field: 'stdin', code });
}

function* memoryBlocks(all: Buffer): Iterable<Buffer> {
  for (let off = 0; off < all.length; off += BLOCK) yield all.subarray(off, off + BLOCK);
}

function* fileBlocks(fd: number, size: number): Iterable<Buffer> {
  const buf = Buffer.alloc(BLOCK);
  for (let off = 0; off < size; ) {
    const n = readSync(fd, buf, 0, Math.min(BLOCK, size - off), off);
    if (n === 0) break;
    // The writer stores the bytes before asking for the next block, so the buffer can be reused.
    yield buf.subarray(0, n);
    off += n;
  }
}

function dispose(file: { dir: string; fd: number }): void {
  closeSync(file.fd);
  rmSync(file.dir, { recursive: true, force: true });
}
