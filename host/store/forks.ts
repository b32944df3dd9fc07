/**
 * Forks as backing vaults (the qcow2 way): a fork's file holds its own copy of the tree's
 * metadata and the chunks written since; chunks it does not hold are read from its parent, then
 * the parent's parent. So a fork costs O(metadata), whatever the bytes. A parent keeps every chunk
 * that any descendant still references (gc asks them), and cannot be deleted while forks depend on
 * it unless it is flattened into them first.
 */
import { AvfsError } from '../protocol/errors';
import type { ChunkFallback } from './chunks';
import type { MetaStore } from './backend';
import { openMeta } from './engine';
import { childrenOf, descendantsOf, FORK_KEY_PREFIX, parentOf } from './forkLinks';
import type { AvfsHome } from './home';
import type { Vault } from './vault';

/** Reads chunks from a vault's ancestors, nearest first, opening each file lazily and read-only. */
export class AncestorChunks implements ChunkFallback {
  private readonly open: Array<{ name: string; store: MetaStore }> = [];
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
      const hit = this.open[i]!.store.chunkGet(hash);
      if (hit) return hit;
    }
  }

  private openNext(): boolean {
    const name = this.nextName;
    if (name === null) return false;
    if (this.open.some((a) => a.name === name) || this.open.length > 64) {
      throw new AvfsError('StorageError', `fork ancestry loops or is too deep at ${name}`, { vault: name });
    }
    let store: MetaStore;
    try {
      store = openMeta(this.home.vaultFile(name), { readonly: true, olderSchemaOk: true });
    } catch (e) {
      throw new AvfsError('StorageError', `fork parent ${name} cannot be opened: ${(e as Error).message}`, { vault: name });
    }
    this.open.push({ name, store });
    this.nextName = store.getMeta('parent') ?? null;
    return true;
  }

  close(): void {
    for (const a of this.open) a.store.close();
    this.open.length = 0;
  }
}

/** Every chunk hash a vault references, from its live tree and its checkpoints, in one snapshot. */
export function referencedHashes(home: AvfsHome, name: string): Buffer[] {
  const store = openMeta(home.vaultFile(name), { readonly: true, olderSchemaOk: true });
  try {
    return store.read(() => store.referencedHashes());
  } finally {
    store.close();
  }
}

/** Every chunk hash that `name`'s descendants reference (what its gc must keep for them); fails closed. */
export function descendantRefs(home: AvfsHome, name: string): Buffer[] {
  return descendantsOf(home, name).flatMap((d) => referencedHashes(home, d));
}

/**
 * Creates `name` as a fork of `source`: a new vault file with a copy of the source's tree
 * metadata and quotas, reading the source's chunks through its parent link.
 */
export function forkVault(home: AvfsHome, source: string, name: string): Vault {
  const src = home.open(source);
  const backend = src.backend;
  src.close();
  // A fork is on its source's backend: it reads the source's chunks.
  // A PostgreSQL fork is made on its source's server (rows copied there).
  const server = backend === 'postgres' ? { url: (src.store as unknown as { link: { url: string } }).link.url } : {};
  const fork = home.create(name, {}, backend, server);
  try {
    fork.store.forkFrom(home.vaultFile(source), name, () => {
      fork.setMeta('parent', source);
      fork.setMeta('forked_at', new Date().toISOString());
      fork.journal.append('fork_create', null, { details: { source } });
    });
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
      g.store.write(() => {
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
      const par = openMeta(home.vaultFile(name), { readonly: true, olderSchemaOk: true });
      try {
        c.store.write(() =>
          par.read(() => {
            for (const h of needed) {
              const hash = Buffer.from(h, 'hex');
              const data = par.chunkGet(hash);
              if (data) c.store.chunkPut(hash, data);
            }
            c.setMeta('parent', grandparent);
            c.journal.append('fork_flatten', null, { details: { from: name, new_parent: grandparent } });
          }),
        );
      } finally {
        par.close();
      }
    } finally {
      c.close();
    }
  }
  return children;
}
