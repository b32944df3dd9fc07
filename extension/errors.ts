// What the extension does with an error from the host: which `vscode.FileSystemError` a file
// operation throws, and the sentence a person reads. Pure (no `vscode` import): unit-tested under
// node:test; extension/fs/ turns the name into the FileSystemError itself.
//
// The host answers a failed call with a JSON-RPC error whose `data` is the typed error
// `{ error: Kind, message, …details }` of host/protocol/errors.ts, whose table also names the
// FileSystemError for each kind (its `vscode` column).
import { z } from 'zod';
import { ERROR_TABLE, type ErrorKind, ErrorJson, type VscodeFsError } from '../host/protocol/errors';
import { QuotaKey } from '../host/protocol/vault';
import { formatBytes, plural } from './format';

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

/**
 * The FileSystemError for a failed call, from the error table; null where none fits (the editor then
 * shows the message as a plain error). No host to ask is Unavailable, as is anything unexpected.
 */
export function fsErrorName(e: unknown): VscodeFsError | null {
  if (e instanceof HostCallError) return e.kind === 'HostUnavailable' ? 'Unavailable' : ERROR_TABLE[e.kind].vscode;
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
