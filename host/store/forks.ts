/**
 * Forks as backing vaults (the qcow2 way): a fork's file holds its own copy of the tree's
 * metadata and the chunks written since; chunks it does not hold are read from its parent, then
 * the parent's parent. So a fork costs O(metadata), whatever the bytes. A parent keeps every chunk
 * that any descendant still references (gc asks them), and cannot be deleted while forks depend on
 * it unless it is flattened into them first.
 */
import { AvfsError } from '../protocol/errors';
import type { ChunkFallback } from './chunks';
import { type Db, openDb, readTxn, tableNames, writeTxn } from './db';
import { childrenOf, descendantsOf, FORK_KEY_PREFIX, parentOf } from './forkLinks';
import type { AvfsHome } from './home';
import type { Vault } from './vault';

/** Reads chunks from a vault's ancestors, nearest first, opening each file lazily and read-only. */
export class AncestorChunks implements ChunkFallback {
  private readonly open: Array<{ name: string; db: Db; get: (h: Buffer) => { data: Buffer } | undefined }> = [];
  private nextName: string | null;

  constructor(
    private readonly home: AvfsHome,
    parent: string,
  ) {
    this.nextName = parent;
  }

  getChunk(hash: Buffer): Buffer | undefined {
    for (let i = 0; ; i++) {
      if (i === this.open.length && !this.openNext()) return undefined;
      const hit = this.open[i]!.get(hash);
      if (hit) return hit.data;
    }
  }

  private openNext(): boolean {
    const name = this.nextName;
    if (name === null) return false;
    if (this.open.some((a) => a.name === name) || this.open.length > 64) {
      throw new AvfsError('StorageError', `fork ancestry loops or is too deep at ${name}`, { vault: name });
    }
    let db: Db;
    try {
      db = openDb(this.home.vaultFile(name), { readonly: true, olderSchemaOk: true });
    } catch (e) {
      throw new AvfsError('StorageError', `fork parent ${name} cannot be opened: ${(e as Error).message}`, { vault: name });
    }
    const stmt = db.prepare<[Buffer], { data: Buffer }>('SELECT data FROM chunks WHERE hash = ?');
    this.open.push({ name, db, get: (h) => stmt.get(h) });
    this.nextName = (db.prepare("SELECT value FROM meta WHERE key = 'parent'").get() as { value: string } | undefined)?.value ?? null;
    return true;
  }

  close(): void {
    for (const a of this.open) a.db.close();
    this.open.length = 0;
  }
}

/** Every chunk hash a vault references, from its live tree and its checkpoints, in one snapshot. */
export function referencedHashes(home: AvfsHome, name: string): Buffer[] {
  const db = openDb(home.vaultFile(name), { readonly: true, olderSchemaOk: true });
  try {
    // Checkpoints (cp_extents) came with schema 2.
    const sql = tableNames(db).has('cp_extents') ? 'SELECT hash FROM extents UNION SELECT hash FROM cp_extents' : 'SELECT hash FROM extents';
    return readTxn(db, () => (db.prepare(sql).all() as Array<{ hash: Buffer }>).map((r) => r.hash));
  } finally {
    db.close();
  }
}

/** Every chunk hash that `name`'s descendants reference (what its gc must keep for them); fails closed. */
export function descendantRefs(home: AvfsHome, name: string): Buffer[] {
  return descendantsOf(home, name).flatMap((d) => referencedHashes(home, d));
}

const COPIED_TABLES = ['inodes', 'dentries', 'symlinks', 'extents', 'counters'];

/**
 * A vault made from a project names a base checkpoint (`base.checkpoint`, host/project/base.ts): the
 * fork gets a copy of that one (no other checkpoint), so it has the same base and can be applied.
 */
function copyBaseCheckpoint(db: Db): void {
  const names = db.prepare("SELECT DISTINCT value FROM src.meta WHERE key IN ('base.checkpoint', 'base.git_checkpoint')").all() as Array<{ value: string }>;
  for (const { value: name } of names) {
    const id = (db.prepare('SELECT id FROM src.checkpoints WHERE name = ?').get(name) as { id: number } | undefined)?.id;
    if (id === undefined) continue;
    db.prepare('INSERT INTO main.checkpoints SELECT * FROM src.checkpoints WHERE id = ?').run(id);
    for (const t of ['cp_inodes', 'cp_dentries', 'cp_symlinks', 'cp_extents']) db.prepare(`INSERT INTO main.${t} SELECT * FROM src.${t} WHERE cp = ?`).run(id);
  }
}

