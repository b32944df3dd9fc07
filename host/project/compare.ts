/**
 * Two vaults' live trees side by side (two forks of one project: two experiments): the files and
 * symlinks that differ, content compared by chunk lists (chunks are named by their bytes, the same
 * in every vault), directories left out.
 */
import type { FileType } from '../protocol/vault';
import { contentDigests, listTree, type Node } from '../store/diff';
import { kindOf } from '../store/inodes';
import type { Vault } from '../store/vault';

export interface TreeDifference {
  path: string;
  type: FileType;
  status: 'added' | 'deleted' | 'modified';
}

function manifest(v: Vault): Map<string, { node: Node; digest: string }> {
  return v.store.read(() => {
    const digests = contentDigests(v.store, { kind: 'live' });
    const out = new Map<string, { node: Node; digest: string }>();
    for (const [p, n] of listTree(v.store, { kind: 'live' })) {
      const k = kindOf(n.mode);
      if (k === 'directory') continue;
      out.set(p, { node: n, digest: k === 'symlink' ? `-> ${n.target}` : `${n.mode & 0o7777}:${n.size}:${digests.get(n.ino) ?? ''}` });
    }
    return out;
  });
}

export function compareVaults(a: Vault, b: Vault): TreeDifference[] {
  const left = manifest(a);
  const right = manifest(b);
  const out: TreeDifference[] = [];
  for (const [p, x] of left) {
    const y = right.get(p);
    if (!y) out.push({ path: p, type: kindOf(x.node.mode) as FileType, status: 'deleted' });
    else if (y.digest !== x.digest || kindOf(y.node.mode) !== kindOf(x.node.mode)) out.push({ path: p, type: kindOf(y.node.mode) as FileType, status: 'modified' });
  }
  for (const [p, y] of right) if (!left.has(p)) out.push({ path: p, type: kindOf(y.node.mode) as FileType, status: 'added' });
  return out.sort((m, n) => (m.path < n.path ? -1 : m.path > n.path ? 1 : 0));
}
