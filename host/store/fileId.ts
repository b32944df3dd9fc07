// Which file a path names, by (device, inode): a vault file deleted, or deleted and made again,
// under a store that has it open is another file at the same path.
import { statSync } from 'node:fs';

export interface FileId {
  dev: number;
  ino: number;
}

/** The file at `path` now (it must exist). */
export function fileIdOf(path: string): FileId {
  const st = statSync(path);
  return { dev: st.dev, ino: st.ino };
}

/** Whether `path` no longer names the file `id` was taken from: gone, or another file in its place. */
export function replacedSince(path: string, id: FileId): boolean {
  const st = statSync(path, { throwIfNoEntry: false });
  return !st || st.dev !== id.dev || st.ino !== id.ino;
}
