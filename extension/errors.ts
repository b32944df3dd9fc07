// What the extension does with an error from the host: which `vscode.FileSystemError` a file
// operation throws, and the sentence a person reads. Pure (no `vscode` import): unit-tested under
// node:test; extension/fs/ turns the name into the FileSystemError itself.
//
// The host answers a failed call with a JSON-RPC error whose `data` is the typed error
// `{ error: Kind, message, …details }` of host/protocol/errors.ts. The FileSystemError for each kind
// is the table below until the protocol's error table carries it (then this table goes).
import { z } from 'zod';
import { type ErrorKind, ErrorJson } from '../host/protocol/errors';
import { QuotaKey } from '../host/protocol/vault';
import { formatBytes, plural } from './format';

/** The `vscode.FileSystemError` factories a provider may throw. */
export type FsErrorName = 'FileNotFound' | 'FileExists' | 'FileNotADirectory' | 'FileIsADirectory' | 'NoPermissions' | 'Unavailable';

/**
 * One row per error kind (the compiler insists on every kind). NoPermissions is VS Code's word for
 * "refused as asked" (its editors then offer Save As / Retry rather than treat the file as gone);
 * Unavailable for "try again later" conditions of the host itself.
 */
export const FS_ERROR_BY_KIND = {
  InvalidInput: 'NoPermissions',
  InvalidPath: 'FileNotFound',
  NameTooLong: 'NoPermissions',
  NotFound: 'FileNotFound',
  AlreadyExists: 'FileExists',
  NotADirectory: 'FileNotADirectory',
  IsADirectory: 'FileIsADirectory',
  NotEmpty: 'NoPermissions',
  SymlinkLoop: 'FileNotFound',
  VaultNotFound: 'FileNotFound',
  VaultExists: 'FileExists',
  NoActiveVault: 'FileNotFound',
  QuotaExceeded: 'NoPermissions',
  ReadOnly: 'NoPermissions',
  VaultInUse: 'NoPermissions',
  Busy: 'Unavailable',
  PermissionDenied: 'NoPermissions',
  NotSupported: 'NoPermissions',
  UnsafeSymlink: 'NoPermissions',
  PolicyDenied: 'NoPermissions',
  ApprovalRequired: 'NoPermissions',
  Timeout: 'Unavailable',
  MountError: 'Unavailable',
  PolicyFileInvalid: 'NoPermissions',
  StorageError: 'Unavailable',
  Internal: 'Unavailable',
} as const satisfies Record<ErrorKind, FsErrorName>;

/**
 * A call to the host that did not give a result. `json` is the host's typed error when it sent one;
 * otherwise the client made one up in the same shape: `Timeout` (no answer in time), or
 * `HostUnavailable` (no host to ask: not started, exited, or cannot run), which is the client's
 * own condition and not a kind of the protocol's table.
 */
export class HostCallError extends Error {
  readonly kind: ErrorKind | 'HostUnavailable';

  constructor(
    readonly method: string,
    readonly json: ErrorJson | { error: 'HostUnavailable'; message: string },
  ) {
    super(json.message);
    this.name = 'HostCallError';
    this.kind = json.error;
  }
}

/** The typed error in a JSON-RPC error's `data`, if it is one. */
export function typedErrorOf(data: unknown): ErrorJson | undefined {
  const parsed = ErrorJson.safeParse(data);
  return parsed.success ? parsed.data : undefined;
}

export function fsErrorName(e: unknown): FsErrorName {
  if (e instanceof HostCallError) return e.kind === 'HostUnavailable' ? 'Unavailable' : FS_ERROR_BY_KIND[e.kind];
  return 'Unavailable';
}

const QuotaDetails = z.object({
  quota: QuotaKey,
  limit: z.number(),
  current: z.number(),
  requested: z.number(),
  unit: z.enum(['bytes', 'files']),
  path: z.string().optional(),
  checkpoint: z.string().optional(),
});

/** The sentence to show a person for an error: the host's message, or a fuller one where details allow. */
export function errorMessage(e: unknown): string {
  if (e instanceof HostCallError) {
    if (e.json.error === 'QuotaExceeded') {
      const q = QuotaDetails.safeParse(e.json);
      if (q.success) return quotaMessage(q.data);
    }
    return e.json.message;
  }
  return e instanceof Error ? e.message : String(e);
}

function quotaMessage(q: z.infer<typeof QuotaDetails>): string {
  const amount = (n: number) => (q.unit === 'bytes' ? formatBytes(n) : plural(n, 'file'));
  const where = q.path ? ` (${q.path})` : q.checkpoint ? ` (restoring ${q.checkpoint})` : '';
  const what =
    q.quota === 'max_file_size_mb'
      ? `the limit is ${amount(q.limit)} per file and the file would grow to ${amount(q.requested)}`
      : `the limit is ${amount(q.limit)}, ${amount(q.current)} in use, and this needs ${amount(q.requested)} more`;
  return `Vault quota ${q.quota} exceeded${where}: ${what}. Nothing was written; raise or clear the quota with "AVFS: Set Quota".`;
}
