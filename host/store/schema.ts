/**
 * The vault file's schema, as an ordered list of migrations. `PRAGMA user_version` holds the
 * number of migrations applied; opening a vault applies the missing ones in one transaction.
 */
export const CHUNK_SIZE = 64 * 1024;
export const ROOT_INO = 1;
/**
 * Pieces of content up to this size are kept in their extent row (`extents.data`, schema 6) on
 * SQLite instead of the chunk table: a small file's create or read touches one content row, not an
 * extent row plus a chunk row and the chunk table's hash index. Rows up to ~2 KiB stay on their
 * B-tree leaf (8 KiB pages); to 4 KiB they take one overflow page, still one page less than a chunk.
 */
export const INLINE_MAX = 4096;
/** The schema version that brought inline pieces (the migration below that adds `extents.data`). */
export const INLINE_PIECES_SCHEMA = 6;

export const MIGRATIONS: readonly string[] = [
  // 1: inodes, directory entries, symlinks, content-addressed chunks, counters, journal.
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE inodes (
    ino INTEGER PRIMARY KEY,
    mode INTEGER NOT NULL,
    uid INTEGER NOT NULL,
    gid INTEGER NOT NULL,
    nlink INTEGER NOT NULL,
    size INTEGER NOT NULL,
    atime_s INTEGER NOT NULL, atime_ns INTEGER NOT NULL,
    mtime_s INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_s INTEGER NOT NULL, ctime_ns INTEGER NOT NULL
  );
  CREATE TABLE dentries (
    parent INTEGER NOT NULL,
    name TEXT NOT NULL,
    ino INTEGER NOT NULL,
    PRIMARY KEY (parent, name)
  ) WITHOUT ROWID;
  CREATE INDEX dentries_by_ino ON dentries(ino); -- dropped again in 3
  CREATE TABLE symlinks (ino INTEGER PRIMARY KEY, target TEXT NOT NULL);
  -- extent idx covers bytes [idx*chunk_size, (idx+1)*chunk_size); a missing extent reads as zeros
  CREATE TABLE extents (
    ino INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    hash BLOB NOT NULL,
    PRIMARY KEY (ino, idx)
  ) WITHOUT ROWID;
  CREATE TABLE chunks (hash BLOB PRIMARY KEY, data BLOB NOT NULL);
  -- live totals kept in step with every mutation so quota checks are O(1)
  CREATE TABLE counters (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    live_bytes INTEGER NOT NULL,
    live_inodes INTEGER NOT NULL,
    next_ino INTEGER NOT NULL
  );
  CREATE TABLE journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    ts_ms INTEGER NOT NULL,
    op TEXT NOT NULL,
    path TEXT,
    path2 TEXT,
    size INTEGER,
    surface TEXT NOT NULL,
    details TEXT
  );
  `,
  // 2: checkpoints — a copy of the tree's metadata (inodes, entries, symlinks, extents), never of bytes.
  `
  CREATE TABLE checkpoints (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL,
    description TEXT,
    auto INTEGER NOT NULL DEFAULT 0,
    file_count INTEGER NOT NULL,
    total_bytes INTEGER NOT NULL,
    journal_seq INTEGER NOT NULL
  );
  CREATE TABLE cp_inodes (
    cp INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    mode INTEGER NOT NULL, uid INTEGER NOT NULL, gid INTEGER NOT NULL, nlink INTEGER NOT NULL, size INTEGER NOT NULL,
    atime_s INTEGER NOT NULL, atime_ns INTEGER NOT NULL,
    mtime_s INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_s INTEGER NOT NULL, ctime_ns INTEGER NOT NULL,
    PRIMARY KEY (cp, ino)
  ) WITHOUT ROWID;
  CREATE TABLE cp_dentries (
    cp INTEGER NOT NULL, parent INTEGER NOT NULL, name TEXT NOT NULL, ino INTEGER NOT NULL,
    PRIMARY KEY (cp, parent, name)
  ) WITHOUT ROWID;
  CREATE TABLE cp_symlinks (cp INTEGER NOT NULL, ino INTEGER NOT NULL, target TEXT NOT NULL, PRIMARY KEY (cp, ino)) WITHOUT ROWID;
  CREATE TABLE cp_extents (
    cp INTEGER NOT NULL, ino INTEGER NOT NULL, idx INTEGER NOT NULL, hash BLOB NOT NULL,
    PRIMARY KEY (cp, ino, idx)
  ) WITHOUT ROWID;
  `,
  // 3: cheaper small writes: the journal's sequence no longer needs AUTOINCREMENT's extra table
  // (trimming never deletes the newest row, so numbers still only grow), and nothing looks
  // entries up by inode, so that index goes.
  `
  DROP INDEX IF EXISTS dentries_by_ino;
  CREATE TABLE journal_v3 (
    seq INTEGER PRIMARY KEY,
    ts_ms INTEGER NOT NULL,
    op TEXT NOT NULL,
    path TEXT,
    path2 TEXT,
    size INTEGER,
    surface TEXT NOT NULL,
    details TEXT
  );
  INSERT INTO journal_v3 SELECT seq, ts_ms, op, path, path2, size, surface, details FROM journal;
  DROP TABLE journal;
  ALTER TABLE journal_v3 RENAME TO journal;
  `,
  // 4: what each checkpoint holds alone (checkpointRefs.ts): for each chunk hash a checkpoint
  // references, how many checkpoints do and the sum of their ids (the one checkpoint's id when
  // the count is 1); and which checkpoints those counts include (one saved since is counted on demand).
  `
  CREATE TABLE cp_refs (hash BLOB PRIMARY KEY, n INTEGER NOT NULL, ids INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE cp_counted (cp INTEGER PRIMARY KEY);
  `,
  // 5: a restore's undo checkpoint may be parked: its rows are tables park_inodes, park_dentries,
  // park_symlinks and park_extents (the live tables renamed, meta 'tree.parked' names it; sqlite.ts).
  // Nothing to create: the number keeps an older avfs, which would not see those rows, from opening the file.
  `
  SELECT 1;
  `,
  // 6: small content inline (INLINE_MAX): the live tree's extent row may hold its piece's bytes
  // itself (hash still set, so diff, dedup and checkpoint accounting read it as a chunk). Checkpoint
  // trees never do: saving one first moves the live tree's inline pieces into `chunks`.
  `
  ALTER TABLE extents ADD COLUMN data BLOB;
  `,
];
