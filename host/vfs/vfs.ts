/**
 * The one path-level API over a vault. The CLI, FUSE, RPC and the editor all go through it, so
 * path validation, read-only mode, quotas (enforced by the inode layer inside the same
 * transaction) and the journal live in one place. Nothing here knows who is calling.
 */
import { AvfsError, err } from '../protocol/errors';
import type { DirEntry, FileType, Stat } from '../protocol/vault';
import { type Attr, type DirRef, type FileRef, kindOf, type Owner, S_IFDIR, S_IFIFO, S_IFLNK, S_IFMT, S_IFREG, S_IFSOCK, type SetAttr } from '../store/inodes';
import { ROOT_INO } from '../store/schema';
import type { Vault } from '../store/vault';
import { checkNewName, impliedDirs, isWithin, joinPath, normalizePath, splitPath } from './paths';

const MAX_SYMLINKS = 40;

export interface Resolved<A extends FileRef = Attr> {
  ino: number;
  attr: A;
  /** The normalised path that was resolved (symlinks in it are not expanded). */
  path: string;
  /** The same entry's path with every symlink on the way expanded. */
  physical: string;
}

export interface ParentRef {
  parent: number;
  name: string;
  path: string;
  /** The parent directory's path with symlinks expanded. */
  physicalDir: string;
  /** The path's syntax says the entry is a directory (`/new/`, `/new/.`): only a directory may be made there. */
  dirSyntax: boolean;
  /** The parent directory's inode, type and group, when they were read on the way (undefined for the root, or not read). */
  attr?: DirRef;
}

/** A walk that found no entry: the path of the first missing component, and its directory when that is the last one of a plain path. */
interface Missing {
  missing: string;
  dir?: { ino: number; physical: string; ref: DirRef | undefined };
}

export interface WriteOptions {
  append?: boolean;
  /** Permission bits for a new file (default 0644). */
  mode?: number;
  /** Fail if the file exists. */
  exclusive?: boolean;
}

let lastIsoNs = -1n;
let lastIso = '';
/** A time as ISO 8601 (ms). A stat converts three times that are often one (a file written once): the last one is kept. */
export function isoTime(ns: bigint): string {
  if (ns !== lastIsoNs) {
    lastIso = new Date(Number(ns / 1_000_000n)).toISOString();
    lastIsoNs = ns;
  }
  return lastIso;
}

export function modeString(mode: number): string {
  return '0' + (mode & 0o7777).toString(8).padStart(3, '0');
}

/** A path's metadata as every surface shows it (a symlink's target given by the caller). */
export function statOf(path: string, a: Attr, target: string | undefined): Stat {
  return {
    path,
    type: kindOf(a.mode) as FileType,
    ino: a.ino,
    mode: modeString(a.mode),
    nlink: a.nlink,
    uid: a.uid,
    gid: a.gid,
    size: a.size,
    atime: isoTime(a.atime),
    mtime: isoTime(a.mtime),
    ctime: isoTime(a.ctime),
    mtime_ns: a.mtime.toString(),
    ...(target !== undefined ? { target } : {}),
  };
}

/** A directory entry as every surface shows it. */
export function dirEntryOf(name: string, a: Attr, target: string | undefined): DirEntry {
  return {
    name,
    type: kindOf(a.mode) as FileType,
    size: a.size,
    modified: isoTime(a.mtime),
    ino: a.ino,
    mode: modeString(a.mode),
    nlink: a.nlink,
    ...(target !== undefined ? { target } : {}),
  };
}

export class Vfs {
  constructor(readonly vault: Vault) {}

  get inodes() {
    return this.vault.inodes;
  }

  get readonly(): boolean {
    return this.vault.readonly;
  }

  // ---- resolution ----

  /** Resolves a path to its inode, following symlinks in every component (and the last one if `follow`). */
  resolve(path: string, follow = true): Resolved {
    const r = this.walk(path, follow);
    if ('missing' in r) throw err.notFound(r.missing);
    return r;
  }

