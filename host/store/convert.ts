/**
 * `avfs vault convert`: a vault copied onto another backend through the store's interface, every
 * tree (the live one and each checkpoint's), the journal, `meta` and the chunks the vault holds,
 * then checked against the original (each tree's paths, kinds, sizes and chunk lists, the
 * counters, the checkpoints, the chunks) before it takes the vault's place. The original stays
 * untouched until then; a failed check leaves it as it was.
 */
import { closeSync, renameSync, rmSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';
import { type BackendKind, LIVE, type MetaStore, type TreeId } from './backend';
import { createMeta, openMeta } from './engine';
import type { AvfsHome } from './home';
import { openPrivate } from './privateFs';

export interface ConvertResult {
  vault: string;
  from: BackendKind;
  to: BackendKind;
  files: number;
  checkpoints: number;
  chunks: number;
  verified: boolean;
  duration_ms: number;
}

/** What must be equal in the copy: per tree, each path's kind, mode, size, target and chunk list. */
function fingerprint(m: MetaStore, tree: TreeId): string {
  const digests = m.contentDigests(tree);
  const rows = [...m.listTree(tree).values()].map((n) => `${n.path}\0${n.ino}\0${n.mode}\0${n.size}\0${n.target ?? ''}\0${n.mtime_s}.${n.mtime_ns}\0${digests.get(n.ino) ?? ''}`);
  return rows.sort().join('\n');
}

function copyInto(src: MetaStore, dst: MetaStore): void {
  dst.write(() =>
    src.read(() => {
      dst.loadTree(LIVE, src.dumpTree(LIVE));
      dst.setCounters(src.counters()!);
      for (const { key, value } of src.metaWithPrefix('')) dst.setMeta(key, value);
      for (const cp of src.checkpointRows()) {
        dst.insertCheckpoint(cp);
        dst.loadTree(cp.id, src.dumpTree(cp.id));
      }
      dst.loadJournal(src.journalAfter(0));
      src.chunkEach((hash, data) => dst.chunkPut(hash, data));
    }),
  );
}

function verify(src: MetaStore, dst: MetaStore): void {
  const problems: string[] = [];
  const c1 = src.counters();
  const c2 = dst.counters();
  if (JSON.stringify(c1) !== JSON.stringify(c2)) problems.push(`counters ${JSON.stringify(c1)} became ${JSON.stringify(c2)}`);
  const cps1 = src.checkpointRows();
  const cps2 = dst.checkpointRows();
  if (JSON.stringify(cps1) !== JSON.stringify(cps2)) problems.push('the checkpoints differ');
  for (const tree of [LIVE, ...cps1.map((c) => c.id)]) {
    if (fingerprint(src, tree) !== fingerprint(dst, tree)) problems.push(tree === LIVE ? 'the live tree differs' : `checkpoint ${cps1.find((c) => c.id === tree)!.name} differs`);
  }
  const s1 = src.chunkStats();
  const s2 = dst.chunkStats();
  if (s1.count !== s2.count || s1.bytes !== s2.bytes) problems.push(`chunks: ${s1.count} (${s1.bytes} bytes) became ${s2.count} (${s2.bytes} bytes)`);
  if (src.journalCount() !== dst.journalCount()) problems.push('the journal differs');
  if (dst.check() !== 'ok') problems.push(`the copy's check: ${dst.check()}`);
  if (problems.length > 0) throw new AvfsError('StorageError', `the converted copy does not match the vault: ${problems.join('; ')}; the vault is unchanged`, { problems });
}

/** Copies vault `name` onto `backend`, verifies the copy, and puts it in the vault's place. */
export function convertVault(home: AvfsHome, name: string, backend: BackendKind): ConvertResult {
  const started = performance.now();
  const file = home.vaultFile(name);
  const tmp = `${file}.convert-${process.pid}`;
  const src = openMeta(file);
  const from = src.kind;
  try {
    if (from === backend) throw new AvfsError('InvalidInput', `vault ${name} is on ${backend} already`, { vault: name, backend });
    if (from === 'postgres' || backend === 'postgres') {
      // A vault on a server is shared by other homes, which a local copy would leave behind.
      throw new AvfsError('NotSupported', `vault convert copies between this home's backends (sqlite, lmdb); vault ${name} ${from === 'postgres' ? 'is on a server' : 'cannot be moved onto a server by convert'}`, {
        vault: name,
        backend,
      });
    }
    closeSync(openPrivate(tmp, 'wx'));
    let dst: MetaStore | undefined;
    try {
      dst = createMeta(tmp, backend);
      // Under the vault's write lock: no write lands between the copy and the swap.
      let result: Omit<ConvertResult, 'duration_ms'> | undefined;
      src.write(() => {
        copyInto(src, dst!);
        verify(src, dst!);
        result = {
          vault: name,
          from,
          to: backend,
          files: dst!.counters()!.live_inodes,
          checkpoints: dst!.checkpointRows().filter((c) => !c.name.startsWith('.')).length,
          chunks: dst!.chunkStats().count,
          verified: true,
        };
        dst!.close();
        dst = undefined;
        for (const suffix of ['-wal', '-shm', '-lock']) rmSync(tmp + suffix, { force: true });
        renameSync(tmp, file);
      });
      // The old file's sidecars (SQLite's WAL, LMDB's lock file) belong to a file that is gone.
      for (const suffix of ['-wal', '-shm', '-lock']) rmSync(file + suffix, { force: true });
      return { ...result!, duration_ms: Math.round(performance.now() - started) };
    } finally {
      dst?.close();
      for (const suffix of ['', '-wal', '-shm', '-lock']) rmSync(tmp + suffix, { force: true });
    }
  } finally {
    if (src.isOpen) src.close();
  }
}
