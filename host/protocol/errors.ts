/**
 * The one error type of agentvfs and the one table that maps each kind to what every surface
 * needs: a CLI exit code, a POSIX errno for FUSE, and the JSON shape `{ error, message, ...details }`.
 * docs/errors.md is written from this table.
 */
import { z } from 'zod';

export const ERROR_TABLE = {
  InvalidInput: { exit: 2, errno: 'EINVAL', doc: 'An argument or option is malformed (bad number, unknown key, bad flag combination).' },
  InvalidPath: {
    exit: 17,
    errno: 'EINVAL',
    doc: 'A vault path is empty, not absolute, contains NUL, uses `..` to leave the root, or names an entry with bytes that are not UTF-8 (they could not be kept exactly).',
  },
  NameTooLong: { exit: 18, errno: 'ENAMETOOLONG', doc: 'A path component is over 255 bytes or the path is over 4096 bytes.' },
  NotFound: { exit: 3, errno: 'ENOENT', doc: 'The path (or checkpoint, or mount) does not exist.' },
  AlreadyExists: { exit: 4, errno: 'EEXIST', doc: 'The target path already exists.' },
  NotADirectory: { exit: 5, errno: 'ENOTDIR', doc: 'A path component, or the target, is not a directory.' },
  IsADirectory: { exit: 6, errno: 'EISDIR', doc: 'A file operation was asked of a directory.' },
  NotEmpty: { exit: 7, errno: 'ENOTEMPTY', doc: 'The directory is not empty (use `-r`).' },
  SymlinkLoop: { exit: 19, errno: 'ELOOP', doc: 'Too many symbolic links were followed while resolving the path.' },
  VaultNotFound: { exit: 8, errno: 'ENOENT', doc: 'No vault of that name exists in the avfs home.' },
  VaultExists: { exit: 9, errno: 'EEXIST', doc: 'A vault of that name already exists.' },
  NoActiveVault: { exit: 10, errno: 'ENOENT', doc: 'No `--vault` was given and no vault is in use (`avfs vault use NAME`).' },
  QuotaExceeded: { exit: 11, errno: 'EDQUOT', doc: 'The write would pass a vault quota; nothing was written.' },
  ReadOnly: { exit: 12, errno: 'EROFS', doc: 'The vault (or mount) is read-only, or its file or the vaults directory is read-only on disk.' },
  VaultInUse: { exit: 13, errno: 'EBUSY', doc: 'The vault has forks that depend on it, or is mounted.' },
  Busy: { exit: 25, errno: 'EBUSY', doc: 'The resource (mountpoint, vault) is busy.' },
  PermissionDenied: { exit: 14, errno: 'EACCES', doc: 'The host refused access (e.g. a host path is unreadable).' },
  NotSupported: { exit: 15, errno: 'ENOTSUP', doc: 'The operation is not supported on this kind of entry or platform.' },
  UnsafeSymlink: { exit: 16, errno: 'EACCES', doc: 'A symlink points outside the tree being imported or exported.' },
  PolicyDenied: { exit: 20, errno: 'EACCES', doc: 'The policy denied the command; nothing ran.' },
  ApprovalRequired: { exit: 21, errno: 'EACCES', doc: 'The command needs approval and no approver answered.' },
  Timeout: { exit: 22, errno: 'ETIMEDOUT', doc: 'The operation did not finish in its time limit.' },
  MountError: { exit: 23, errno: 'EIO', doc: 'Mounting or unmounting failed.' },
  PolicyFileInvalid: { exit: 24, errno: 'EINVAL', doc: 'A policy rules file failed validation; the message names the field.' },
  StorageError: { exit: 30, errno: 'EIO', doc: 'SQLite reported an error (corrupt file, disk full, locked past the busy timeout).' },
  Internal: { exit: 1, errno: 'EIO', doc: 'A bug: please report it with the message.' },
} as const satisfies Record<string, { exit: number; errno: string; doc: string }>;

