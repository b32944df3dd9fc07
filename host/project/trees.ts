/**
 * The two kinds of tree a three-way plan compares: a vault tree (its live tree or a checkpoint,
 * read by inode) and the project folder on the host (read by path, never through a symlink).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError } from '../protocol/errors';
import { CheckpointTree } from '../store/checkpointTree';
import { type Node, readTreeFile, type TreeRef } from '../store/diff';
import { kindOf } from '../store/inodes';
import type { Vault } from '../store/vault';

/** Reads the content and times of a tree's nodes. */
export class TreeReader {
  private readonly cpTree: CheckpointTree | undefined;
  /** Contents read once per plan: a change is compared, then written or diffed. */
  private readonly cache = new Map<number, Buffer>();

  constructor(
    private readonly v: Vault,
    readonly ref: TreeRef,
  ) {
    this.cpTree = ref.kind === 'checkpoint' ? new CheckpointTree(v.store, v.inodes.chunks, v.checkpoints.get(ref.name)) : undefined;
  }

  read(n: Node): Buffer {
    let data = this.cache.get(n.ino);
    if (!data) {
      data = this.ref.kind === 'live' ? this.v.inodes.readAll(n.ino, n.size) : readTreeFile(this.v.store, this.v.inodes.chunks, this.ref, n.ino, n.size);
      this.cache.set(n.ino, data);
    }
    return data;
  }

  mtimeNs(n: Node): bigint {
    if (!this.cpTree) return this.v.inodes.mustGetattr(n.ino).mtime;
    return this.cpTree.lookup(n.path.slice(1).split('/'), false).attr.mtime;
  }
}

export const refOf = (name: string, v: Vault): TreeRef => ({ kind: 'checkpoint', id: v.checkpoints.get(name).id, name });

export interface HostEntry {
  kind: 'file' | 'directory' | 'symlink' | 'other';
  mode: number;
  size: number;
  mtimeNs: bigint;
  target?: string;
}

/**
 * The entry at `rel` in the project, or null. A directory above it that is a symlink is refused
 * (UnsafeSymlink): reading or writing there would leave the project.
 */
export function hostEntry(root: string, rel: string): HostEntry | null {
  const parts = rel.split('/');
  for (const c of parts) {
    if (c === '' || c === '.' || c === '..') throw new AvfsError('InvalidPath', `refusing path ${rel}: it would leave the project`, { path: rel });
  }
  for (let i = 1; i < parts.length; i++) {
    const above = parts.slice(0, i).join('/');
    const st = fs.lstatSync(path.join(root, above), { throwIfNoEntry: false });
    if (!st) return null;
    if (st.isSymbolicLink()) {
      throw new AvfsError('UnsafeSymlink', `refusing ${rel}: ${above} is a symlink in the project, and the path would leave it`, { path: rel, symlink: above });
    }
    if (!st.isDirectory()) return null;
  }
  const p = path.join(root, rel);
  const st = fs.lstatSync(p, { bigint: true, throwIfNoEntry: false });
  if (!st) return null;
  const kind = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
  return { kind, mode: Number(st.mode), size: Number(st.size), mtimeNs: st.mtimeNs, ...(kind === 'symlink' ? { target: fs.readlinkSync(p) } : {}) };
}

/** True if the project's entry is the node's (null: both absent), content compared byte for byte. */
export function sameEntry(root: string, rel: string, h: HostEntry | null, n: Node | null, content: (n: Node) => Buffer): boolean {
  if (!h || !n) return !h && !n;
  const k = kindOf(n.mode);
  if (h.kind !== k) return false;
  if ((h.mode & 0o7777) !== (n.mode & 0o7777) && k !== 'symlink') return false;
  if (k === 'symlink') return h.target === n.target;
  if (k !== 'file') return true;
  return h.size === n.size && fs.readFileSync(path.join(root, rel)).equals(content(n));
}
