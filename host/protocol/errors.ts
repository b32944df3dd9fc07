/**
 * The one error type of agentvfs and the one table that maps each kind to what every surface
 * needs: a CLI exit code, a POSIX errno for FUSE, a JSON-RPC error code for the host, the
 * `vscode.FileSystemError` a file system provider throws (null: none fits, the editor shows the
 * message as a plain error), and the JSON shape `{ error, message, ...details }`.
 * docs/errors.md is written from this table.
 */
import { z } from 'zod';

/** The `vscode.FileSystemError` factories a file system provider can throw. */
export type VscodeFsError = 'FileNotFound' | 'FileExists' | 'FileNotADirectory' | 'FileIsADirectory' | 'NoPermissions' | 'Unavailable';

/**
 * JSON-RPC error codes of avfs errors lie below the range JSON-RPC reserves (-32768..-32000):
 * -31000 minus the exit code, written out per kind so a code never changes with an exit code.
 */
export const ERROR_TABLE = {
  InvalidInput: { exit: 2, errno: 'EINVAL', rpc: -31002, vscode: null, doc: 'An argument or option is malformed (bad number, unknown key, bad flag combination).' },
  InvalidPath: {
    exit: 17,
    errno: 'EINVAL',
    rpc: -31017,
    vscode: 'FileNotFound',
    doc: 'A vault path is empty, not absolute, contains NUL, uses `..` to leave the root, or names an entry with bytes that are not UTF-8 (they could not be kept exactly).',
  },
  NameTooLong: { exit: 18, errno: 'ENAMETOOLONG', rpc: -31018, vscode: 'NoPermissions', doc: 'A path component is over 255 bytes or the path is over 4096 bytes.' },
  NotFound: { exit: 3, errno: 'ENOENT', rpc: -31003, vscode: 'FileNotFound', doc: 'The path (or checkpoint, or mount) does not exist.' },
  AlreadyExists: { exit: 4, errno: 'EEXIST', rpc: -31004, vscode: 'FileExists', doc: 'The target path already exists.' },
  NotADirectory: { exit: 5, errno: 'ENOTDIR', rpc: -31005, vscode: 'FileNotADirectory', doc: 'A path component, or the target, is not a directory.' },
  IsADirectory: { exit: 6, errno: 'EISDIR', rpc: -31006, vscode: 'FileIsADirectory', doc: 'A file operation was asked of a directory.' },
  NotEmpty: { exit: 7, errno: 'ENOTEMPTY', rpc: -31007, vscode: 'NoPermissions', doc: 'The directory is not empty (use `-r`).' },
  SymlinkLoop: { exit: 19, errno: 'ELOOP', rpc: -31019, vscode: 'FileNotFound', doc: 'Too many symbolic links were followed while resolving the path.' },
  VaultNotFound: { exit: 8, errno: 'ENOENT', rpc: -31008, vscode: 'FileNotFound', doc: 'No vault of that name exists in the avfs home.' },
  VaultExists: { exit: 9, errno: 'EEXIST', rpc: -31009, vscode: 'FileExists', doc: 'A vault of that name already exists.' },
  NoActiveVault: { exit: 10, errno: 'ENOENT', rpc: -31010, vscode: 'FileNotFound', doc: 'No `--vault` was given and no vault is in use (`avfs vault use NAME`).' },
  QuotaExceeded: { exit: 11, errno: 'EDQUOT', rpc: -31011, vscode: 'NoPermissions', doc: 'The write would pass a vault quota; nothing was written.' },
  ReadOnly: { exit: 12, errno: 'EROFS', rpc: -31012, vscode: 'NoPermissions', doc: 'The vault (or mount) is read-only, or its file or the vaults directory is read-only on disk.' },
  VaultInUse: { exit: 13, errno: 'EBUSY', rpc: -31013, vscode: 'NoPermissions', doc: 'The vault has forks that depend on it, or is mounted.' },
  Busy: { exit: 25, errno: 'EBUSY', rpc: -31025, vscode: 'Unavailable', doc: 'The resource (mountpoint, vault) is busy.' },
  PermissionDenied: { exit: 14, errno: 'EACCES', rpc: -31014, vscode: 'NoPermissions', doc: 'The host refused access (e.g. a host path is unreadable).' },
  NotSupported: { exit: 15, errno: 'ENOTSUP', rpc: -31015, vscode: 'NoPermissions', doc: 'The operation is not supported on this kind of entry or platform.' },
  UnsafeSymlink: { exit: 16, errno: 'EACCES', rpc: -31016, vscode: 'NoPermissions', doc: 'A symlink points outside the tree being imported or exported.' },
  PolicyDenied: { exit: 20, errno: 'EACCES', rpc: -31020, vscode: null, doc: 'The policy denied the command; nothing ran.' },
  ApprovalRequired: { exit: 21, errno: 'EACCES', rpc: -31021, vscode: null, doc: 'The command needs approval and no approver answered.' },
  Timeout: { exit: 22, errno: 'ETIMEDOUT', rpc: -31022, vscode: 'Unavailable', doc: 'The operation did not finish in its time limit.' },
  MountError: { exit: 23, errno: 'EIO', rpc: -31023, vscode: 'Unavailable', doc: 'Mounting or unmounting failed.' },
  OwnerDied: {
    exit: 26,
    errno: 'EIO',
    rpc: -31026,
    vscode: 'Unavailable',
    doc: 'The process running the call or the run (the vault host, a mount server, a one-shot `proxy exec`) died before it ended. A run it owned is ended by its guard: the command stopped, its one-shot mount released, the checkpoint taken before it kept (the audit trail says so: `exec_failed`).',
  },
  SelfApproval: {
    exit: 28,
    errno: 'EPERM',
    rpc: -31028,
    vscode: 'NoPermissions',
    doc: 'An approval answer, an offer to answer approvals, or a change of policy rules came from inside an avfs run (a command it runs, or anything that command started, however it forked), or from a connection whose process has exited: only a person answers. Nothing was answered or changed.',
  },
  Conflict: {
    exit: 27,
    errno: 'EBUSY',
    rpc: -31027,
    vscode: null,
    doc: 'An apply or a sync found paths changed on both sides since the base (`conflicts` lists every one, each with what the other side did); nothing was written.',
  },
  WorkingCopyConflict: {
    exit: 31,
    errno: 'EBUSY',
    rpc: -31031,
    vscode: null,
    doc: 'A `proxy exec --materialize` run changed paths that another writer changed in the vault during the run (`paths` lists them), or the vault was replaced under it (a checkpoint restore): nothing of the run was committed, the vault keeps the other writer\'s changes, and the run\'s working copy is kept aside (`working_copy`).',
  },
  PolicyFileInvalid: { exit: 24, errno: 'EINVAL', rpc: -31024, vscode: null, doc: 'A policy rules file failed validation; the message names the field.' },
  SandboxUnavailable: {
    exit: 29,
    errno: 'ENOTSUP',
    rpc: -31029,
    vscode: null,
    doc: 'The run asked for `--sandbox workspace` and bubblewrap cannot isolate it on this machine (not installed, or user namespaces are off); nothing ran. `avfs doctor` says why; without `--sandbox` a run falls back to `none` there, recorded in the envelope.',
  },
  StorageError: { exit: 30, errno: 'EIO', rpc: -31030, vscode: 'Unavailable', doc: 'SQLite reported an error (corrupt file, disk full, locked past the busy timeout).' },
  Internal: { exit: 1, errno: 'EIO', rpc: -31001, vscode: null, doc: 'A bug: please report it with the message.' },
} as const satisfies Record<string, { exit: number; errno: string; rpc: number; vscode: VscodeFsError | null; doc: string }>;

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

  get rpcCode(): number {
    return ERROR_TABLE[this.kind].rpc;
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
  const anyErr = e as { code?: unknown; message?: unknown; name?: unknown; kind?: unknown; details?: unknown };
  const message = typeof anyErr?.message === 'string' ? anyErr.message : String(e);
  // An AvfsError of another bundle (dist/avfs-mcp.js has its own copy of this class): the same kind.
  if (anyErr?.name === 'AvfsError' && typeof anyErr.kind === 'string' && Object.hasOwn(ERROR_TABLE, anyErr.kind)) {
    return new AvfsError(anyErr.kind as ErrorKind, message, typeof anyErr.details === 'object' && anyErr.details !== null ? (anyErr.details as ErrorDetails) : {});
  }
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