export type ErrorKind = keyof typeof ERROR_TABLE;
export const ERROR_KINDS = Object.keys(ERROR_TABLE) as [ErrorKind, ...ErrorKind[]];

export type ErrorDetails = Record<string, unknown>;

/** The JSON shape of every error on every surface. */
export const ErrorJson = z
  .object({
    error: z.enum(ERROR_KINDS),
    message: z.string(),
  })
  .catchall(z.unknown());
export type ErrorJson = z.infer<typeof ErrorJson>;

export class AvfsError extends Error {
  readonly kind: ErrorKind;
  readonly details: ErrorDetails;

  constructor(kind: ErrorKind, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = 'AvfsError';
    this.kind = kind;
    this.details = details;
  }

  get exitCode(): number {
    return ERROR_TABLE[this.kind].exit;
  }

  get errno(): string {
    return ERROR_TABLE[this.kind].errno;
  }

  toJSON(): ErrorJson {
    return { error: this.kind, message: this.message, ...this.details };
  }
}

export const err = {
  notFound: (path: string) => new AvfsError('NotFound', `no such file or directory: ${path}`, { path }),
  exists: (path: string) => new AvfsError('AlreadyExists', `already exists: ${path}`, { path }),
  notDir: (path: string) => new AvfsError('NotADirectory', `not a directory: ${path}`, { path }),
  isDir: (path: string) => new AvfsError('IsADirectory', `is a directory: ${path}`, { path }),
  notEmpty: (path: string) => new AvfsError('NotEmpty', `directory not empty: ${path}`, { path }),
  invalidPath: (path: string, reason: string) =>
    new AvfsError('InvalidPath', `invalid path ${JSON.stringify(path)}: ${reason}`, { path, reason }),
  invalidInput: (message: string, details: ErrorDetails = {}) => new AvfsError('InvalidInput', message, details),
  readOnly: (path: string, why = 'the vault is open read-only') =>
    new AvfsError('ReadOnly', `read-only vault: cannot modify ${path} (${why})`, { path, reason: why }),
};

/** Turns anything thrown into an AvfsError, keeping typed errors and classifying SQLite ones. */
export function toAvfsError(e: unknown): AvfsError {
  if (e instanceof AvfsError) return e;
  if (e instanceof z.ZodError) {
    const issue = e.issues[0];
    const field = issue ? issue.path.join('.') : '';
    return new AvfsError('InvalidInput', `invalid input${field ? ` at ${field}` : ''}: ${issue?.message ?? e.message}`, {
      field,
    });
  }
  const anyErr = e as { code?: unknown; message?: unknown; name?: unknown };
  const message = typeof anyErr?.message === 'string' ? anyErr.message : String(e);
  if (anyErr?.name === 'SqliteError' || (typeof anyErr?.code === 'string' && anyErr.code.startsWith('SQLITE_'))) {
    // A vault file (or its directory) that the OS will not let this user write.
    if (typeof anyErr.code === 'string' && anyErr.code.startsWith('SQLITE_READONLY')) {
      return new AvfsError('ReadOnly', `read-only: ${message}`, { code: anyErr.code });
    }
    return new AvfsError('StorageError', `storage error: ${message}`, { code: anyErr.code });
  }
  if (typeof anyErr?.code === 'string') {
    const byErrno: Record<string, ErrorKind> = {
      ENOENT: 'NotFound',
      EEXIST: 'AlreadyExists',
      ENOTDIR: 'NotADirectory',
      EISDIR: 'IsADirectory',
      ENOTEMPTY: 'NotEmpty',
      EACCES: 'PermissionDenied',
      EPERM: 'PermissionDenied',
      EBUSY: 'Busy',
      ELOOP: 'SymlinkLoop',
      ENAMETOOLONG: 'NameTooLong',
      EROFS: 'ReadOnly',
    };
    const kind = byErrno[anyErr.code];
    if (kind) return new AvfsError(kind, message, { code: anyErr.code });
  }
  return new AvfsError('Internal', message);
}