  /**
   * The walk behind resolve: one joined lookup per component, carrying the attributes forward.
   * A missing component is returned (its path; the error is made only if it is thrown), not
   * thrown, so lookups that expect absence stay cheap.
   */
  private walk(path: string, follow: boolean): Resolved | Missing {
    const dirs = impliedDirs(path);
    return dirs.length > 0 ? this.walkDirSyntax(path, follow, dirs) : this.walkParts(path, follow);
  }

  /**
   * A path whose syntax says some components are directories (`/a.txt/`, `/a/b/../c`): each of
   * those must exist and be one, and a trailing `/` follows a final symlink, as POSIX does.
   */
  private walkDirSyntax(path: string, follow: boolean, dirs: string[]): Resolved | Missing {
    const normalized = '/' + splitPath(path).join('/');
    for (const d of dirs) {
      if (d === normalized) continue;
      const r = this.walkParts(d, true);
      if ('missing' in r) return { missing: r.missing };
      if (kindOf(r.attr.mode) !== 'directory') throw err.notDir(d);
    }
    const last = dirs.includes(normalized);
    const r = this.walkParts(normalized, follow || last);
    if ('missing' in r) return { missing: r.missing };
    if (last && kindOf(r.attr.mode) !== 'directory') throw err.notDir(r.path);
    return r;
  }

  /**
   * The root's attributes are read only when they are needed (the path is `/`, or `..` climbs
   * back to it): the root is always a directory, which is all the walk needs to know of it. A
   * directory on the way is looked up for its inode, type and group only (DirRef); the entry the
   * walk ends at, with all its attributes.
   */
  private walkParts(path: string, follow: boolean): Resolved | Missing {
    return this.walkTo(path, follow, false) as Resolved | Missing;
  }

  /**
   * walkParts, with the entry the walk ends at looked up for a whole-file read when `file`
   * (InodeStore.lookupFile: no Attr, piece 0 joined), else with all its attributes. One walk
   * for both, its lookups called directly.
   */
  private walkTo(path: string, follow: boolean, file: boolean): Resolved<FileRef> | Missing {
    const parts = splitPath(path);
    const normalized = '/' + parts.join('/');
    let cur: DirRef | FileRef | undefined; // undefined: the root, not read
    let hops = 0;
    const stack = parts;
    const walked: Array<DirRef | FileRef | undefined> = [];
    const done: string[] = [];
    while (stack.length > 0) {
      const name = stack.shift()!;
      if (name === '..') {
        cur = walked.pop();
        done.pop();
        continue;
      }
      if (cur !== undefined && kindOf(cur.mode) !== 'directory') throw err.notDir('/' + done.join('/'));
      const ino = cur?.ino ?? ROOT_INO;
      const child = stack.length > 0 ? this.inodes.lookupDir(ino, name) : file ? this.inodes.lookupFile(ino, name) : this.inodes.lookupAttr(ino, name);
      if (child === undefined) {
        const missing = '/' + [...done, name].join('/');
        // The last component of the path as given is missing: its directory is known, for a caller about to create it.
        if (stack.length === 0 && hops === 0) return { missing, dir: { ino, physical: '/' + done.join('/'), ref: cur } };
        return { missing };
      }
      if (kindOf(child.mode) === 'symlink' && (stack.length > 0 || follow)) {
        if (++hops > MAX_SYMLINKS) throw new AvfsError('SymlinkLoop', `too many levels of symbolic links: ${path}`, { path });
        const target = this.inodes.readlink(child.ino) ?? '';
        if (target.startsWith('/')) {
          cur = undefined;
          walked.length = 0;
          done.length = 0;
        }
        stack.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
        continue;
      }
      walked.push(cur);
      done.push(name);
      cur = child;
    }
    const attr = cur !== undefined && 'size' in cur ? cur : this.inodes.mustGetattr(cur?.ino ?? ROOT_INO);
    return { ino: attr.ino, attr, path: normalized, physical: '/' + done.join('/') };
  }

