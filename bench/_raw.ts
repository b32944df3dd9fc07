/**
 * The raw better-sqlite3 design the store's small operations are held against (issue 24: within
 * 1.5× of it): the same model (directories of named entries pointing at inodes, content in the
 * database) written by hand with nothing else. One table of inodes with the content inline, one of
 * entries keyed by (parent, name); every statement prepared once; a path resolved by one indexed
 * lookup per component; one BEGIN IMMEDIATE … COMMIT per write and
 * one BEGIN … COMMIT per read (one snapshot, and faster than a statement's own); the same pragmas as a vault (WAL,
 * synchronous=NORMAL, 8 KiB pages) and the same WAL checkpoints on a background thread as a
 * vault's long-lived process (host/store/checkpointer.ts). No journal, quotas, chunking,
 * vault checkpoints or error kinds: what the store adds over this is its overhead.
 */
import Database from 'better-sqlite3';
import { BackgroundCheckpointer } from '../host/store/checkpointer';

const ROOT = 1;

/** Read with SQLite's 64-bit integers as BigInt (mtime is in nanoseconds). */
export interface RawStat {
  ino: bigint;
  mode: bigint;
  size: bigint;
  mtime: bigint;
}

export class RawStore {
  private readonly db: Database.Database;
  private readonly lookupStmt: Database.Statement<[number, string], { ino: number; mode: number }>;
  private readonly statStmt: Database.Statement<[number], RawStat>;
  private readonly dataStmt: Database.Statement<[number], Buffer>;
  private readonly insInode: Database.Statement<[number, number, Buffer, bigint, bigint]>;
  private readonly insEntry: Database.Statement<[number, string, number | bigint]>;
  private readonly setData: Database.Statement<[Buffer, number, bigint, bigint, number]>;
  private readonly touchDir: Database.Statement<[bigint, bigint, number]>;
  private readonly begin: Database.Statement;
  private readonly beginRead: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  private readonly checkpointer: BackgroundCheckpointer;

  constructor(file: string) {
    const db = new Database(file);
    db.pragma('page_size = 8192');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(`
      CREATE TABLE IF NOT EXISTS inodes (ino INTEGER PRIMARY KEY, mode INTEGER NOT NULL, size INTEGER NOT NULL,
        mtime INTEGER NOT NULL, ctime INTEGER NOT NULL, nlink INTEGER NOT NULL DEFAULT 1, data BLOB);
      CREATE TABLE IF NOT EXISTS entries (parent INTEGER NOT NULL, name TEXT NOT NULL, ino INTEGER NOT NULL,
        PRIMARY KEY (parent, name)) WITHOUT ROWID;
      INSERT OR IGNORE INTO inodes (ino, mode, size, mtime, ctime, nlink) VALUES (1, 16877, 0, 0, 0, 2);
    `);
    db.defaultSafeIntegers(false);
    this.db = db;
    this.lookupStmt = db.prepare('SELECT e.ino, i.mode FROM entries e JOIN inodes i ON i.ino = e.ino WHERE e.parent = ? AND e.name = ?');
    this.statStmt = db.prepare('SELECT ino, mode, size, mtime FROM inodes WHERE ino = ?');
    this.statStmt.safeIntegers(true);
    this.dataStmt = db.prepare<[number], Buffer>('SELECT data FROM inodes WHERE ino = ?').pluck();
    this.insInode = db.prepare('INSERT INTO inodes (mode, size, data, mtime, ctime) VALUES (?, ?, ?, ?, ?)');
    this.insEntry = db.prepare('INSERT INTO entries (parent, name, ino) VALUES (?, ?, ?)');
    this.setData = db.prepare('UPDATE inodes SET data = ?, size = ?, mtime = ?, ctime = ? WHERE ino = ?');
    this.touchDir = db.prepare('UPDATE inodes SET mtime = ?, ctime = ? WHERE ino = ?');
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.beginRead = db.prepare('BEGIN');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.checkpointer = new BackgroundCheckpointer(db, file);
  }

  close(): void {
    this.checkpointer.stop();
    this.db.close();
  }

  private resolve(parts: string[]): number {
    let ino = ROOT;
    for (const name of parts) {
      const e = this.lookupStmt.get(ino, name);
      if (!e) throw new Error(`ENOENT: ${parts.join('/')}`);
      ino = e.ino;
    }
    return ino;
  }

  private tx<T>(fn: () => T, read = false): T {
    (read ? this.beginRead : this.begin).run();
    try {
      const r = fn();
      this.commit.run();
      return r;
    } catch (e) {
      this.rollback.run();
      throw e;
    }
  }

  mkdir(path: string): void {
    const parts = path.split('/').filter(Boolean);
    const name = parts.pop()!;
    this.tx(() => {
      const parent = this.resolve(parts);
      const now = process.hrtime.bigint();
      const ino = this.insInode.run(16877, 0, Buffer.alloc(0), now, now).lastInsertRowid;
      this.insEntry.run(parent, name, ino);
      this.touchDir.run(now, now, parent);
    });
  }

  writeFile(path: string, data: Buffer): void {
    const parts = path.split('/').filter(Boolean);
    const name = parts.pop()!;
    this.tx(() => {
      const parent = this.resolve(parts);
      const now = process.hrtime.bigint();
      const existing = this.lookupStmt.get(parent, name);
      if (existing) {
        this.setData.run(data, data.length, now, now, existing.ino);
        return;
      }
      const ino = this.insInode.run(0o100644, data.length, data, now, now).lastInsertRowid;
      this.insEntry.run(parent, name, ino);
      this.touchDir.run(now, now, parent);
    });
  }

  readFile(path: string): Buffer {
    return this.tx(() => this.dataStmt.get(this.resolve(path.split('/').filter(Boolean)))!, true);
  }

  stat(path: string): RawStat {
    return this.tx(() => this.statStmt.get(this.resolve(path.split('/').filter(Boolean)))!, true);
  }
}
