/**
 * Vault operations (`vault/*` but stats and gc): create, list, info, use, fork, delete, upgrade,
 * with their guards. A file in the vaults directory that cannot be read never hides the others:
 * it is listed as unreadable with the reason, and can be deleted.
 */
import { rmSync } from 'node:fs';
import { assertNotMounted } from '../fuse/registry';
import { workDirOf } from '../proxy/workingCopy';
import { AvfsError } from '../protocol/errors';
import { shellWord } from '../protocol/shellWord';
import type { VaultDamage, VaultInfo, VaultSummary } from '../protocol/vault';
import { checkBackend, LIVE } from '../store/backend';
import { convertVault } from '../store/convert';
import { readOnlyOnDisk } from '../store/db';
import { backendOfFile, vaultLocation, withWriteLock } from '../store/engine';
import { childrenOf, FORK_KEY_PREFIX, parentOf } from '../store/forkLinks';
import { flattenInto, forkVault } from '../store/forks';
import type { AvfsHome } from '../store/home';
import { MIGRATIONS } from '../store/schema';
import type { Vault } from '../store/vault';
import type { OpsTable } from './context';

/** Opens a vault to look at it: read-only, any schema this avfs can read, nothing migrated. */
function withReader<T>(home: AvfsHome, name: string, fn: (v: Vault) => T): T {
  const v = home.open(name, { readonly: true, olderSchemaOk: true });
  try {
    return fn(v);
  } finally {
    v.close();
  }
}

function summaryOf(home: AvfsHome, v: Vault): Extract<VaultSummary, { status: 'ok' }> {
  const c = v.inodes.counters();
  return {
    name: v.name,
    current: home.current() === v.name,
    status: 'ok',
    size: c.liveBytes,
    size_on_disk: home.sizeOnDisk(v.name),
    files: c.liveInodes,
    backend: v.backend,
    location: vaultLocation(v.file),
    parent: v.meta('parent') ?? null,
  };
}

function reasonOf(e: unknown): string {
  if (e instanceof AvfsError && typeof e.details.reason === 'string') return e.details.reason;
  return e instanceof Error ? e.message : String(e);
}

/** Every vault in the home; one that cannot be read is flagged, never fatal to the list. */
export function listVaults(home: AvfsHome): VaultSummary[] {
  return home.names().map((name): VaultSummary => {
    try {
      return withReader(home, name, (v) => summaryOf(home, v));
    } catch (e) {
      return { name, current: home.current() === name, status: 'unreadable', reason: reasonOf(e), size_on_disk: home.sizeOnDisk(name), backend: backendOfFile(home.vaultFile(name)) ?? 'sqlite', location: vaultLocation(home.vaultFile(name)) };
    }
  });
}

export function vaultInfo(home: AvfsHome, name: string): VaultInfo {
  return withReader(home, name, (v) => {
    const chunks = v.store.chunkStats().count;
    const checkpoints = v.checkpoints.list().map((c) => c.name);
    return {
      ...summaryOf(home, v),
      path: v.file,
      created_at: v.meta('created_at') ?? null,
      schema_version: v.store.schemaVersion(),
      chunk_size: Number(v.meta('chunk_size') ?? 0),
      chunks,
      quotas: v.inodes.quotas.get(),
      forks: childrenOf(home, name, { strict: false }),
      checkpoints,
      damaged: damageOf(v),
    };
  });
}

/**
 * The mark a read left when a chunk no longer matched its SHA-256 (host/store/chunks.ts), with what
 * holds that chunk. A write of the same bytes finds the chunk stored and keeps it, so the way back
 * is to let go of every holder (the files, the checkpoints), collect it, then write the files again.
 */