  /**
   * Resolves the directory that holds `path`'s last component; the last component itself may not
   * exist. Unless `existing` (the caller acts on an entry that is there: remove, move away), the
   * name is about to enter the tree, so it must be one that can be stored exactly.
   */
  parentOf(path: string, opts: { existing?: boolean } = {}): ParentRef {
    const parts = splitPath(path);
    const name = parts.pop();
    if (name === undefined) throw err.invalidPath(path, 'the vault root has no parent');
    const dirPath = '/' + parts.join('/');
    const full = joinPath(dirPath, name);
    const dirs = impliedDirs(path);
    for (const d of dirs) {
      if (d === full) continue;
      const r = this.resolve(d, true);
      if (kindOf(r.attr.mode) !== 'directory') throw err.notDir(d);
    }
    const dir = this.resolve(dirPath, true);
    if (kindOf(dir.attr.mode) !== 'directory') throw err.notDir(dirPath);
    if (!opts.existing) checkNewName(name, full);
    return { parent: dir.ino, name, path: full, physicalDir: dir.physical, dirSyntax: dirs.includes(full), attr: dir.attr };
  }

  /** parentOf for a new entry that is not a directory: refused where the path's syntax says directory. */
  private parentForNonDir(path: string): ParentRef {
    const p = this.parentOf(path);
    if (p.dirSyntax) throw new AvfsError('NotADirectory', `not a directory: ${path} ends like a directory, but would name a file`, { path: p.path });
    return p;
  }

  /** A parent for a new entry at `path` from a walk that found it missing, when the walk knows it (a plain path, no symlink on the way). */
  private parentFromWalk(path: string, m: Missing): ParentRef | undefined {
    if (m.dir === undefined) return undefined;
    const name = m.missing.slice(m.missing.lastIndexOf('/') + 1);
    checkNewName(name, m.missing);
    return { parent: m.dir.ino, name, path: m.missing, physicalDir: m.dir.physical, dirSyntax: false, attr: m.dir.ref };
  }

  tryResolve(path: string, follow = true): Resolved | undefined {
    const r = this.walk(path, follow);
    return 'missing' in r ? undefined : r;
  }

  // ---- reading ----

  stat(path: string, follow = true): Stat {
    return this.vault.store.read(() => {
      const r = this.resolve(path, follow);
      return this.toStat(r.path, r.attr);
    });
  }

  toStat(path: string, a: Attr): Stat {
    return statOf(path, a, kindOf(a.mode) === 'symlink' ? this.inodes.readlink(a.ino) : undefined);
  }

  /** Directory entries with their attributes, sorted by name (`.`/`..` are not listed). */
  readdir(path: string): DirEntry[] {
    return this.vault.store.read(() => {
      const dir = this.resolve(path, true);
      if (kindOf(dir.attr.mode) !== 'directory') throw err.notDir(dir.path);
      return this.inodes.readdirAttrs(dir.ino).map(({ name, attr: a }) => dirEntryOf(name, a, kindOf(a.mode) === 'symlink' ? this.inodes.readlink(a.ino) : undefined));
    });
  }

  /** Just the names in a directory, sorted (what `ls` without `-l` needs). */
  readdirNames(path: string): string[] {
    return this.vault.store.read(() => {
      const dir = this.resolve(path, true);
      if (kindOf(dir.attr.mode) !== 'directory') throw err.notDir(dir.path);
      return this.inodes.readdir(dir.ino).map((e) => e.name);
    });
  }

  readFile(path: string): Buffer {
    return this.vault.store.read(() => {
      // A plain path: the file's entry and its first piece in one lookup (InodeStore.lookupFile).
      if (impliedDirs(path).length === 0) {
        const r = this.walkTo(path, true, true);
        if ('missing' in r) throw err.notFound(r.missing);
        this.mustBeFile(r);
        return this.inodes.readFile(r.attr);
      }
      const r = this.resolve(path, true);
      this.mustBeFile(r);
      return this.inodes.readAll(r.ino, r.attr.size);
    });
  }

