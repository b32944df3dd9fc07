/**
 * Vault paths as every side reads them: the host's file system, the CLI and the editor's `avfs:`
 * URIs all normalise a path here, so they agree on what it names. Absolute; `.` and empty segments
 * dropped; `..` resolved lexically (`/a/../b` is `/b`), and refused (InvalidPath) where it would
 * leave the vault root; no NUL; names of at most NAME_MAX bytes.
 */
import { AvfsError, err } from './errors';

export const NAME_MAX = 255;

/** Splits an absolute vault path into its components, resolving `.` and `..` lexically. */
export function splitPath(path: string): string[] {
  if (typeof path !== 'string') throw err.invalidPath(String(path), 'not a string');
  if (path.includes('\0')) throw err.invalidPath(path, 'contains a NUL byte');
  if (!path.startsWith('/')) throw err.invalidPath(path, 'vault paths are absolute (start with /)');
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) throw err.invalidPath(path, '".." would leave the vault root');
      out.pop();
      continue;
    }
    if (Buffer.byteLength(part) > NAME_MAX) {
      throw new AvfsError('NameTooLong', `file name is longer than ${NAME_MAX} bytes`, { path, name: part.slice(0, 64) + '…' });
    }
    out.push(part);
  }
  return out;
}

/** The normalised form of an absolute vault path: `/` for the root, never a trailing slash otherwise. */
export function normalizePath(path: string): string {
  return '/' + splitPath(path).join('/');
}
