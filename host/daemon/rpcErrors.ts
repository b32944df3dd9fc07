/**
 * avfs errors over JSON-RPC: a code outside the range JSON-RPC reserves, one per error kind, and
 * the typed error itself as `data`, so a client turns it back into the same AvfsError.
 */
import { ResponseError } from 'vscode-jsonrpc/node';
import { AvfsError, ERROR_TABLE, type ErrorJson, ErrorJson as ErrorJsonSchema } from '../protocol/errors';
import { RPC_ERROR_BASE } from '../protocol/host';

export function rpcCode(e: AvfsError): number {
  return RPC_ERROR_BASE - ERROR_TABLE[e.kind].exit;
}

export function rpcError(e: AvfsError, code = rpcCode(e)): ResponseError<ErrorJson> {
  return new ResponseError(code, e.message, e.toJSON());
}

/** A JSON-RPC error back into the AvfsError it carries (or an Internal one). */
export function fromRpcError(e: unknown): AvfsError {
  if (e instanceof ResponseError) {
    const data = ErrorJsonSchema.safeParse(e.data);
    if (data.success) {
      const { error, message, ...details } = data.data;
      return new AvfsError(error, message, details);
    }
    return new AvfsError('Internal', `host error ${e.code}: ${e.message}`, { code: e.code });
  }
  if (e instanceof AvfsError) return e;
  return new AvfsError('Internal', e instanceof Error ? e.message : String(e));
}
