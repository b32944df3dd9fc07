/**
 * A checkpoint's tree, read by path (what the editor's diff views ask for: one file, one
 * directory as it was), without listing the whole tree: one lookup per path component in the
 * checkpoint's copy of the entries. Symlinks inside the path are followed as they were then.
 */
import { AvfsError, err } from '../protocol/errors';
import type { ChunkStore } from './chunks';
import type { MetaStore } from './backend';
import { readTreeFile } from './diff';
import { type Attr, kindOf, rowToAttr } from './inodes';
import { ROOT_INO } from './schema';
import type { CheckpointRow } from './checkpoints';

const MAX_SYMLINKS = 40;

export interface TreeEntry {
  ino: number;
  attr: Attr;
  /** The path as resolved (symlinks in it kept as written). */
  path: string;
  target: string | undefined;
}

export class CheckpointTree {
  private readonly ref;

  constructor(
    private readonly meta: MetaStore,
    private readonly chunks: ChunkStore,
    cp: CheckpointRow,
  ) {
    this.ref = { kind: 'checkpoint' as const, id: cp.id, name: cp.name };
  }

  private inode(ino: number): Attr | undefined {
    const row = this.meta.inode(this.ref.id, ino);
    return row ? rowToAttr(row) : undefined;
  }

  private child(parent: number, name: string): number | undefined {
    return this.meta.child(this.ref.id, parent, name);
  }

  private target(ino: number): string | undefined {
    return this.meta.symlink(this.ref.id, ino);
  }

  /** Resolves `parts` (components of an absolute path) from the root; the last symlink is followed only if `follow`. */
  lookup(parts: string[], follow: boolean): TreeEntry {
    return this.meta.read(() => {
      let todo = [...parts];
      let dirs: Array<{ ino: number; name: string }> = [];
      let hops = 0;
      const shown = '/' + parts.join('/');
      while (todo.length > 0) {
        const name = todo.shift()!;
        const parent = dirs.length > 0 ? dirs[dirs.length - 1]!.ino : ROOT_INO;
        if (name === '..') {
          dirs.pop();
          continue;
        }
        if (name === '.' || name === '') continue;
        const parentAttr = this.inode(parent);
        if (!parentAttr || kindOf(parentAttr.mode) !== 'directory') throw err.notDir(shown);
        const ino = this.child(parent, name);
        if (ino === undefined) throw err.notFound(shown);
        const attr = this.inode(ino);
        if (!attr) throw err.notFound(shown);
        if (kindOf(attr.mode) === 'symlink' && (todo.length > 0 || follow)) {
          if (++hops > MAX_SYMLINKS) throw new AvfsError('SymlinkLoop', `too many levels of symbolic links: ${shown}`, { path: shown });
          const target = this.target(ino) ?? '';
          if (target.startsWith('/')) dirs = [];
          todo = [...target.split('/'), ...todo];
          continue;
        }
        dirs.push({ ino, name });
      }
      const last = dirs.length > 0 ? dirs[dirs.length - 1]!.ino : ROOT_INO;
      const attr = this.inode(last);
      if (!attr) throw err.notFound(shown);
      return { ino: last, attr, path: shown, target: kindOf(attr.mode) === 'symlink' ? this.target(last) : undefined };
    });
  }

  /** A directory's entries, sorted by name. */
  entries(dir: TreeEntry): Array<{ name: string; attr: Attr; target: string | undefined }> {
    if (kindOf(dir.attr.mode) !== 'directory') throw err.notDir(dir.path);
    return this.meta.read(() =>
      this.meta
        .childrenAttrs(this.ref.id, dir.ino)
        .map((r) => ({ name: r.name, attr: rowToAttr(r), target: kindOf(r.mode) === 'symlink' ? this.target(r.ino) : undefined })),
    );
  }

  read(file: TreeEntry): Buffer {
    const kind = kindOf(file.attr.mode);
    if (kind === 'directory') throw err.isDir(file.path);
    if (kind !== 'file') throw err.invalidInput(`not a regular file: ${file.path}`, { path: file.path });
    return this.meta.read(() => readTreeFile(this.meta, this.chunks, this.ref, file.ino, file.attr.size));
  }
}
