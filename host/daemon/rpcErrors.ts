/**
 * avfs errors over JSON-RPC: the code of the error's kind in the error table (outside the range
 * JSON-RPC reserves), and the typed error itself as `data`, so a client turns it back into the
 * same AvfsError.
 */
import { ResponseError } from 'vscode-jsonrpc/node';
import { AvfsError, type ErrorJson, ErrorJson as ErrorJsonSchema } from '../protocol/errors';

export function rpcError(e: AvfsError, code = e.rpcCode): ResponseError<ErrorJson> {
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
