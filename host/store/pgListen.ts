/**
 * Change events from PostgreSQL: every commit to a vault on a server sends `NOTIFY avfs_changes`
 * with the vault's id (host/store/postgres.ts), whichever machine made it. A long-lived process
 * (the vault host's change watcher) keeps one asynchronous connection per server that LISTENs,
 * and hears of another machine's writes as a local writer's touch of a vault file tells inotify.
 * A connection that breaks is made again after a pause (the server restarted); while it is
 * down, changes made elsewhere are told with the next one that is heard (the journal says all).
 */
import { AvfsError } from '../protocol/errors';
import { PG_CHANNEL } from './postgres';
import { readPgLink, redactUrl } from './pgLink';

export interface ListenedVault {
  /** The vault's name in this home. */
  name: string;
  /** Its link file. */
  file: string;
}

const RETRY_MS = 2000;

type PgClient = import('pg').Client;

/** One LISTEN connection to one server, for the vaults of this home on it. */
class ServerListener {
  private client: PgClient | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  /** Server vault id → names in this home. */
  private ids = new Map<string, string[]>();

  constructor(
    private readonly url: string,
    private vaults: Map<string, string>,
    private readonly onChange: (name: string) => void,
    private readonly log: (message: string) => void,
  ) {
    void this.connect();
  }

  /** The vaults (name in this home → name on the server) this connection tells about. */
  update(vaults: Map<string, string>): void {
    this.vaults = vaults;
    if (this.client) void this.resolveIds(this.client);
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pg = require('pg') as typeof import('pg');
    const c = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 10_000, application_name: 'avfs-listen' });
    c.on('error', (e) => this.broke(c, e));
    c.on('end', () => this.broke(c, new Error('the connection ended')));
    c.on('notification', (n) => {
      if (n.channel !== PG_CHANNEL || !n.payload) return;
      for (const name of this.ids.get(n.payload) ?? []) this.onChange(name);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${PG_CHANNEL}`);
      if (this.closed) return void c.end().catch(() => {});
      this.client = c;
      await this.resolveIds(c);
      // Whatever happened while not listening: each vault's journal is read once now.
      for (const name of this.vaults.keys()) this.onChange(name);
    } catch (e) {
      this.broke(c, e as Error);
    }
  }

  private async resolveIds(c: PgClient): Promise<void> {
    const byServerName = new Map<string, string[]>();
    for (const [name, remote] of this.vaults) byServerName.set(remote, [...(byServerName.get(remote) ?? []), name]);
    try {
      const r = await c.query<{ id: string; name: string }>('SELECT id::text AS id, name FROM avfs.vaults WHERE name = ANY($1)', [[...byServerName.keys()]]);
      this.ids = new Map(r.rows.map((row) => [row.id, byServerName.get(row.name) ?? []]));
    } catch (e) {
      this.log(`reading the vaults of ${redactUrl(this.url)} failed: ${(e as Error).message}`);
    }
  }

  private broke(c: PgClient, e: Error): void {
    if (this.client && this.client !== c) return;
    this.client = undefined;
    c.removeAllListeners('end');
    c.end().catch(() => {});
    if (this.closed || this.retry) return;
    this.log(`listening for changes on ${redactUrl(this.url)} failed: ${e.message}; trying again in ${RETRY_MS / 1000} s`);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect();
    }, RETRY_MS);
    this.retry.unref();
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    const c = this.client;
    this.client = undefined;
    if (c) {
      c.removeAllListeners('end');
      c.end().catch(() => {});
    }
  }
}

/** LISTEN connections for a home's vaults on servers, one per server URL; `sync` follows vaults coming and going. */
export class PgChangeListeners {
  private readonly servers = new Map<string, ServerListener>();

  constructor(
    private readonly onChange: (name: string) => void,
    private readonly log: (message: string) => void,
  ) {}

  /** Listens for exactly these vaults (the home's PostgreSQL vaults, now). */
  sync(vaults: readonly ListenedVault[]): void {
    const byUrl = new Map<string, Map<string, string>>();
    for (const v of vaults) {
      try {
        const link = readPgLink(v.file);
        if (!byUrl.has(link.url)) byUrl.set(link.url, new Map());
        byUrl.get(link.url)!.set(v.name, link.vault);
      } catch (e) {
        this.log(`vault ${v.name}: ${e instanceof AvfsError ? e.message : String(e)}`);
      }
    }
    for (const [url, l] of this.servers) {
      if (!byUrl.has(url)) {
        l.close();
        this.servers.delete(url);
      }
    }
    for (const [url, names] of byUrl) {
      const l = this.servers.get(url);
      if (l) l.update(names);
      else this.servers.set(url, new ServerListener(url, names, this.onChange, this.log));
    }
  }

  close(): void {
    for (const l of this.servers.values()) l.close();
    this.servers.clear();
  }
}
