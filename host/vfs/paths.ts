/**
 * Vault path validation: absolute, no NUL, no `..` above the root, names of at most NAME_MAX
 * bytes. PATH_MAX bounds one path as a caller hands it over (the kernel's limit for one system
 * call, the CLI's for an argument), never a file's full path from the vault root: through a
 * mount, a relative path reaches files deeper than 4,096 bytes, as on a local file system.
 */
import { AvfsError, err } from '../protocol/errors';

export const NAME_MAX = 255;
export const PATH_MAX = 4096;

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

export function normalizePath(path: string): string {
  return '/' + splitPath(path).join('/');
}

export function joinPath(dir: string, name: string): string {
  return dir === '/' ? '/' + name : dir + '/' + name;
}

/** A CLI argument as a vault path: relative paths are taken from the vault root. */
export function fromCliPath(arg: string): string {
  if (Buffer.byteLength(arg) > PATH_MAX) {
    throw new AvfsError('NameTooLong', `path is longer than ${PATH_MAX} bytes`, { path: arg.slice(0, 64) + '…' });
  }
  return normalizePath(arg.startsWith('/') ? arg : '/' + arg);
}
