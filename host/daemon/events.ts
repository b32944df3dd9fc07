/**
 * Vault change events. Every mutation, whichever surface made it (the CLI, a mount server, an
 * exec, the host), is a row in its vault's journal and a write to the vault's WAL file. The host
 * watches the vaults directory (inotify), reads each touched vault's journal past the last
 * sequence number it saw, and sends one batched `vault/changed` per vault. Vault files appearing
 * or disappearing are `created` / `deleted`. Nothing polls. A vault on PostgreSQL is written from
 * other machines too, which touch no file here: the watcher LISTENs on each server of the home's
 * vaults (host/store/pgListen.ts), and a notification marks its vault as a touched file does.
 */
import { existsSync, type FSWatcher, watch } from 'node:fs';
import { backendOfFile } from '../store/engine';
import type { AvfsHome } from '../store/home';
import type { PgChangeListeners } from '../store/pgListen';
import { VAULT_EXT } from '../store/home';
import type { Vault } from '../store/vault';

export interface VaultChangeNotice {
  vault: string;
  kind: 'files' | 'created' | 'deleted';
  changes: Array<{ seq: number; op: string; path: string | null; path2: string | null; surface: string }>;
  truncated: boolean;
}

/** Changes read per vault per notice; more than this and the notice says `truncated`. */
const MAX_PER_NOTICE = 1000;
/** Looks at a vault whose file changed with nothing new in its journal yet (see recheckLater). */
const RECHECKS = 3;
/**
 * How long a new vault file that does not read as a vault yet is waited for before it is told
 * anyway. Its creator claims the file, then loads the store and writes the schema: on a loaded
 * machine that takes far longer than the rechecks' 75 ms, and telling it early meant reading it
 * half made, and logging that as a failure.
 */
const NEW_VAULT_PATIENCE_MS = 10_000;
/** How often such a file is looked at again while it is waited for. */
const NEW_VAULT_LOOK_MS = 50;

export class ChangeWatcher {
  private watcher: FSWatcher | undefined;
  private readonly lastSeq = new Map<string, number>();
  private readonly open = new Map<string, Vault>();
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  /** When the last notice went out. A look that finds nothing new (the first bytes of a commit still being written) does not count. */
  private lastFlush = -Infinity;
  /** Vaults whose last look found nothing new, with how many more looks they had. */
  private readonly rechecks = new Map<string, number>();
  /** New vault files that do not read as vaults yet, with when each was first seen. */
  private readonly unborn = new Map<string, number>();
  /** LISTEN connections to the servers of the home's PostgreSQL vaults (made when there is one). */
  private servers: PgChangeListeners | undefined;

  constructor(
    private readonly home: AvfsHome,
    private readonly send: (n: VaultChangeNotice) => void,
    private readonly log: (message: string) => void,
    /**
     * At most one notice per vault this often: a change after a quiet spell is told at once, the
     * rest of a burst is gathered into the next notice.
     */
    private readonly batchMs = 25,
  ) {}

  start(): void {
    this.home.ensure();
    for (const name of this.home.names()) this.lastSeq.set(name, this.maxSeq(name));
    this.watcher = watch(this.home.vaultsDir, (_event, file) => {
      if (!file) return;
      const name = vaultOf(file.toString());
      if (name !== undefined) this.touched(name);
    });
    this.watcher.on('error', (e) => this.log(`watching ${this.home.vaultsDir} failed: ${e.message}`));
    this.listenToServers();
  }

  /** A vault changed (its file here, or a notification from its server): told with the next batch. */
  private touched(name: string): void {
    this.dirty.add(name);
    this.timer ??= setTimeout(() => this.flush(), Math.max(0, this.lastFlush + this.batchMs - performance.now()));
  }