  read(path: string, offset: number, length: number): Buffer {
    return this.vault.store.read(() => {
      const r = this.resolve(path, true);
      this.mustBeFile(r);
      return this.inodes.read(r.ino, offset, length, r.attr.size);
    });
  }

  readlink(path: string): string {
    const r = this.resolve(path, false);
    if (kindOf(r.attr.mode) !== 'symlink') throw err.invalidInput(`not a symbolic link: ${r.path}`, { path: r.path });
    return this.inodes.readlink(r.ino) ?? '';
  }

  exists(path: string): boolean {
    return this.tryResolve(path, false) !== undefined;
  }

  // ---- writing ----

  /**
   * Creates or replaces a file's content (or appends). `data` is the bytes, or a sequence of
   * blocks for content too big to hold at once (each block is written as it comes, all in one
   * transaction, so a quota stops it at the first block past the limit). Returns the new attributes.
   */
  writeFile(path: string, data: Uint8Array | Iterable<Uint8Array>, opts: WriteOptions = {}): Attr {
    return this.mutate(path, () => {
      const found = this.walk(path, true);
      if (!('missing' in found)) {
        if (opts.exclusive) throw err.exists(found.path);
        this.mustBeFile(found);
        const attr = this.putContent(found.ino, found.attr, data, !!opts.append, found.path);
        this.vault.journal.append(opts.append ? 'append' : 'write', found.path, { size: attr.size });
        return attr;
      }
      const mode = S_IFREG | ((opts.mode ?? 0o644) & 0o7777);
      // The walk saw the name free in its directory (no entry, not even a dangling symlink), in this transaction.
      const known = this.parentFromWalk(path, found);
      if (known && data instanceof Uint8Array) {
        const attr = this.inodes.createFile(known.parent, known.name, { mode, pathForErrors: known.path, parentAttr: known.attr }, data);
        this.vault.journal.append('create', known.path, { size: attr.size });
        return attr;
      }
      const p = known ?? this.parentForNonDir(path);
      // A dangling symlink as the last component: POSIX open(O_CREAT) creates its target.
      const dangling = known ? undefined : this.inodes.lookup(p.parent, p.name);
      if (dangling !== undefined) {
        const target = this.inodes.readlink(dangling);
        if (target === undefined) throw err.exists(p.path);
        // Relative to the directory the link really sits in, not to the path as typed.
        const abs = target.startsWith('/') ? target : joinPath(p.physicalDir, target);
        return this.writeFile(abs, data, opts);
      }
      const created = this.inodes.create(p.parent, p.name, { mode, pathForErrors: p.path, parentAttr: p.attr });
      const attr = this.putContent(created.ino, created, data, false, p.path);
      this.vault.journal.append('create', p.path, { size: attr.size });
      return attr;
    });
  }

  private putContent(ino: number, attr: Attr, data: Uint8Array | Iterable<Uint8Array>, append: boolean, path: string): Attr {
    if (data instanceof Uint8Array) {
      return append ? this.inodes.write(ino, attr.size, data, path) : this.inodes.writeAll(ino, data, path, attr);
    }
    let a = append || attr.size === 0 ? attr : this.inodes.truncate(ino, 0, path);
    for (const block of data) a = this.inodes.write(ino, a.size, block, path);
    return a;
  }

  /**
   * For a write whose size is not known in advance (a stream): a check to call with the number
   * of bytes received so far. It throws the QuotaExceeded the write itself would, as soon as they
   * pass a quota, so the stream need not be read to its end. It judges against the usage seen
   * now; the write checks again inside its own transaction.
   */
  quotaProbe(path: string, opts: { append?: boolean } = {}): (received: number) => void {
    const existing = this.tryResolve(path, true);
    const old = existing && kindOf(existing.attr.mode) === 'file' ? existing.attr.size : 0;
    const shown = existing?.path ?? normalizePath(path);
    const used = this.inodes.counters().liveBytes;
    const quotas = this.inodes.quotas;
    return opts.append
      ? (received) => quotas.checkBytes(() => used, received, old + received, old, shown)
      : (received) => quotas.checkBytes(() => used, received - old, received, old, shown);
  }

