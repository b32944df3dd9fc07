/**
 * Manifest diff between two trees of one vault (a checkpoint, or the live tree): which paths were
 * added, deleted, modified or renamed, with sizes. Content is compared by chunk hashes, exactly;
 * a rename is an inode that left one path and appeared at another.
 */
import { TextDecoder } from 'node:util';
import type { ChangeSummary } from '../protocol/changes';
import type { FileType } from '../protocol/vault';
import type { ChunkStore } from './chunks';
import { LIVE, type MetaStore, type Node, type TreeId } from './backend';
import { kindOf } from './inodes';
import { CHUNK_SIZE } from './schema';

export type TreeRef = { kind: 'live' } | { kind: 'checkpoint'; id: number; name: string };

export type { Node };

/** The backend's id of a tree. */
export function treeId(ref: TreeRef): TreeId {
  return ref.kind === 'live' ? LIVE : ref.id;
}

/** Every path of a tree with its inode, found by walking the entries from the root. */
export function listTree(meta: MetaStore, ref: TreeRef): Map<string, Node> {
  return meta.listTree(treeId(ref));
}

function extentList(meta: MetaStore, ref: TreeRef, ino: number): Buffer[] {
  return meta.extents(treeId(ref), ino).map((r) => r.hash);
}

/**
 * Each file's content as its chunk list (hashes in extent order), by inode: chunks are named by
 * their bytes, so two vaults (a fork and its source, two forks) hold the same bytes exactly when
 * the lists are equal.
 */
export function contentDigests(meta: MetaStore, ref: TreeRef): Map<number, string> {
  return meta.contentDigests(treeId(ref));
}

export function readTreeFile(meta: MetaStore, chunks: ChunkStore, ref: TreeRef, ino: number, size: number): Buffer {
  const out = Buffer.alloc(size);
  const tree = treeId(ref);
  // The live tree's small pieces may be inline (in their extent rows): read with their rows there.
  const rows =
    tree === LIVE && meta.extentsWithData
      ? meta.extentsWithData(ino, 0, Number.MAX_SAFE_INTEGER).map((e) => ({ idx: e.idx, data: chunks.checked(e.hash, e.data, e.inline ? `${ino}:${e.idx}` : undefined) }))
      : meta.extents(tree, ino).map((e) => ({ idx: e.idx, data: chunks.get(e.hash) }));
  for (const { idx, data } of rows) {
    if (data) data.copy(out, idx * CHUNK_SIZE, 0, Math.max(0, Math.min(data.length, size - idx * CHUNK_SIZE)));
  }
  return out;
}
const typeOf = (mode: number): FileType => kindOf(mode) as FileType;
const octal = (mode: number) => '0' + (mode & 0o7777).toString(8).padStart(3, '0');
const PATCH_MAX_BYTES = 1024 * 1024;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The bytes as text for a patch, or undefined for a binary or too big a file. */
export function asText(data: Buffer): string | undefined {
  if (data.length > PATCH_MAX_BYTES || data.includes(0)) return undefined;
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}

/** One path whose entry differs between two trees: its node before (null: absent) and after. */
export interface PathChange {
  path: string;
  before: Node | null;
  after: Node | null;
}

/**
 * Every path whose entry differs between `from` and `to`, each on its own (a renamed directory
 * is its old paths gone and its new ones added, children included), sorted by path. Directories
 * differ by type or permission bits; files by content (chunk hashes) or bits; symlinks by target.
 */
export function pathChanges(meta: MetaStore, from: TreeRef, to: TreeRef): PathChange[] {
  return meta.read(() => {
    const a = listTree(meta, from);
    const b = listTree(meta, to);
    const sameContent = contentComparer(meta, from, to);
    const same = (x: Node, y: Node): boolean => {
      if (kindOf(x.mode) !== kindOf(y.mode) || (x.mode & 0o7777) !== (y.mode & 0o7777)) return false;
      return kindOf(x.mode) === 'directory' || sameContent(x, y);
    };
    const out: PathChange[] = [];
    for (const [p, x] of a) {
      const y = b.get(p);
      if (!y) out.push({ path: p, before: x, after: null });
      else if (!same(x, y)) out.push({ path: p, before: x, after: y });
    }
    for (const [p, y] of b) if (!a.has(p)) out.push({ path: p, before: null, after: y });
    return out.sort((m, n) => (m.path < n.path ? -1 : m.path > n.path ? 1 : 0));
  });
}

/** Same content, for two nodes of one kind (x in `from`, y in `to`): sizes, symlink targets, chunk lists. */
function contentComparer(meta: MetaStore, from: TreeRef, to: TreeRef): (x: Node, y: Node) => boolean {
  const changed = meta.changedContent(treeId(from), treeId(to));
  return (x, y) => {
    if (x.size !== y.size) return false;
    if (kindOf(x.mode) === 'symlink') return x.target === y.target;
    if (kindOf(x.mode) !== 'file') return true;
    if (x.ino === y.ino) return !changed.has(x.ino);
    const ea = extentList(meta, from, x.ino);
    const eb = extentList(meta, to, y.ino);
    return ea.length === eb.length && ea.every((h, i) => h.equals(eb[i]!));
  };
}

