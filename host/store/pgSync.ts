/**
 * A synchronous PostgreSQL connection: npm `pg` (asynchronous) runs in a worker thread, and each
 * call posts one request and blocks on `Atomics.wait` over a `SharedArrayBuffer` until the worker
 * has the reply, which it then takes with `receiveMessageOnPort` (docs/architecture.md, "Storage
 * backends"). One request is one simple-protocol query string, which may hold several statements:
 * one round trip to the server, whatever it holds.
 *
 * The worker reconnects on the next request after its connection broke (a server restart), so a
 * vault that lost its server answers `StorageError` until the server is back, then works again.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { AvfsError } from '../protocol/errors';
import { redactUrl } from './pgLink';

/** The worker's code (CommonJS, eval'd): `pg` is required from the path the main thread resolved. */
const WORKER = `
const { workerData } = require('node:worker_threads');
const pg = require(workerData.pgPath);
const { port, flag, url } = workerData;
// As libpq: an empty PGPASSWORD is no password (then ~/.pgpass is read).
if (process.env.PGPASSWORD === '') delete process.env.PGPASSWORD;
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));
let client;
let broken = false;
async function connection() {
  if (client && !broken) return client;
  if (client) client.end().catch(() => {});
  broken = false;
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10000, application_name: 'avfs' });
  c.on('error', () => { broken = true; });
  await c.connect();
  // Values are sent as literals (host/store/postgres.ts): backslashes must stay plain characters.
  await c.query("SET standard_conforming_strings = on; SET client_encoding = 'UTF8'");
  client = c;
  return c;
}
function reply(msg) {
  port.postMessage(msg);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
}
port.on('message', async (req) => {
  if (req.close) {
    if (client) await client.end().catch(() => {});
    client = undefined;
    reply({ ok: true });
    return;
  }
  try {
    const c = await connection();
    const res = await c.query(req.sql);
    const list = Array.isArray(res) ? res : [res];
    reply({ ok: true, results: list.map((r) => ({ rows: r.rows, count: r.rowCount })) });
  } catch (e) {
    if (!e || !e.code || /^08|^57P/.test(e.code)) broken = true;
    reply({ ok: false, message: String((e && e.message) || e), code: e && e.code });
  }
});
`;

export interface Result {
  rows: Array<Record<string, unknown>>;
  count: number;
}

/** How long one request may take before the vault answers StorageError (a server that hangs). */
const TIMEOUT_MS = 120_000;

export class PgError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export class SyncPg {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly flag: Int32Array;
  private closed = false;
  /** Requests sent (round trips) by this connection, and by every one of this process. */
  trips = 0;
  static trips = 0;

  constructor(readonly url: string) {
    const channel = new MessageChannel();
    this.flag = new Int32Array(new SharedArrayBuffer(4));
    this.port = channel.port1;
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: { pgPath: require.resolve('pg'), port: channel.port2, flag: this.flag, url },
      transferList: [channel.port2],
    });
    this.worker.unref();
    this.port.unref();
  }

  /** Runs `sql` (one or more statements) in one round trip; the results of each statement. */
  query(sql: string): Result[] {
    if (this.closed) throw new AvfsError('Internal', 'the PostgreSQL connection of this vault is closed');
    this.trips++;
    SyncPg.trips++;
    Atomics.store(this.flag, 0, 0);
    this.port.postMessage({ sql });
    const r = this.await();
    if (!r.ok) throw new PgError(r.message ?? 'failed', r.code);
    return r.results ?? [];
  }

  private await(): { ok: boolean; results?: Result[]; message?: string; code?: string } {
    if (Atomics.wait(this.flag, 0, 0, TIMEOUT_MS) === 'timed-out') {
      this.close();
      throw new PgError(`PostgreSQL at ${redactUrl(this.url)} did not answer within ${TIMEOUT_MS / 1000} s`, 'timeout');
    }
    const m = receiveMessageOnPort(this.port);
    if (!m) throw new AvfsError('Internal', 'the PostgreSQL worker woke without a reply');
    return m.message as { ok: boolean; results?: Result[]; message?: string; code?: string };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      Atomics.store(this.flag, 0, 0);
      this.port.postMessage({ close: true });
      Atomics.wait(this.flag, 0, 0, 2000);
    } finally {
      void this.worker.terminate();
      this.port.close();
    }
  }
}
