/**
 * Open-file handles of a mount and their state machine:
 *
 *   Open ──write──▶ Dirty ──flush/fsync/full/read──▶ Persisting ──▶ Flushed ──write──▶ Dirty
 *     └──────────────release──────────────▶ Closed ◀──────release────────┘
 *
 * A handle buffers at most one contiguous run of written bytes (≤ HANDLE_BUFFER_MAX, and all
 * handles together ≤ TOTAL_BUFFER_MAX), so memory stays bounded whatever the file size. A persist
 * takes the run out of the handle *before* storing it: a write that arrives meanwhile starts a new
 * run (Persisting → Dirty) and is persisted by the next flush, so nothing is persisted twice and
 * nothing written is lost. Anything that observes an inode (read, getattr, truncate) persists that
 * inode's runs first, so every reader sees its own writes.
 */
import { AvfsError } from '../protocol/errors';

export enum HandleState {
  Open = 'open',
  Dirty = 'dirty',
  Persisting = 'persisting',
  Flushed = 'flushed',
  Closed = 'closed',
}

const LEGAL: Record<HandleState, readonly HandleState[]> = {
  [HandleState.Open]: [HandleState.Dirty, HandleState.Closed],
  [HandleState.Dirty]: [HandleState.Dirty, HandleState.Persisting],
  [HandleState.Persisting]: [HandleState.Flushed, HandleState.Dirty],
  [HandleState.Flushed]: [HandleState.Dirty, HandleState.Closed],
  [HandleState.Closed]: [],
};

export function canTransition(from: HandleState, to: HandleState): boolean {
  return LEGAL[from].includes(to);
}

export const HANDLE_BUFFER_MAX = 1024 * 1024;
export const TOTAL_BUFFER_MAX = 32 * 1024 * 1024;

export interface OpenFile {
  readonly fh: number;
  readonly ino: number;
  /** The path at open (the kernel passes the current one to each call). */
  path: string;
  readonly writable: boolean;
  state: HandleState;
  /** The buffered run: `pieces` (copies) written contiguously from `runOffset`. */
  runOffset: number;
  runLength: number;
  pieces: Buffer[];
  /** Bytes were persisted since the last journal entry for this handle. */
  unjournaled: boolean;
  /** Set while the inode has no name left (unlinked while open). */
  orphan: boolean;
}

/** Stores a run of bytes at an offset of an inode (one transaction). */
export type PersistFn = (ino: number, offset: number, data: Buffer, path: string) => void;

export class OpenFiles {
  private readonly handles = new Map<number, OpenFile>();
  private readonly byIno = new Map<number, Set<OpenFile>>();
  private nextFh = 1;
  private buffered = 0;
  /** Counts persists, for tests and the status line. */
  persists = 0;

  constructor(private readonly persistFn: PersistFn) {}

  get size(): number {
    return this.handles.size;
  }

  get bufferedBytes(): number {
    return this.buffered;
  }

  open(ino: number, path: string, writable: boolean): OpenFile {
    // fh 0 means "no handle" to the binding; wrap well below 2^31.
    if (this.nextFh >= 0x7fff_fff0) this.nextFh = 1;
    while (this.handles.has(this.nextFh)) this.nextFh++;
    const of: OpenFile = {
      fh: this.nextFh++,
      ino,
      path,
      writable,
      state: HandleState.Open,
      runOffset: 0,
      runLength: 0,
      pieces: [],
      unjournaled: false,
      orphan: false,
    };
    this.handles.set(of.fh, of);
    let set = this.byIno.get(ino);
    if (!set) this.byIno.set(ino, (set = new Set()));
    set.add(of);
    return of;
  }

  get(fh: number): OpenFile {
    const of = this.handles.get(fh);
    if (!of) throw new AvfsError('InvalidInput', `bad file handle ${fh}`, { fh });
    return of;
  }

  forIno(ino: number): Iterable<OpenFile> {
    return this.byIno.get(ino) ?? [];
  }

  isOpen(ino: number): boolean {
    return (this.byIno.get(ino)?.size ?? 0) > 0;
  }

  private move(of: OpenFile, to: HandleState): void {
    if (!canTransition(of.state, to)) {
      throw new AvfsError('Internal', `open file ${of.fh}: illegal transition ${of.state} → ${to}`, { fh: of.fh });
    }
    of.state = to;
  }

  /**
   * Takes a write. `data` is only valid during the FUSE callback, so it is copied. With `through`
   * (a quota is set) the bytes are persisted at once, so the writer itself gets EDQUOT.
   */
  write(of: OpenFile, offset: number, data: Buffer, through: boolean): void {
    // Writes reach the store in call order: runs buffered earlier by other handles on this inode
    // are persisted before this one is buffered, so an older run never lands over newer data.
    this.persistOthers(of);
    if (of.state === HandleState.Dirty && offset !== of.runOffset + of.runLength) this.persist(of);
    if (of.runLength > 0 && of.runLength + data.length > HANDLE_BUFFER_MAX) this.persist(of);
    if (this.buffered + data.length > TOTAL_BUFFER_MAX) this.persistAll();
    if (of.state !== HandleState.Dirty) {
      this.move(of, HandleState.Dirty);
      of.runOffset = offset;
    }
    of.pieces.push(Buffer.from(data));
    of.runLength += data.length;
    this.buffered += data.length;
    if (through || of.runLength >= HANDLE_BUFFER_MAX) this.persist(of);
  }

  /** Persists the handle's run, if any. Errors (EDQUOT, storage) propagate to the caller. */
  persist(of: OpenFile): void {
    if (of.state !== HandleState.Dirty) return;
    this.move(of, HandleState.Persisting);
    // Take the run first: a write arriving during the persist starts a fresh run.
    const pieces = of.pieces;
    const offset = of.runOffset;
    const length = of.runLength;
    of.pieces = [];
    of.runLength = 0;
    this.buffered -= length;
    try {
      const data = pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, length);
      this.persistFn(of.ino, offset, data, of.path);
      this.persists++;
      of.unjournaled = true;
    } finally {
      // A failed run is reported to the caller (flush/close return the errno), not retried.
      if ((of.state as HandleState) === HandleState.Persisting) this.move(of, of.runLength > 0 ? HandleState.Dirty : HandleState.Flushed);
    }
  }

  /** Persists every handle on `ino` (before anything reads or resizes it). */
  persistIno(ino: number): void {
    const set = this.byIno.get(ino);
    if (!set) return;
    for (const of of set) this.persist(of);
  }

  /** Persists the runs of the other handles on `of`'s inode (not `of`'s own). */
  private persistOthers(of: OpenFile): void {
    const set = this.byIno.get(of.ino);
    if (!set || set.size < 2) return;
    for (const other of set) if (other !== of) this.persist(other);
  }

  persistAll(): void {
    let first: unknown;
    for (const of of this.handles.values()) {
      try {
        this.persist(of);
      } catch (e) {
        first ??= e;
      }
    }
    if (first !== undefined) throw first;
  }

  /** Closes a handle (after the caller persisted it); returns whether it was the inode's last. */
  close(of: OpenFile): boolean {
    if (of.state === HandleState.Dirty) this.persist(of);
    this.move(of, HandleState.Closed);
    this.handles.delete(of.fh);
    const set = this.byIno.get(of.ino);
    set?.delete(of);
    if (set && set.size === 0) {
      this.byIno.delete(of.ino);
      return true;
    }
    return false;
  }

  all(): IterableIterator<OpenFile> {
    return this.handles.values();
  }
}
