/**
 * MCP over stdio, one JSON-RPC message per line, as the SDK's StdioServerTransport speaks it, but
 * a message over the limit does not end the session (the SDK's transport closes itself past 10 MB):
 * the line is dropped as it streams in (never buffered whole), the request it held (its id read
 * from its first bytes) is answered with a JSON-RPC error, and the server goes on.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { JSONRPCMessageSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The longest message accepted: room for a 16 M-character write_file with JSON's escapes. */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The bytes of a dropped message kept to find its id. */
const HEAD_BYTES = 4096;
const INVALID_REQUEST = -32600;
const PARSE_ERROR = -32700;

export class LineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private parts: Buffer[] = [];
  private size = 0;
  /** Set while the rest of an oversize line is dropped: its first bytes. */
  private dropping: Buffer | undefined;
  private closed = false;

  constructor(
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stdout,
    private readonly maxBytes = MAX_MESSAGE_BYTES,
  ) {}

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onError);
    this.input.on('end', this.onEnd);
  }

  private readonly onError = (e: Error) => this.onerror?.(e);
  private readonly onEnd = () => void this.close();

  private readonly onData = (chunk: Buffer | string) => {
    let buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    for (let nl = buf.indexOf(10); ; nl = buf.indexOf(10)) {
      const piece = nl === -1 ? buf : buf.subarray(0, nl);
      if (this.dropping) {
        if (this.dropping.length < HEAD_BYTES) this.dropping = Buffer.concat([this.dropping, piece.subarray(0, HEAD_BYTES - this.dropping.length)]);
      } else if (this.size + piece.length > this.maxBytes) {
        this.dropping = Buffer.concat([...this.parts, piece]).subarray(0, HEAD_BYTES);
        this.parts = [];
        this.size = 0;
      } else {
        this.parts.push(piece);
        this.size += piece.length;
      }
      if (nl === -1) return;
      buf = buf.subarray(nl + 1);
      if (this.dropping) this.refuse(this.dropping);
      else this.line(Buffer.concat(this.parts).toString('utf8').replace(/\r$/, ''));
      this.dropping = undefined;
      this.parts = [];
      this.size = 0;
    }
  };

  private line(text: string): void {
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(text));
    } catch (e) {
      // Not a JSON-RPC message: answered when it names an id, else only reported.
      const id = idOf(text.slice(0, HEAD_BYTES));
      if (id !== undefined) void this.send({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message: 'not a valid JSON-RPC message' } } as JSONRPCMessage);
      else void this.sendRaw({ jsonrpc: '2.0', id: null, error: { code: PARSE_ERROR, message: 'not a JSON-RPC message (parse error)' } });
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    this.onmessage?.(message);
  }

  private refuse(head: Buffer): void {
    const id = idOf(head.toString('utf8'));
    const error = { code: INVALID_REQUEST, message: `the message is larger than ${this.maxBytes} bytes: it was dropped` };
    void this.sendRaw({ jsonrpc: '2.0', id: id ?? null, error });
  }

  private sendRaw(message: object): Promise<void> {
    return new Promise((resolve) => {
      if (this.closed) return resolve();
      this.output.write(JSON.stringify(message) + '\n', () => resolve());
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.sendRaw(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onError);
    this.input.off('end', this.onEnd);
    this.onclose?.();
  }
}

/** The id of a request from the first bytes of its text, when it comes before anything big. */
function idOf(head: string): string | number | undefined {
  const m = /"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,16})/.exec(head);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]!) as string | number;
  } catch {
    return undefined;
  }
}