  /** Creates a directory; with `parents`, also its missing ancestors, and an existing directory is fine. */
  mkdir(path: string, opts: { parents?: boolean; mode?: number; owner?: Owner } = {}): Attr {
    return this.mutate(path, () => {
      const parts = splitPath(path);
      if (parts.length === 0) {
        if (opts.parents) return this.inodes.mustGetattr(ROOT_INO);
        throw err.exists('/');
      }
      if (opts.parents) {
        let cur = '';
        let last: Attr | undefined;
        for (const part of parts) {
          cur += '/' + part;
          const r = this.tryResolve(cur, true);
          if (r) {
            if (kindOf(r.attr.mode) !== 'directory') throw err.notDir(cur);
            last = r.attr;
          } else {
            last = this.mkdirOne(cur, opts.mode, opts.owner);
          }
        }
        return last!;
      }
      return this.mkdirOne(path, opts.mode, opts.owner);
    });
  }

  private mkdirOne(path: string, mode = 0o755, owner?: Owner): Attr {
    const p = this.parentOf(path);
    if (this.inodes.lookup(p.parent, p.name) !== undefined) throw err.exists(p.path);
    const attr = this.inodes.create(p.parent, p.name, { mode: S_IFDIR | (mode & 0o7777), ...owner, pathForErrors: p.path });
    this.vault.journal.append('mkdir', p.path);
    return attr;
  }

  symlink(target: string, path: string, owner?: Owner): Attr {
    if (typeof target !== 'string' || target.length === 0 || target.includes('\0')) {
      throw err.invalidInput('a symlink target is a non-empty string without NUL bytes', { target });
    }
    checkNewName(target, path, 'symlink target');
    return this.mutate(path, () => {
      const p = this.parentForNonDir(path);
      if (this.inodes.lookup(p.parent, p.name) !== undefined) throw err.exists(p.path);
      const attr = this.inodes.create(p.parent, p.name, { mode: S_IFLNK | 0o777, target, ...owner, pathForErrors: p.path });
      this.vault.journal.append('symlink', p.path, { details: { target } });
      return attr;
    });
  }

  /**
   * mknod(2): a FIFO, a Unix socket or an empty regular file, with the type in `mode`. Device
   * nodes are refused (NotSupported): a vault is copied between hosts, where a device number
   * names nothing.
   */
  mknod(path: string, mode: number, owner?: Owner): Attr {
    const type = mode & S_IFMT;
    if (type !== S_IFIFO && type !== S_IFSOCK && type !== S_IFREG) {
      throw new AvfsError('NotSupported', `cannot create ${path}: a vault holds no device nodes`, { path, mode: '0' + mode.toString(8) });
    }
    return this.mutate(path, () => {
      const p = this.parentOf(path);
      if (this.inodes.lookup(p.parent, p.name) !== undefined) throw err.exists(p.path);
      const attr = this.inodes.create(p.parent, p.name, { mode: type | (mode & 0o7777), ...owner, pathForErrors: p.path });
      this.vault.journal.append(type === S_IFREG ? 'create' : 'mknod', p.path, { details: { type: kindOf(attr.mode) } });
      return attr;
    });
  }

  /** Adds a hard link `newPath` to the file at `existing`. */
  link(existing: string, newPath: string): Attr {
    return this.mutate(newPath, () => {
      const src = this.resolve(existing, false);
      if (kindOf(src.attr.mode) === 'directory') throw new AvfsError('PermissionDenied', `cannot hard-link a directory: ${src.path}`, { path: src.path });
      const p = this.parentForNonDir(newPath);
      if (this.inodes.lookup(p.parent, p.name) !== undefined) throw err.exists(p.path);
      const attr = this.inodes.link(src.ino, p.parent, p.name);
      this.vault.journal.append('link', p.path, { path2: src.path });
      return attr;
    });
  }

