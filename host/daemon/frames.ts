/**
 * JSON-RPC framing (`Content-Length: N\r\n\r\n` + N bytes of JSON) on a stream, on both sides.
 * Reading: a guard in front of the JSON-RPC reader watches the framing as bytes pass and stops
 * a connection that announces a message over the limit, or sends a header that is not a frame,
 * before anything is buffered (vscode-jsonrpc has no size limit of its own). Writing: one write
 * per message.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';

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

/**
 * Writes each message as one frame in one write. vscode-jsonrpc's stream writer writes the header,
 * waits for that write to complete, then writes the body: two system calls and a wake-up of the
 * reader for each, which was most of a small request's round trip.
 */
export class FrameWriter extends AbstractMessageWriter implements MessageWriter {
  private errors = 0;

  constructor(private readonly out: NodeJS.WritableStream) {
    super();
    out.on('error', (e: Error) => this.fireError(e));
    out.on('close', () => this.fireClose());
  }

  write(msg: Message): Promise<void> {
    const body = Buffer.from(JSON.stringify(msg), 'utf8');
    const head = Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii');
    return new Promise((resolve, reject) => {
      this.out.write(Buffer.concat([head, body], head.length + body.length), (e) => {
        if (!e) return resolve();
        this.fireError(e, msg, ++this.errors);
        reject(e);
      });
    });
  }

  end(): void {
    this.out.end();
  }
}