/**
 * pathChanges at some paths only (the subtrees under them included), or null when a path runs
 * through a symlink in either tree (the change may lie at its target) or a file has hard links
 * (a change under one name is under the others): then only the whole comparison is exact.
 */
export function pathChangesAt(meta: MetaStore, from: TreeRef, to: TreeRef, paths: string[]): PathChange[] | null {
  return meta.read(() => {
    const side = (ref: TreeRef) => {
      const tree = treeId(ref);
      const get = (path: string, ino: number): (Node & { nlink: number }) | undefined => {
        const r = meta.inode(tree, ino);
        if (!r) return undefined;
        const target = kindOf(r.mode) === 'symlink' ? (meta.symlink(tree, ino) ?? null) : null;
        return { ino: r.ino, mode: r.mode, size: r.size, nlink: r.nlink, target, mtime_s: r.mtime_s, mtime_ns: r.mtime_ns, path };
      };
      return {
        /** The node at `path`, undefined when absent, null when the way there crosses a symlink. */
        at(path: string): (Node & { nlink: number }) | undefined | null {
          let ino = 1;
          const parts = path.split('/').filter(Boolean);
          for (let i = 0; i < parts.length; i++) {
            const next = meta.child(tree, ino, parts[i]!);
            if (next === undefined) return undefined;
            ino = next;
            if (i < parts.length - 1 && kindOf(get('', ino)?.mode ?? 0) === 'symlink') return null;
          }
          return get(path, ino);
        },
        children(n: Node): Array<Node & { nlink: number }> {
          return meta.children(tree, n.ino).map((k) => get(`${n.path}/${k.name}`, k.ino)!).filter(Boolean);
        },
      };
    };
    const a = side(from);
    const b = side(to);
    const seen = new Set<string>();
    const out: PathChange[] = [];
    const sameContent = (x: Node, y: Node): boolean => {
      if (x.size !== y.size) return false;
      if (kindOf(x.mode) === 'symlink') return x.target === y.target;
      if (kindOf(x.mode) !== 'file') return true;
      const ea = extentList(meta, from, x.ino);
      const eb = extentList(meta, to, y.ino);
      return ea.length === eb.length && ea.every((h, i) => h.equals(eb[i]!));
    };
    let exact = true;
    const visit = (path: string, x: (Node & { nlink: number }) | undefined, y: (Node & { nlink: number }) | undefined) => {
      if (seen.has(path)) return;
      seen.add(path);
      if ((x && x.nlink > 1 && kindOf(x.mode) === 'file') || (y && y.nlink > 1 && kindOf(y.mode) === 'file')) exact = false;
      const strip = (n: (Node & { nlink: number }) | undefined): Node | null => (n ? { path: n.path, ino: n.ino, mode: n.mode, size: n.size, target: n.target, mtime_s: n.mtime_s, mtime_ns: n.mtime_ns } : null);
      const same =
        !!x && !!y && kindOf(x.mode) === kindOf(y.mode) && (x.mode & 0o7777) === (y.mode & 0o7777) && (kindOf(x.mode) === 'directory' || sameContent(x, y));
      if (!same && (x || y)) out.push({ path, before: strip(x), after: strip(y) });
      const xs = x && kindOf(x.mode) === 'directory' ? new Map(a.children(x).map((c) => [c.path, c])) : new Map<string, Node & { nlink: number }>();
      const ys = y && kindOf(y.mode) === 'directory' ? new Map(b.children(y).map((c) => [c.path, c])) : new Map<string, Node & { nlink: number }>();
      for (const p of new Set([...xs.keys(), ...ys.keys()])) visit(p, xs.get(p), ys.get(p));
    };
    for (const p of paths) {
      if (p === '/' || p === '') return null;
      const x = a.at(p);
      const y = b.at(p);
      if (x === null || y === null) return null;
      // A path inside a directory that is new or gone on one side: that directory is visited instead.
      visit(p, x, y);
    }
    if (!exact) return null;
    return out.sort((m, n) => (m.path < n.path ? -1 : m.path > n.path ? 1 : 0));
  });
}

