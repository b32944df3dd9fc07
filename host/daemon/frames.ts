/**
 * JSON-RPC framing (`Content-Length: N\r\n\r\n` + N bytes of JSON) on a stream, on both sides of
 * every connection to the host: one parser, which refuses what it does not fully understand.
 *
 * Reading (FrameReader, in place of vscode-jsonrpc's readers):
 * - a header is `Content-Length` exactly once (whole decimal digits) and at most one
 *   `Content-Type` (UTF-8 only); any other header line, a repeated one, or a header over 8 KiB
 *   loses the framing: the connection is refused (fatal);
 * - a message over the limit (64 MiB) is refused before any of it is buffered, and so is one that
 *   would take the bytes held by all connections of this process past their common cap;
 * - a message begun must end within the frame timeout (a slow or stalled sender is cut off);
 * - a body that is not JSON, a batch (an array), or an object that is not a JSON-RPC request,
 *   notification or response (an `id` that is an object, a `method` that is not a string…) is
 *   answered with a JSON-RPC error and reading goes on: the framing is intact;
 * - when the stream ends or closes, the reader closes and holds no timer, so a process whose
 *   peer died (mid-message too) exits.
 * Writing (FrameWriter): one write per message.
 */
import { AbstractMessageReader, AbstractMessageWriter, type DataCallback, type Disposable, type Message, type MessageReader, type MessageWriter } from 'vscode-jsonrpc/node';

export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** What all connections of one process may hold of messages not yet read whole. */
export const MAX_HELD_BYTES = 160 * 1024 * 1024;
export const FRAME_TIMEOUT_MS = 30_000;
const MAX_HEADER_BYTES = 8 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');

/** JSON-RPC 2.0's codes for what a reader refuses. */
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;

/** What the reader refused: `fatal` when the framing is lost and the connection must close. */
export interface Refusal {
  code: number;
  message: string;
  /** The id of the refused request when it had a valid one; else null (JSON-RPC's rule). */
  id: string | number | null;
  fatal: boolean;
}

export interface FrameLimits {
  maxMessageBytes?: number;
  frameTimeoutMs?: number;
}

/** Bytes held across every reader in this process (reserved when a header announces a body). */
let held = 0;
export function heldBytes(): number {
  return held;
}

export class FrameReader extends AbstractMessageReader implements MessageReader {
  private callback: DataCallback | undefined;
  private header: Buffer[] = [];
  private headerBytes = 0;
  private body: Buffer[] = [];
  private bodyWanted = -1;
  private bodyHave = 0;
  /** Bytes of the common cap this reader holds. */
  private reserved = 0;
  private frameTimer: NodeJS.Timeout | undefined;
  private done = false;
  private readonly refusalHandlers: Array<(r: Refusal) => void> = [];
  private readonly maxBytes: number;
  private readonly frameTimeoutMs: number;
  private readonly onData = (chunk: Buffer) => this.feed(chunk);
  private readonly onEnd = () => this.finish();
  private readonly onStreamError = (e: Error) => this.fireError(e);

  constructor(
    private readonly input: NodeJS.ReadableStream,
    limits: FrameLimits = {},
  ) {
    super();
    this.maxBytes = limits.maxMessageBytes ?? MAX_MESSAGE_BYTES;
    this.frameTimeoutMs = limits.frameTimeoutMs ?? FRAME_TIMEOUT_MS;
  }