function damageOf(v: Vault): VaultDamage | null {
  const mark = v.meta('damaged');
  if (mark === undefined) return null;
  const [, found_at = mark, chunk = ''] = /^(\S+) chunk ([0-9a-f]{64})/i.exec(mark) ?? [];
  const holds = (tree: number) => {
    const inos = new Set<number>();
    for (const [ino, digest] of v.store.contentDigests(tree)) if (chunk && digest.toLowerCase().includes(chunk.toLowerCase())) inos.add(ino);
    return [...v.store.listTree(tree).values()].filter((n) => inos.has(n.ino)).map((n) => n.path).sort();
  };
  const files = holds(LIVE);
  const checkpoints = v.checkpoints.list().filter((c) => holds(c.id).length > 0).map((c) => c.name);
  const steps = [
    ...(files.length ? [`avfs rm ${files.map(shellWord).join(' ')}`] : []),
    ...checkpoints.map((c) => `avfs checkpoint delete ${shellWord(c)}`),
    'avfs gc',
    ...(files.length ? ['write the files again from a good copy'] : []),
  ];
  const held = files.length || checkpoints.length
    ? `${plural(files.length, 'file')} and ${plural(checkpoints.length, 'checkpoint')} hold it and cannot be read (everything else can)`
    : 'nothing holds it now';
  return { found_at, chunk: chunk.toLowerCase(), files, checkpoints, recovery: `${held}; to recover: ${steps.join(', then ')}` };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/**
 * Deletes a vault's files, readable or not. Refused while it is mounted, and while forks read
 * from it unless `flatten` (which first copies into them the chunks only it holds). If some
 * vault's parent cannot be read, the deletion stops: that vault might depend on this one.
 */
export function deleteVault(home: AvfsHome, name: string, opts: { flatten?: boolean } = {}): { deleted: string; flattened: string[] } {
  home.resolve(name);
  assertNotMounted(home, name, 'delete it');
  const forks = childrenOf(home, name);
  if (forks.length > 0 && !opts.flatten) {
    throw new AvfsError('VaultInUse', `vault ${name} has forks that read from it: ${forks.join(', ')} (use --flatten to make them independent first)`, {
      vault: name,
      forks,
    });
  }
  const flattened = forks.length > 0 ? flattenInto(home, name) : [];
  const parent = parentOrNull(home, name);
  withWriteLock(home.vaultFile(name), () => home.removeFiles(name));
  if (parent !== null) forgetFork(home, parent, name);
  if (home.current() === null) home.setCurrent(null);
  // Its working copy (proxy exec --materialize) goes with it; one kept aside after a failed commit too.
  rmSync(workDirOf(home.dir, name), { recursive: true, force: true });
  return { deleted: name, flattened };
}

function parentOrNull(home: AvfsHome, name: string): string | null {
  try {
    return parentOf(home, name);
  } catch {
    return null; // an unreadable vault's parent is unknown; its stale record only makes that parent's gc keep more
  }
}

/** Drops a deleted fork from its parent's record, when the parent can be written (else the stale record is harmless). */
function forgetFork(home: AvfsHome, parent: string, fork: string): void {
  try {
    const p = home.open(parent);
    try {
      if (!p.readonly) p.setMeta(FORK_KEY_PREFIX + fork, null);
    } finally {
      p.close();
    }
  } catch {
    /* the parent is gone or unreadable: nothing to forget */
  }
}

/** Applies the schema migrations a vault file written by an older avfs is missing. */
function upgradeVault(home: AvfsHome, name: string) {
  home.resolve(name);
  const file = home.vaultFile(name);
  const from = withReader(home, name, (v) => v.store.schemaVersion());
  if (from < MIGRATIONS.length) {
    const why = readOnlyOnDisk(file);
    if (why !== undefined) throw new AvfsError('ReadOnly', `cannot upgrade vault ${name}: ${why}`, { vault: name, reason: why });
  }
  // A writable open applies what is missing (and refuses a newer or foreign file).
  home.open(name).close();
  return { vault: name, from, to: MIGRATIONS.length, upgraded: from < MIGRATIONS.length };
}

export const vaultOps = {
  'vault/list': (ctx) => ({ vaults: listVaults(ctx.home) }),

  'vault/create': (ctx, p) => {
    const quotas = p.quotas ?? {};
    const v = ctx.home.create(p.name, quotas, p.backend === undefined ? undefined : checkBackend(p.backend), { url: p.url });
    const backend = v.backend;
    v.close();
    if (p.use) ctx.home.setCurrent(p.name);
    return {
      created: p.name,
      current: p.use,
      backend,
      path: v.file,
      location: vaultLocation(v.file),
      quotas: { max_size_mb: null, max_files: null, max_file_size_mb: null, ...quotas },
    };
  },

  'vault/attach': (ctx, p) => {
    const v = ctx.home.attach(p.name, p.backend, p.url);
    const backend = v.backend;
    v.close();
    if (p.use) ctx.home.setCurrent(p.name);
    return { attached: p.name, current: p.use, backend, path: v.file, location: vaultLocation(v.file) };
  },

  'vault/info': (ctx, p) => vaultInfo(ctx.home, ctx.home.resolve(p.name)),

  'vault/use': (ctx, p) => {
    ctx.home.resolve(p.name);
    ctx.home.setCurrent(p.name);
    return { current: p.name };
  },

  'vault/fork': (ctx, p) => {
    ctx.home.resolve(p.source);
    const started = performance.now();
    const fork = forkVault(ctx.home, p.source, p.name);
    const ms = Math.round((performance.now() - started) * 10) / 10;
    const file = fork.file;
    const backend = fork.backend;
    fork.close();
    if (p.use) ctx.home.setCurrent(p.name);
    return { source: p.source, name: p.name, current: p.use, backend, path: file, copy_on_write: true, duration_ms: ms };
  },

  'vault/delete': (ctx, p) => deleteVault(ctx.home, p.name, { flatten: p.flatten }),

  'vault/convert': (ctx, p) => {
    ctx.home.resolve(p.name);
    assertNotMounted(ctx.home, p.name, 'convert it');
    return convertVault(ctx.home, p.name, checkBackend(p.backend));
  },

  'vault/upgrade': (ctx, p) => upgradeVault(ctx.home, p.name),
} satisfies Partial<OpsTable>;
