/**
 * Bounded capture of one output stream: keeps the first half and the last half of the budget and
 * counts everything, so a command that floods its output never grows memory past the budget.
 */
import { TextDecoder } from 'node:util';

export interface Captured {
  text: string;
  bytes: number;
  truncated: boolean;
}

export class HeadTailCapture {
  private readonly headCap: number;
  private readonly tailCap: number;
  private readonly head: Buffer[] = [];
  private headLen = 0;
  /** The newest bytes once the head is full, oldest first; at most `tailCap` bytes in all. */
  private readonly tail: Buffer[] = [];
  private tailLen = 0;
  total = 0;

  constructor(maxBytes: number) {
    this.headCap = Math.ceil(maxBytes / 2);
    this.tailCap = maxBytes - this.headCap;
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    let data = chunk;
    if (this.headLen < this.headCap) {
      const n = Math.min(data.length, this.headCap - this.headLen);
      this.head.push(Buffer.from(data.subarray(0, n)));
      this.headLen += n;
      data = data.subarray(n);
    }
    if (data.length === 0 || this.tailCap === 0) return;
    if (data.length > this.tailCap) data = data.subarray(data.length - this.tailCap);
    this.tail.push(Buffer.from(data));
    this.tailLen += data.length;
    while (this.tailLen > this.tailCap) {
      const first = this.tail[0]!;
      const over = this.tailLen - this.tailCap;
      if (first.length <= over) {
        this.tail.shift();
        this.tailLen -= first.length;
      } else {
        this.tail[0] = first.subarray(over);
        this.tailLen -= over;
      }
    }
  }

  get truncated(): boolean {
    return this.total > this.headLen + this.tailLen;
  }

  /** The kept bytes as text (invalid UTF-8 replaced); a truncated stream says how much was left out. */
  result(): Captured {
    const head = Buffer.concat(this.head);
    const tail = Buffer.concat(this.tail);
    if (!this.truncated) return { text: new TextDecoder().decode(Buffer.concat([head, tail])), bytes: this.total, truncated: false };
    const skipped = this.total - head.length - tail.length;
    const text = `${new TextDecoder().decode(head)}\n[… avfs: ${skipped} bytes of output left out …]\n${new TextDecoder().decode(tail)}`;
    return { text, bytes: this.total, truncated: true };
  }
}