  /** Follows the home's PostgreSQL vaults: one LISTEN connection per server they are on. */
  private listenToServers(): void {
    const pg = this.home.names().filter((name) => backendOfFile(this.home.vaultFile(name)) === 'postgres');
    if (pg.length === 0 && !this.servers) return;
    if (!this.servers) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { PgChangeListeners } = require('../store/pgListen') as typeof import('../store/pgListen');
      this.servers = new PgChangeListeners((name) => this.touched(name), this.log);
    }
    this.servers.sync(pg.map((name) => ({ name, file: this.home.vaultFile(name) })));
  }

  private emit(n: VaultChangeNotice): void {
    this.lastFlush = performance.now();
    if (n.kind !== 'files') this.listenToServers();
    this.send(n);
  }

  stop(): void {
    this.servers?.close();
    this.servers = undefined;
    this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
    for (const v of this.open.values()) v.close();
    this.open.clear();
    this.unborn.clear();
  }

  /** Reads what changed in every touched vault and sends the notices. */
  flush(): void {
    this.timer = undefined;
    const names = [...this.dirty];
    this.dirty.clear();
    for (const name of names) {
      try {
        const seen = this.check(name);
        if (seen === 'told') this.rechecks.delete(name);
        else if (seen === 'nothing') this.recheckLater(name);
        else this.lookAgain(name, NEW_VAULT_LOOK_MS);
      } catch (e) {
        this.log(`reading the journal of ${name} failed: ${e instanceof Error ? e.message : String(e)}`);
        this.forget(name);
      }
    }
  }

  /**
   * A vault file changed but its journal shows nothing new yet: the writer may be between writing
   * its commit to the WAL (the write that woke us) and publishing it in the WAL index (shared
   * memory, which wakes no one). Look again a few times, so the last change of a burst is never
   * left untold until some later write.
   */
  private recheckLater(name: string): void {
    const done = this.rechecks.get(name) ?? 0;
    if (done >= RECHECKS) {
      this.rechecks.delete(name);
      return;
    }
    this.rechecks.set(name, done + 1);
    this.lookAgain(name, this.batchMs);
  }

  private lookAgain(name: string, afterMs: number): void {
    this.dirty.add(name);
    this.timer ??= setTimeout(() => this.flush(), afterMs);
  }

  /**
   * Sends what changed in a vault: `told` when a notice went out (or none was due), `nothing` when
   * its journal held nothing new, `unborn` when it is a new file that does not read as a vault yet.
   */
  private check(name: string): 'told' | 'nothing' | 'unborn' {
    const known = this.lastSeq.has(name);
    if (!existsSync(this.home.vaultFile(name))) {
      this.unborn.delete(name);
      if (known) {
        this.forget(name);
        this.emit({ vault: name, kind: 'deleted', changes: [], truncated: false });
      }
      return 'told';
    }
    if (!known) {
      // A new vault (created, forked, or copied in): everything in its journal so far is its creation.
      // Its creator claims the file before it writes the schema: until the vault reads, look again
      // rather than tell it, and fail on it, half made. A file that never reads as a vault is told
      // once the patience runs out, and its later reads fail as any damaged vault's do.
      const seq = this.readableSeq(name);
      if (seq === undefined) {
        const first = this.unborn.get(name) ?? performance.now();
        this.unborn.set(name, first);
        if (performance.now() - first < NEW_VAULT_PATIENCE_MS) return 'unborn';
      }
      this.unborn.delete(name);
      this.lastSeq.set(name, seq ?? 0);
      this.emit({ vault: name, kind: 'created', changes: [], truncated: false });
      return 'told';
    }
    const since = this.lastSeq.get(name) ?? 0;
    const rows = this.vault(name)
      .journal.after(since, MAX_PER_NOTICE + 1)
      .map(({ seq, op, path, path2, surface }) => ({ seq, op, path, path2, surface }));
    if (rows.length === 0) return 'nothing';
    const truncated = rows.length > MAX_PER_NOTICE;
    const changes = rows.slice(0, MAX_PER_NOTICE);
    this.lastSeq.set(name, truncated ? this.maxSeq(name) : changes[changes.length - 1]!.seq);
    this.emit({ vault: name, kind: 'files', changes, truncated });
    return 'told';
  }

  private vault(name: string): Vault {
    let v = this.open.get(name);
    if (!v || !v.store.isOpen) {
      v = this.home.open(name, { readonly: true });
      this.open.set(name, v);
    }
    return v;
  }

  private maxSeq(name: string): number {
    return this.readableSeq(name) ?? 0;
  }

  /** The vault's last journal seq, or undefined while it does not read as a vault. */
  private readableSeq(name: string): number | undefined {
    try {
      return this.vault(name).journal.maxSeq();
    } catch {
      this.open.get(name)?.close();
      this.open.delete(name);
      return undefined;
    }
  }

  private forget(name: string): void {
    this.open.get(name)?.close();
    this.open.delete(name);
    this.lastSeq.delete(name);
  }
}

function vaultOf(file: string): string | undefined {
  for (const suffix of ['-wal', '-shm', '-journal', '']) {
    if (file.endsWith(VAULT_EXT + suffix)) return file.slice(0, file.length - VAULT_EXT.length - suffix.length);
  }
  return undefined;
}