/**
 * Creates `name` as a fork of `source`: a new vault file with a copy of the source's tree
 * metadata and quotas, reading the source's chunks through its parent link.
 */
export function forkVault(home: AvfsHome, source: string, name: string): Vault {
  const src = home.open(source);
  src.close();
  const fork = home.create(name);
  try {
    const db = fork.db;
    db.prepare('ATTACH DATABASE ? AS src').run(home.vaultFile(source));
    try {
      writeTxn(db, () => {
        // Writing to the source takes its write lock, so its gc cannot run between this copy and
        // the commit that records the parent link.
        // The source also records the fork, so its gc knows its forks even when one cannot be read.
        db.prepare('INSERT OR REPLACE INTO src.meta (key, value) VALUES (?, ?)').run(FORK_KEY_PREFIX + name, new Date().toISOString());
        for (const t of COPIED_TABLES) {
          db.exec(`DELETE FROM main.${t}`);
          db.exec(`INSERT INTO main.${t} SELECT * FROM src.${t}`);
        }
        db.exec("INSERT OR REPLACE INTO main.meta SELECT key, value FROM src.meta WHERE key LIKE 'quota.%' OR key LIKE 'policy.%' OR (key LIKE 'base.%' AND key != 'base.journal_seq')");
        copyBaseCheckpoint(db);
        db.prepare("INSERT OR REPLACE INTO main.meta (key, value) VALUES ('parent', ?), ('forked_at', ?)").run(source, new Date().toISOString());
        fork.journal.append('fork_create', null, { details: { source } });
      });
    } finally {
      db.exec('DETACH DATABASE src');
    }
    fork.attachAncestors(new AncestorChunks(home, source));
    return fork;
  } catch (e) {
    fork.close();
    home.removeFiles(name);
    throw e;
  }
}

/**
 * Makes `name`'s forks independent of it: each direct fork receives the chunks that it (or its
 * own forks) reference and that only `name` holds, then points at `name`'s parent instead.
 */
export function flattenInto(home: AvfsHome, name: string): string[] {
  const children = childrenOf(home, name);
  const grandparent = parentOf(home, name);
  // The grandparent records its new forks first: an extra record only makes its gc keep more.
  if (grandparent !== null && children.length > 0) {
    const g = home.open(grandparent);
    try {
      writeTxn(g.db, () => {
        for (const child of children) g.setMeta(FORK_KEY_PREFIX + child, new Date().toISOString());
      });
    } finally {
      g.close();
    }
  }
  for (const child of children) {
    const needed = new Set<string>();
    for (const v of [child, ...descendantsOf(home, child)]) for (const h of referencedHashes(home, v)) needed.add(h.toString('hex'));
    const c = home.open(child);
    try {
      c.db.prepare('ATTACH DATABASE ? AS par').run(home.vaultFile(name));
      try {
        writeTxn(c.db, () => {
          c.db.exec('CREATE TEMP TABLE IF NOT EXISTS flatten_need (hash BLOB PRIMARY KEY) WITHOUT ROWID');
          c.db.exec('DELETE FROM flatten_need');
          const ins = c.db.prepare('INSERT OR IGNORE INTO flatten_need (hash) VALUES (?)');
          for (const h of needed) ins.run(Buffer.from(h, 'hex'));
          c.db.exec('INSERT OR IGNORE INTO main.chunks (hash, data) SELECT p.hash, p.data FROM par.chunks p JOIN flatten_need n ON n.hash = p.hash');
          c.db.exec('DELETE FROM flatten_need');
          c.setMeta('parent', grandparent);
          c.journal.append('fork_flatten', null, { details: { from: name, new_parent: grandparent } });
        });
      } finally {
        c.db.exec('DETACH DATABASE par');
      }
    } finally {
      c.close();
    }
  }
  return children;
}
