/**
 * A guard in front of the JSON-RPC reader: it watches the `Content-Length` framing as bytes
 * pass and stops a connection that announces a message over the limit, or sends a header that
 * is not a frame, before anything is buffered. vscode-jsonrpc has no size limit of its own.
 */
import { Transform, type TransformCallback } from 'node:stream';

export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const MAX_HEADER_BYTES = 8 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');

export class FrameError extends Error {
  constructor(
    message: string,
    readonly code: 'too_large' | 'bad_header',
  ) {
    super(message);
  }
}

export class FrameGuard extends Transform {
  private header = Buffer.alloc(0);
  /** Body bytes still to pass before the next header. */
  private bodyLeft = 0;

  constructor(private readonly maxBytes = MAX_MESSAGE_BYTES) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let data = chunk;
    while (data.length > 0) {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, data.length);
        this.bodyLeft -= n;
        data = data.subarray(n);
        continue;
      }
      this.header = Buffer.concat([this.header, data]);
      const end = this.header.indexOf(HEADER_END);
      if (end < 0) {
        if (this.header.length > MAX_HEADER_BYTES) return done(new FrameError(`a header longer than ${MAX_HEADER_BYTES} bytes`, 'bad_header'));
        data = Buffer.alloc(0);
        break;
      }
      const text = this.header.subarray(0, end).toString('ascii');
      const m = /(?:^|\r\n)content-length:\s*(\d+)\s*(?:\r\n|$)/i.exec(text);
      if (!m) return done(new FrameError('a message header without Content-Length', 'bad_header'));
      const length = Number(m[1]);
      if (length > this.maxBytes) return done(new FrameError(`a message of ${length} bytes (the limit is ${this.maxBytes})`, 'too_large'));
      const rest = this.header.subarray(end + HEADER_END.length);
      this.header = Buffer.alloc(0);
      this.bodyLeft = length;
      data = rest;
    }
    this.push(chunk);
    done();
  }
}