  /** Removes a file, symlink or (with `recursive`) a directory tree. `force` ignores a missing path. */
  rm(path: string, opts: { recursive?: boolean; force?: boolean; dirOnly?: boolean } = {}): { removed: number } {
    return this.mutate(path, () => {
      const r = this.tryResolve(path, false);
      if (!r) {
        if (opts.force) return { removed: 0 };
        throw err.notFound(path);
      }
      if (r.ino === ROOT_INO) throw err.invalidPath(path, 'the vault root cannot be removed');
      const p = this.parentOf(r.path, { existing: true });
      const isDir = kindOf(r.attr.mode) === 'directory';
      if (opts.dirOnly && !isDir) throw err.notDir(r.path);
      if (isDir && !opts.recursive && !opts.dirOnly) throw err.isDir(r.path);
      if (isDir && !opts.recursive && this.inodes.hasChildren(r.ino)) throw err.notEmpty(r.path);
      const removed = isDir ? this.removeTree(r.ino) : 0;
      this.inodes.unlink(p.parent, p.name);
      this.vault.journal.append(isDir ? 'rmdir' : 'unlink', r.path, { details: isDir ? { entries: removed + 1 } : undefined });
      return { removed: removed + 1 };
    });
  }

  private removeTree(dir: number): number {
    let n = 0;
    for (const { name, ino } of this.inodes.readdir(dir)) {
      const a = this.inodes.mustGetattr(ino);
      if (kindOf(a.mode) === 'directory') n += this.removeTree(ino);
      this.inodes.unlink(dir, name);
      n++;
    }
    return n;
  }

  /** POSIX rename: replaces a file target, or an empty directory target with a directory. */
  rename(src: string, dst: string): void {
    this.mutate(dst, () => {
      const s = this.resolve(src, false);
      if (s.ino === ROOT_INO) throw err.invalidPath(src, 'the vault root cannot be moved');
      const sp = this.parentOf(s.path, { existing: true });
      const sIsDir = kindOf(s.attr.mode) === 'directory';
      const dp = sIsDir ? this.parentOf(dst) : this.parentForNonDir(dst);
      // Compared with symlinks expanded: `mv /d /link-to-d/sub` must not make /d its own child.
      if (sIsDir && isWithin(dp.physicalDir, s.physical)) {
        throw err.invalidInput(`cannot move ${s.path} into itself (${dp.path})`, { path: s.path, target: dp.path });
      }
      const existing = this.inodes.lookup(dp.parent, dp.name);
      if (existing !== undefined && existing !== s.ino) {
        const ea = this.inodes.mustGetattr(existing);
        const eIsDir = kindOf(ea.mode) === 'directory';
        if (eIsDir && !sIsDir) throw err.isDir(dp.path);
        if (!eIsDir && sIsDir) throw err.notDir(dp.path);
        if (eIsDir && this.inodes.hasChildren(existing)) throw err.notEmpty(dp.path);
      }
      this.inodes.rename(sp.parent, sp.name, dp.parent, dp.name);
      this.vault.journal.append('rename', s.path, { path2: dp.path });
    });
  }

  /** Copies a file (sharing its chunks) or, with `recursive`, a tree. Symlinks are copied as links. */
  copy(src: string, dst: string, opts: { recursive?: boolean } = {}): { copied: number } {
    return this.mutate(dst, () => {
      const s = this.resolve(src, true);
      const isDir = kindOf(s.attr.mode) === 'directory';
      if (isDir && !opts.recursive) throw err.isDir(s.path);
      let target = dst;
      const existing = this.tryResolve(dst, true);
      const intoDir = existing !== undefined && kindOf(existing.attr.mode) === 'directory';
      const name = splitPath(s.path).pop() ?? '';
      if (isDir) {
        // Where the copy would land, symlinks expanded: never inside the source (`cp -r / /sub`, `cp -r /a /a/b`, `cp -r /a/b /a`).
        let landing: string;
        if (existing) landing = intoDir ? joinPath(existing.physical, name) : existing.physical;
        else {
          const into = this.parentOf(dst);
          landing = joinPath(into.physicalDir, into.name);
        }
        if (isWithin(landing, s.physical)) {
          throw err.invalidInput(`cannot copy ${s.path} into itself (${normalizePath(dst)})`, { path: s.path, target: normalizePath(dst) });
        }
      }
      if (intoDir) target = joinPath(existing.path, name);
      const copied = this.copyNode(s.ino, s.attr, target);
      this.vault.journal.append('copy', s.path, { path2: target, details: { entries: copied } });
      return { copied };
    });
  }

