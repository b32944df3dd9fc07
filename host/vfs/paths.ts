/**
 * Vault path validation: absolute, no NUL, no `..` above the root, names of at most NAME_MAX
 * bytes; which components a path's own syntax says are directories; names that can be stored
 * exactly. PATH_MAX bounds one path as a caller hands it over (the kernel's limit for one system
 * call, the CLI's for an argument), never a file's full path from the vault root: through a
 * mount, a relative path reaches files deeper than 4,096 bytes, as on a local file system.
 */
import { AvfsError, err } from '../protocol/errors';
import { normalizePath, splitPath } from '../protocol/paths';

export const PATH_MAX = 4096;

// One normaliser for every side (the editor's URIs too): host/protocol/paths.ts.
export { NAME_MAX, normalizePath, splitPath } from '../protocol/paths';

/**
 * The directories a path's syntax implies, as lexical absolute paths: a component followed by
 * `/` at the end, by `.` or by `..` must be a directory (POSIX), even though normalising the
 * path drops that marker. `/a.txt/` and `/a.txt/.` give `/a.txt`; `/a/b/../c` gives `/a/b`.
 */
export function impliedDirs(path: string): string[] {
  if (!path.endsWith('/') && !path.includes('/.')) return [];
  const parts = path.split('/');
  const stack: string[] = [];
  const dirs: string[] = [];
  for (let i = 0; i < parts.length; i++) {
    const c = parts[i]!;
    const marker = c === '.' || c === '..' || (c === '' && i === parts.length - 1);
    if (marker && stack.length > 0) {
      const d = '/' + stack.join('/');
      if (!dirs.includes(d)) dirs.push(d);
    }
    if (c === '..') stack.pop();
    else if (c !== '' && c !== '.') stack.push(c);
  }
  return dirs;
}

/** Whether `path` is `dir` or lies inside it (both normalised). */
export function isWithin(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(dir + '/');
}

// U+FFFD is what every decoder (argv, FUSE's paths, readdir) makes of bytes that are not UTF-8,
// and a lone surrogate is stored as U+FFFD: either way two different names would become one.
const LOSSY_NAME = /\uFFFD|\p{Cs}/u;

/**
 * Refuses a new entry name that cannot be kept byte-exact: one holding U+FFFD (the decoders'
 * stand-in for bytes that are not UTF-8, so `\xff` and `\xfe` would both become it) or a lone
 * surrogate. Existing names are still found, renamed away and removed.
 */
export function checkNewName(name: string, pathForErrors: string, what = 'name'): void {
  if (LOSSY_NAME.test(name)) {
    throw err.invalidPath(pathForErrors, `the ${what} is not valid UTF-8 (or holds U+FFFD, which such bytes decode to), so it could not be kept exactly`);
  }
}

export function joinPath(dir: string, name: string): string {
  return dir === '/' ? '/' + name : dir + '/' + name;
}

/**
 * A vault path as a caller hands it over, validated, its syntax kept (`/a.txt/` stays): not empty,
 * at most PATH_MAX bytes, absolute (or, for a CLI argument, taken from the root when relative).
 */
export function checkVaultPath(arg: string, opts: { relativeFromRoot?: boolean } = {}): string {
  if (typeof arg !== 'string') throw err.invalidPath(String(arg), 'not a string');
  if (arg === '') throw err.invalidPath(arg, 'the path is empty');
  if (Buffer.byteLength(arg) > PATH_MAX) {
    throw new AvfsError('NameTooLong', `path is longer than ${PATH_MAX} bytes`, { path: arg.slice(0, 64) + '…' });
  }
  const abs = opts.relativeFromRoot && !arg.startsWith('/') ? '/' + arg : arg;
  splitPath(abs);
  return abs;
}

/** A CLI argument as an absolute vault path, validated, its syntax kept: relative paths are taken from the root. */
export function cliVaultPath(arg: string): string {
  return checkVaultPath(arg, { relativeFromRoot: true });
}

/** A CLI argument as a normalised vault path (relative paths are taken from the vault root). */
export function fromCliPath(arg: string): string {
  return normalizePath(cliVaultPath(arg));
}