export function diffTrees(meta: MetaStore, chunks: ChunkStore, from: TreeRef, to: TreeRef, opts: { patch?: boolean } = {}): ChangeSummary {
  return meta.read(() => {
    const a = listTree(meta, from);
    const b = listTree(meta, to);
    const sameContent = contentComparer(meta, from, to);

    const summary: ChangeSummary = {
      from: from.kind === 'live' ? 'current' : from.name,
      to: to.kind === 'live' ? 'current' : to.name,
      added: [],
      deleted: [],
      modified: [],
      renamed: [],
      totals: { added: 0, deleted: 0, modified: 0, renamed: 0, bytes_before: 0, bytes_after: 0 },
    };
    const patches: string[] = [];
    const addPatch = (pathA: string | null, pathB: string | null, x: Node | null, y: Node | null) => {
      if (!opts.patch) return;
      if ((x && kindOf(x.mode) !== 'file') || (y && kindOf(y.mode) !== 'file')) return;
      const before = x ? asText(readTreeFile(meta, chunks, from, x.ino, x.size)) : '';
      const after = y ? asText(readTreeFile(meta, chunks, to, y.ino, y.size)) : '';
      if (before === undefined || after === undefined) {
        patches.push(`Binary files ${pathA ? 'a' + pathA : '/dev/null'} and ${pathB ? 'b' + pathB : '/dev/null'} differ\n`);
        return;
      }
      // Loaded when a patch is asked for: most summaries have none, and loading it costs every call.
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { createTwoFilesPatch } = require('diff') as typeof import('diff');
      patches.push(createTwoFilesPatch(pathA ? 'a' + pathA : '/dev/null', pathB ? 'b' + pathB : '/dev/null', before, after, undefined, undefined, { context: 3 }));
    };

    // Renames: an inode gone from its old path and present at a new one. Entries that simply moved
    // along with a renamed directory are implied by it and not listed again.
    const goneByIno = new Map<number, Node>();
    for (const [p, x] of a) if (!b.has(p)) goneByIno.set(x.ino, x);
    const candidates = [...b.values()]
      .filter((y) => !a.has(y.path) && goneByIno.has(y.ino) && typeOf(goneByIno.get(y.ino)!.mode) === typeOf(y.mode))
      .sort((m, n) => m.path.split('/').length - n.path.split('/').length);
    const movedFrom = new Set<string>();
    const movedTo = new Set<string>();
    const dirRenames: Array<[string, string]> = [];
    for (const y of candidates) {
      const x = goneByIno.get(y.ino)!;
      if (movedFrom.has(x.path)) continue;
      const implied = dirRenames.some(([f, t]) => x.path.startsWith(f + '/') && y.path.startsWith(t + '/') && x.path.slice(f.length) === y.path.slice(t.length));
      const contentChanged = !sameContent(x, y);
      movedFrom.add(x.path);
      movedTo.add(y.path);
      if (implied) {
        if (contentChanged) {
          summary.modified.push({ path: y.path, type: typeOf(y.mode), size_before: x.size, size_after: y.size, content_changed: true });
          addPatch(x.path, y.path, x, y);
        }
        continue;
      }
      if (typeOf(y.mode) === 'directory') dirRenames.push([x.path, y.path]);
      summary.renamed.push({ from: x.path, to: y.path, type: typeOf(y.mode), size: y.size, content_changed: contentChanged });
      if (contentChanged) addPatch(x.path, y.path, x, y);
    }

    for (const [p, x] of a) {
      const y = b.get(p);
      if (!y) {
        if (!movedFrom.has(p)) {
          summary.deleted.push({ path: p, type: typeOf(x.mode), size: x.size });
          addPatch(p, null, x, null);
        }
        continue;
      }
      const typeChanged = typeOf(x.mode) !== typeOf(y.mode);
      if (typeChanged) {
        summary.deleted.push({ path: p, type: typeOf(x.mode), size: x.size });
        summary.added.push({ path: p, type: typeOf(y.mode), size: y.size });
        continue;
      }
      const contentChanged = typeOf(x.mode) !== 'directory' && !sameContent(x, y);
      const modeChanged = (x.mode & 0o7777) !== (y.mode & 0o7777);
      if (contentChanged || modeChanged) {
        summary.modified.push({
          path: p,
          type: typeOf(y.mode),
          size_before: x.size,
          size_after: y.size,
          content_changed: contentChanged,
          ...(modeChanged ? { mode_before: octal(x.mode), mode_after: octal(y.mode) } : {}),
        });
        if (contentChanged) addPatch(p, p, x, y);
      }
    }
    for (const [p, y] of b) {
      if (!a.has(p) && !movedTo.has(p)) {
        summary.added.push({ path: p, type: typeOf(y.mode), size: y.size });
        addPatch(null, p, null, y);
      }
    }
    const sum = (m: Map<string, Node>) => [...new Map([...m.values()].filter((n) => kindOf(n.mode) === 'file').map((n) => [n.ino, n.size])).values()].reduce((s, n) => s + n, 0);
    summary.added.sort((x, y) => x.path.localeCompare(y.path));
    summary.deleted.sort((x, y) => x.path.localeCompare(y.path));
    summary.totals = {
      added: summary.added.length,
      deleted: summary.deleted.length,
      modified: summary.modified.length,
      renamed: summary.renamed.length,
      bytes_before: sum(a),
      bytes_after: sum(b),
    };
    if (opts.patch) summary.patch = patches.join('');
    return summary;
  });
}