  private copyNode(ino: number, a: Attr, dst: string): number {
    const kind = kindOf(a.mode);
    if (kind === 'directory') {
      const existing = this.tryResolve(dst, true);
      if (!existing) this.mkdirOne(dst, a.mode & 0o7777);
      else if (kindOf(existing.attr.mode) !== 'directory') throw err.notDir(dst);
      let n = 1;
      for (const { name, ino: child } of this.inodes.readdir(ino)) {
        n += this.copyNode(child, this.inodes.mustGetattr(child), joinPath(dst, name));
      }
      return n;
    }
    if (kind === 'symlink') {
      const r = this.tryResolve(dst, false);
      if (r) this.rm(dst, {});
      this.symlink(this.inodes.readlink(ino) ?? '', dst);
      return 1;
    }
    if (kind === 'fifo' || kind === 'socket') {
      if (this.tryResolve(dst, false)) this.rm(dst, {});
      this.mknod(dst, a.mode);
      return 1;
    }
    let target = this.tryResolve(dst, true);
    if (target && kindOf(target.attr.mode) === 'directory') throw err.isDir(target.path);
    if (target && target.ino === ino) throw err.invalidInput(`${target.path} and the source are the same file`, { path: target.path });
    if (!target) {
      const p = this.parentForNonDir(dst);
      const created = this.inodes.create(p.parent, p.name, { mode: S_IFREG | (a.mode & 0o7777), pathForErrors: p.path });
      target = { ino: created.ino, attr: created, path: p.path, physical: joinPath(p.physicalDir, p.name) };
    }
    this.inodes.copyContent(ino, target.ino, target.path);
    return 1;
  }

  truncate(path: string, size: number): Attr {
    if (!Number.isSafeInteger(size) || size < 0) throw err.invalidInput(`invalid size ${size}`, { size });
    return this.mutate(path, () => {
      const r = this.resolve(path, true);
      this.mustBeFile(r);
      const attr = this.inodes.truncate(r.ino, size, r.path);
      this.vault.journal.append('truncate', r.path, { size });
      return attr;
    });
  }

  /** chmod / chown / utimes. */
  setattr(path: string, attrs: SetAttr, follow = true): Attr {
    return this.mutate(path, () => {
      const r = this.resolve(path, follow);
      const attr = this.inodes.setattr(r.ino, attrs);
      this.vault.journal.append('setattr', r.path, {
        details: {
          ...(attrs.mode !== undefined ? { mode: modeString(attrs.mode) } : {}),
          ...(attrs.uid !== undefined ? { uid: attrs.uid } : {}),
          ...(attrs.gid !== undefined ? { gid: attrs.gid } : {}),
          ...(attrs.mtime !== undefined ? { mtime_ns: attrs.mtime.toString() } : {}),
        },
      });
      return attr;
    });
  }

  /** Runs a mutation: refuses it on a read-only vault, else runs it in one IMMEDIATE transaction. */
  mutate<T>(path: string, fn: () => T): T {
    if (this.readonly) throw err.readOnly(path, this.vault.readonlyReason);
    return this.vault.store.write(fn);
  }

  private mustBeFile(r: Resolved<FileRef>): void {
    const k = kindOf(r.attr.mode);
    if (k === 'directory') throw err.isDir(r.path);
    if (k !== 'file') throw err.invalidInput(`not a regular file: ${r.path}`, { path: r.path });
  }
}

