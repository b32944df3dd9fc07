/**
 * Background WAL checkpoints for long-lived processes (a mount server, the host). SQLite copies
 * the WAL back into the database, and syncs both, inside whichever commit passes the
 * autocheckpoint limit; that sync is most of the cost of a write. Here a worker thread with its
 * own connection runs PASSIVE checkpoints whenever the WAL has grown, so writers rarely pay for
 * it inline, and durability is unchanged (the checkpoint still syncs before it overwrites pages).
 */
import { dirname } from 'node:path';
import type { Worker } from 'node:worker_threads';
import type { Db } from './db';

/** Checkpoint while the WAL file is at least this large. */
const WAL_TRIGGER_BYTES = 16 * 1024 * 1024;
const POLL_MS = 50;
/** Left on the writer's own connection as a backstop, in case the worker falls behind. */
const BACKSTOP_PAGES = 65_536;

// Runs in the worker: while the WAL is large, checkpoint it; stop on a message.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma('busy_timeout = 1000');
const size = () => { try { return statSync(workerData.file + '-wal').size; } catch { return 0; } };
// A PASSIVE checkpoint with nothing left to copy returns at once; once a checkpoint has copied
// everything, the next write starts the WAL over from its beginning.
const timer = setInterval(() => {
  if (size() < workerData.trigger) return;
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {}
}, workerData.poll);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  Atomics.store(workerData.done, 0, 1);
  Atomics.notify(workerData.done, 0);
  parentPort.close();
});
`;

export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private readonly done = new Int32Array(new SharedArrayBuffer(4));
  private stopped = false;

  constructor(db: Db, file: string) {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    // Required here: only long-lived processes checkpoint in the background, and every CLI call
    // that opens a vault loads this module (node:worker_threads costs it ~0.5 ms).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Worker } = require('node:worker_threads') as typeof import('node:worker_threads');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, sqlite: dirname(require.resolve('better-sqlite3/package.json')), trigger: WAL_TRIGGER_BYTES, poll: POLL_MS, done: this.done },
    });
    this.worker.unref();
  }

  /**
   * Stops the worker and waits (synchronously, a few ms) until its connection is closed: a
   * connection torn down mid-checkpoint would leave SQLite's in-process lock counts behind.
   */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.worker.postMessage('stop');
    Atomics.wait(this.done, 0, 0, 5000);
  }
}