  /** Called for each message refused (after it, when fatal, nothing more is read). */
  onRefused(fn: (r: Refusal) => void): void {
    this.refusalHandlers.push(fn);
  }

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('close', this.onEnd);
    this.input.on('error', this.onStreamError);
    return { dispose: () => this.finish() };
  }

  override dispose(): void {
    this.finish(false);
    super.dispose();
  }

  /** Stops reading and gives back what it held; closes the reader (once). */
  private finish(fire = true): void {
    if (this.done) return;
    this.done = true;
    this.input.off('data', this.onData);
    this.clearFrame();
    if (fire) this.fireClose();
  }

  private clearFrame(): void {
    if (this.frameTimer) clearTimeout(this.frameTimer);
    this.frameTimer = undefined;
    held -= this.reserved;
    this.reserved = 0;
    this.header = [];
    this.headerBytes = 0;
    this.body = [];
    this.bodyWanted = -1;
    this.bodyHave = 0;
  }

  /** Refuses a message (or, fatal, the connection): tells the handlers, and when fatal stops reading. */
  refuse(r: Refusal): void {
    for (const fn of this.refusalHandlers) fn(r);
    if (r.fatal) this.finish();
  }

  private fatal(message: string, code = INVALID_REQUEST): void {
    this.refuse({ code, message, id: null, fatal: true });
  }

  private startFrameTimer(): void {
    if (this.frameTimer || this.frameTimeoutMs <= 0) return;
    this.frameTimer = setTimeout(() => {
      this.frameTimer = undefined;
      this.fatal(`a message was not sent whole within ${this.frameTimeoutMs} ms`);
    }, this.frameTimeoutMs);
    this.frameTimer.unref();
  }

  private feed(chunk: Buffer): void {
    let data = chunk;
    while (data.length > 0 && !this.done) {
      this.startFrameTimer();
      if (this.bodyWanted < 0) {
        // Still reading a header: look for its end across what came so far.
        const seen = this.headerBytes;
        this.header.push(data);
        this.headerBytes += data.length;
        const all = this.header.length === 1 ? data : Buffer.concat(this.header, this.headerBytes);
        const end = all.indexOf(HEADER_END, Math.max(0, seen - 3));
        if (end < 0) {
          if (this.headerBytes > MAX_HEADER_BYTES) return this.fatal(`a message header longer than ${MAX_HEADER_BYTES} bytes`, PARSE_ERROR);
          this.header = [all];
          return;
        }
        if (end > MAX_HEADER_BYTES) return this.fatal(`a message header longer than ${MAX_HEADER_BYTES} bytes`, PARSE_ERROR);
        const length = this.parseHeader(all.subarray(0, end).toString('latin1'));
        if (length === undefined) return;
        data = all.subarray(end + HEADER_END.length);
        this.header = [];
        this.headerBytes = 0;
        if (held + length > MAX_HELD_BYTES) return this.fatal(`the host holds too many unread bytes already (${held} of ${MAX_HELD_BYTES}): a message of ${length} bytes was refused`);
        held += length;
        this.reserved = length;
        this.bodyWanted = length;
      }
      const n = Math.min(this.bodyWanted - this.bodyHave, data.length);
      if (n > 0) {
        this.body.push(data.subarray(0, n));
        this.bodyHave += n;
        data = data.subarray(n);
      }
      if (this.bodyHave === this.bodyWanted) {
        const body = Buffer.concat(this.body, this.bodyHave);
        this.clearFrame();
        this.deliver(body);
      }
    }
  }

  /** The body length a header announces; undefined (refused) when it is anything but a plain frame header. */
  private parseHeader(text: string): number | undefined {
    let length: number | undefined;
    let type = false;
    for (const line of text.split('\r\n')) {
      const m = /^([A-Za-z-]+):[ \t]*(.*?)[ \t]*$/.exec(line);
      if (!m) return void this.fatal(`a message header line that is not 'Name: value': ${JSON.stringify(line.slice(0, 80))}`, PARSE_ERROR);
      const name = m[1]!.toLowerCase();
      const value = m[2]!;
      if (name === 'content-length') {
        if (length !== undefined) return void this.fatal('a message header with Content-Length twice', PARSE_ERROR);
        if (!/^\d{1,15}$/.test(value)) return void this.fatal(`a Content-Length that is not a whole number: ${JSON.stringify(value.slice(0, 40))}`, PARSE_ERROR);
        length = Number(value);
      } else if (name === 'content-type') {
        if (type) return void this.fatal('a message header with Content-Type twice', PARSE_ERROR);
        type = true;
        const charset = /;\s*charset=([^;\s]+)/i.exec(value)?.[1]?.replace(/"/g, '').toLowerCase();
        if (charset && charset !== 'utf-8' && charset !== 'utf8') return void this.fatal(`a message in ${charset} (only utf-8 is read)`, PARSE_ERROR);
      } else {
        return void this.fatal(`a message header with a field other than Content-Length and Content-Type: ${JSON.stringify(m[1]!.slice(0, 40))}`, PARSE_ERROR);
      }
    }
    if (length === undefined) return void this.fatal('a message header without Content-Length', PARSE_ERROR);
    if (length > this.maxBytes) return void this.fatal(`a message of ${length} bytes (the limit is ${this.maxBytes})`);
    return length;
  }

  private deliver(body: Buffer): void {
    let msg: unknown;
    try {
      msg = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    } catch (e) {
      return this.refuse({ code: PARSE_ERROR, message: `a message that is not UTF-8 JSON (${e instanceof Error ? e.message : String(e)})`, id: null, fatal: false });
    }
    const why = invalidMessage(msg);
    if (why) {
      const rawId = (msg as { id?: unknown } | null)?.id;
      const id = typeof rawId === 'string' || (typeof rawId === 'number' && Number.isFinite(rawId)) ? rawId : null;
      return this.refuse({ code: INVALID_REQUEST, message: why, id, fatal: false });
    }
    this.callback?.(msg as Message);
  }
}

/** Why a parsed body is not a JSON-RPC 2.0 message this side reads; undefined when it is one. */
export function invalidMessage(msg: unknown): string | undefined {
  if (Array.isArray(msg)) return 'a batch (a JSON array): send one message per frame';
  if (typeof msg !== 'object' || msg === null) return `a message that is ${msg === null ? 'null' : `a ${typeof msg}`}, not a JSON-RPC object`;
  const m = msg as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return 'a message without "jsonrpc": "2.0"';
  if ('id' in m && !(m.id === null || typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id)))) return `an id that is ${Array.isArray(m.id) ? 'an array' : typeof m.id === 'object' ? 'an object' : `a ${typeof m.id}`} (a string, number or null only)`;
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method.length === 0) return 'a method that is not a non-empty string';
    if ('params' in m && m.params !== undefined && (typeof m.params !== 'object' || m.params === null)) return 'params that are neither an object nor an array';
    if ('result' in m || 'error' in m) return 'a message that is both a request and a response';
    return undefined;
  }
  if (!('id' in m)) return 'a message that is neither a request (no method) nor a response (no id)';
  if ('result' in m === 'error' in m) return 'a response with neither or both of result and error';
  if ('error' in m) {
    const e = m.error as Record<string, unknown> | null;
    if (typeof e !== 'object' || e === null || typeof e.code !== 'number' || typeof e.message !== 'string') return 'a response error without a numeric code and a message';
  }
  return undefined;
}

/** A JSON-RPC error message (for an answer written outside the connection's own queue). */
export function errorFrame(r: Pick<Refusal, 'code' | 'message' | 'id'>): Buffer {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: r.id, error: { code: r.code, message: r.message } }), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
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
