/**
 * Import of a host directory into a vault and export of a vault directory to the host. Both keep
 * modes, mtimes, symlinks, hard links, FIFOs and Unix sockets, and refuse (before writing
 * anything) a symlink whose target would leave the tree being copied. What cannot be kept (device
 * nodes) is skipped and listed in the result. Neither replaces an existing entry without `force`.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError, err, toAvfsError } from '../protocol/errors';
import { kindOf, type Kind } from '../store/inodes';
import { joinPath, normalizePath } from './paths';
import type { Vfs } from './vfs';

export interface SkippedEntry {
  path: string;
  type: string;
  reason: string;
}

export interface TransferStats {
  files: number;
  dirs: number;
  symlinks: number;
  hardlinks: number;
  /** FIFOs and Unix sockets. */
  special: number;
  /** Bytes of file content written (what was read, not what the host's stat said). */
  bytes: number;
  skipped: SkippedEntry[];
}

const emptyStats = (): TransferStats => ({ files: 0, dirs: 0, symlinks: 0, hardlinks: 0, special: 0, bytes: 0, skipped: [] });

/**
 * A host file-system error as a typed error that names the host path. An errno the error table
 * has no kind for (EIO, ENXIO, …) is the host's storage failing, not a bug in avfs: StorageError.
 */
function hostError(e: unknown, what: string, hostPath: string): AvfsError {
  if (e instanceof AvfsError) return e;
  const a = toAvfsError(e);
  const code = (e as NodeJS.ErrnoException).code;
  const kind = a.kind === 'Internal' && code !== undefined ? 'StorageError' : a.kind;
  return new AvfsError(kind, `cannot ${what} ${hostPath}: ${code ?? a.message}`, { ...a.details, path: hostPath });
}

function onHost<T>(what: string, hostPath: string, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    throw hostError(e, what, hostPath);
  }
}

/**
 * True if a symlink at `relDir` (relative to the tree root) whose text is `target` resolves inside
 * the tree. Absolute targets never do. `..` is taken the way the OS takes it: stepping back out of
 * a component that is itself a symlink in the tree goes wherever that link points, so it is refused.
 */
export function staysInside(relDir: string, target: string, isSymlink: (rel: string) => boolean): boolean {
  if (target.startsWith('/')) return false;
  const at = relDir ? relDir.split('/') : [];
  for (const c of target.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (at.length === 0) return false;
      if (isSymlink(at.join('/'))) return false;
      at.pop();
    } else {
      at.push(c);
    }
  }
  return true;
}

/** What a host entry becomes in the vault, or why it cannot be kept. */
type HostKind = Exclude<Kind, 'other'> | { skip: string; type: string };

function hostKind(st: fs.Stats | fs.BigIntStats): HostKind {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'directory';
  if (st.isFile()) return 'file';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  const type = st.isBlockDevice() ? 'block-device' : st.isCharacterDevice() ? 'char-device' : 'unknown';
  return { skip: 'a vault holds no device nodes', type };
}

interface HostNode {
  rel: string;
  kind: Exclude<Kind, 'other'>;
  mode: number;
  nlink: number;
  /** dev:ino, to find hard links. */
  id: string;
  mtimeNs: bigint;
  target?: string;
}

/** Leaves out (a directory with all it holds) what `leaveOut` says, by path relative to the tree root. */
export type LeaveOut = (rel: string, isDir: boolean) => boolean;

function scanHost(root: string, skipped: SkippedEntry[], leaveOut?: LeaveOut): HostNode[] {
  const out: HostNode[] = [];
  const hostIsSymlink = (r: string) => {
    try {
      return fs.lstatSync(path.join(root, r)).isSymbolicLink();
    } catch {
      return false;
    }
  };
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    for (const name of onHost('read directory', abs, () => fs.readdirSync(abs)).sort()) {
      const childRel = rel ? `${rel}/${name}` : name;
      const hostPath = path.join(root, childRel);
      const st = onHost('stat', hostPath, () => fs.lstatSync(hostPath, { bigint: true }));
      const kind = hostKind(st);
      if (leaveOut?.(childRel, kind === 'directory')) continue;
      if (typeof kind === 'object') {
        skipped.push({ path: hostPath, type: kind.type, reason: kind.skip });
        continue;
      }
      const node: HostNode = { rel: childRel, kind, mode: Number(st.mode), nlink: Number(st.nlink), id: `${st.dev}:${st.ino}`, mtimeNs: st.mtimeNs };
      if (kind === 'symlink') {
        const target = onHost('read link', hostPath, () => fs.readlinkSync(hostPath));
        if (!staysInside(rel, target, hostIsSymlink)) {
          throw new AvfsError('UnsafeSymlink', `refusing symlink ${childRel} -> ${target}: it points outside ${root}`, {
            path: childRel,
            target,
          });
        }
        node.target = target;
      }
      out.push(node);
      if (kind === 'directory') walk(childRel);
    }
  };
  walk('');
  return out;
}

/** Removes what is at `dst` so an import can put something else there; refused without `force`. */
function makeRoom(vfs: Vfs, dst: string, keepDirectory: boolean, force: boolean): void {
  const existing = vfs.tryResolve(dst, false);
  if (!existing) return;
  const isDir = kindOf(existing.attr.mode) === 'directory';
  if (isDir && keepDirectory) return;
  if (!force) throw new AvfsError('AlreadyExists', `vault path exists: ${existing.path} (use --force to replace it)`, { path: existing.path });
  vfs.rm(dst, { recursive: true });
}

/**
 * Copies the host file or directory `hostPath` into the vault at `vaultDir`, in one transaction
 * (a failure leaves nothing behind). Existing vault entries are replaced only with `force`;
 * directories are merged.
 */
export function importTree(vfs: Vfs, hostPath: string, vaultDir: string, opts: { force?: boolean; leaveOut?: LeaveOut } = {}): TransferStats {
  const force = !!opts.force;
  let rootStat: fs.Stats;
  try {
    rootStat = fs.lstatSync(hostPath);
  } catch (e) {
    throw hostError(e, 'read', hostPath);
  }
  if (rootStat.isSymbolicLink()) throw new AvfsError('UnsafeSymlink', `refusing to import a symlink as the root: ${hostPath}`, { path: hostPath });
  const base = normalizePath(vaultDir);
  const stats = emptyStats();
  const source = path.resolve(hostPath);
  if (!rootStat.isDirectory()) {
    const kind = hostKind(rootStat);
    if (typeof kind === 'object') {
      throw new AvfsError('NotSupported', `cannot import ${hostPath}: ${kind.skip} (${kind.type})`, { path: hostPath, type: kind.type });
    }
    const at = vfs.tryResolve(base);
    const dst = at && kindOf(at.attr.mode) === 'directory' ? joinPath(at.path, path.basename(hostPath)) : base;
    const mtime = onHost('stat', hostPath, () => fs.lstatSync(hostPath, { bigint: true }).mtimeNs);
    vfs.mutate(dst, () => {
      makeRoom(vfs, dst, false, force);
      if (kind === 'file') {
        // Read, not stat'ed: files such as /proc/self/status say size 0 and hold bytes.
        const data = onHost('read', hostPath, () => fs.readFileSync(hostPath));
        vfs.writeFile(dst, data, { mode: rootStat.mode });
        stats.files = 1;
        stats.bytes = data.length;
      } else {
        vfs.mknod(dst, rootStat.mode);
        stats.special = 1;
      }
      vfs.setattr(dst, { mode: rootStat.mode, mtime });
      vfs.vault.journal.append('import', dst, { size: stats.bytes, details: { source } });
    });
    return stats;
  }
  const nodes = scanHost(hostPath, stats.skipped, opts.leaveOut);
  const seen = new Map<string, string>();
  const dirTimes: Array<[string, bigint]> = [];
  vfs.mutate(base, () => {
    vfs.mkdir(base, { parents: true });
    for (const n of nodes) {
      const dst = joinPath(base, n.rel);
      const mtime = n.mtimeNs;
      makeRoom(vfs, dst, n.kind === 'directory', force);
      switch (n.kind) {
        case 'symlink':
          vfs.symlink(n.target!, dst);
          vfs.setattr(dst, { mtime }, false);
          stats.symlinks++;
          break;
        case 'directory':
          if (!vfs.exists(dst)) vfs.mkdir(dst, { mode: n.mode });
          vfs.setattr(dst, { mode: n.mode });
          dirTimes.push([dst, mtime]);
          stats.dirs++;
          break;
        case 'fifo':
        case 'socket':
          vfs.mknod(dst, n.mode);
          vfs.setattr(dst, { mode: n.mode, mtime });
          stats.special++;
          break;
        case 'file': {
          const first = n.nlink > 1 ? seen.get(n.id) : undefined;
          if (first !== undefined) {
            vfs.link(first, dst);
            stats.hardlinks++;
            break;
          }
          if (n.nlink > 1) seen.set(n.id, dst);
          const hostFile = path.join(hostPath, n.rel);
          const data = onHost('read', hostFile, () => fs.readFileSync(hostFile));
          vfs.writeFile(dst, data, { mode: n.mode });
          vfs.setattr(dst, { mode: n.mode, mtime });
          stats.files++;
          stats.bytes += data.length;
          break;
        }
      }
    }
    // Directory mtimes last: adding children above bumped them.
    for (const [dst, mtime] of dirTimes.reverse()) vfs.setattr(dst, { mtime });
    const { skipped, ...counts } = stats;
    vfs.vault.journal.append('import', base, { size: stats.bytes, details: { source, ...counts, skipped: skipped.length } });
  });
  return stats;
}

interface VaultNode {
  rel: string;
  ino: number;
  mode: number;
  mtime: bigint;
  nlink: number;
  target?: string;
}

function scanVault(vfs: Vfs, dirIno: number, rel: string, out: VaultNode[]): void {
  for (const { name, ino } of vfs.inodes.readdir(dirIno)) {
    const a = vfs.inodes.mustGetattr(ino);
    const childRel = rel ? `${rel}/${name}` : name;
    const kind = kindOf(a.mode);
    if (kind === 'symlink') {
      out.push({ rel: childRel, ino, mode: a.mode, mtime: a.mtime, nlink: a.nlink, target: vfs.inodes.readlink(ino) ?? '' });
    } else {
      out.push({ rel: childRel, ino, mode: a.mode, mtime: a.mtime, nlink: a.nlink });
      if (kind === 'directory') scanVault(vfs, ino, childRel, out);
    }
  }
}

function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

/** Seconds as a double, to the microsecond (what utimes can carry). */
const toSeconds = (ns: bigint): number => Number(ns / 1000n) / 1e6;

/**
 * Makes a FIFO or a Unix socket on the host (Node has no mknod): `mkfifo`, or a socket bound by a
 * short-lived Node process under a temporary name and renamed into place, so the socket file
 * outlives it (libuv removes a socket it closes, not one renamed away).
 */
function makeSpecialOnHost(kind: 'fifo' | 'socket', dst: string, mode: number): void {
  onHost(`create ${kind}`, dst, () => {
    if (kind === 'fifo') {
      execFileSync('mkfifo', ['-m', (mode & 0o7777).toString(8), '--', dst], { stdio: ['ignore', 'ignore', 'pipe'] });
      return;
    }
    const tmp = path.join(path.dirname(dst), `.avfs-sock-${process.pid}-${Date.now()}`);
    const script = "const [t,d]=process.argv.slice(1);require('net').createServer().listen(t,()=>{require('fs').renameSync(t,d);process.exit(0)})";
    execFileSync(process.execPath, ['-e', script, tmp, dst], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 });
    fs.chmodSync(dst, mode & 0o7777);
  });
}

/** Copies the vault directory `vaultDir` to the host directory `hostDir`. Existing host files are only replaced with `force`. */
export function exportTree(vfs: Vfs, vaultDir: string, hostDir: string, opts: { force?: boolean } = {}): TransferStats {
  const stats = emptyStats();
  const src = vfs.resolve(vaultDir, true);
  const nodes: VaultNode[] = [];
  const srcKind = kindOf(src.attr.mode);
  if (srcKind === 'file' || srcKind === 'fifo' || srcKind === 'socket') {
    const dst = fs.existsSync(hostDir) && fs.statSync(hostDir).isDirectory() ? path.join(hostDir, path.posix.basename(src.path)) : hostDir;
    if (lstatOrUndefined(dst) && !opts.force) throw new AvfsError('AlreadyExists', `host file exists: ${dst} (use --force)`, { path: dst });
    onHost('replace', dst, () => fs.rmSync(dst, { force: true })); // a symlink there is replaced, never written through
    if (srcKind !== 'file') {
      makeSpecialOnHost(srcKind, dst, src.attr.mode);
      onHost('set times of', dst, () => fs.utimesSync(dst, toSeconds(src.attr.atime), toSeconds(src.attr.mtime)));
      return { ...stats, special: 1 };
    }
    const data = vfs.inodes.readAll(src.ino);
    onHost('write', dst, () => {
      fs.writeFileSync(dst, data, { mode: src.attr.mode & 0o7777 });
      fs.chmodSync(dst, src.attr.mode & 0o7777);
      fs.utimesSync(dst, toSeconds(src.attr.atime), toSeconds(src.attr.mtime));
    });
    return { ...stats, files: 1, bytes: data.length };
  }
  if (srcKind !== 'directory') throw err.invalidInput(`cannot export ${src.path}: not a file or directory`);
  scanVault(vfs, src.ino, '', nodes);
  const links = new Set(nodes.filter((n) => n.target !== undefined).map((n) => n.rel));
  for (const n of nodes) {
    if (n.target === undefined) continue;
    const dir = n.rel.includes('/') ? n.rel.slice(0, n.rel.lastIndexOf('/')) : '';
    if (!staysInside(dir, n.target, (r) => links.has(r))) {
      throw new AvfsError('UnsafeSymlink', `refusing symlink /${n.rel} -> ${n.target}: it points outside the exported tree`, {
        path: '/' + n.rel,
        target: n.target,
      });
    }
  }
  // Nothing is written through a symlink already on the host: a directory that is a link there is
  // refused, and a file that is a link is replaced (with --force), never written through.
  for (const n of nodes) {
    const dst = path.join(hostDir, n.rel);
    const existing = lstatOrUndefined(dst);
    if (!existing) continue;
    if (kindOf(n.mode) === 'directory') {
      if (existing.isSymbolicLink() || !existing.isDirectory()) {
        throw new AvfsError('UnsafeSymlink', `refusing to export into ${dst}: it exists on the host and is not a plain directory`, { path: dst });
      }
    } else if (!opts.force) {
      throw new AvfsError('AlreadyExists', `host file exists: ${dst} (use --force to replace)`, { path: dst });
    }
  }
  onHost('create directory', hostDir, () => fs.mkdirSync(hostDir, { recursive: true }));
  const linked = new Map<number, string>();
  const dirs: VaultNode[] = [];
  for (const n of nodes) {
    const dst = path.join(hostDir, n.rel);
    const kind = kindOf(n.mode);
    if (kind === 'directory') {
      onHost('create directory', dst, () => fs.mkdirSync(dst, { recursive: true }));
      dirs.push(n);
      stats.dirs++;
      continue;
    }
    onHost('replace', dst, () => fs.rmSync(dst, { force: true, recursive: true }));
    if (kind === 'symlink') {
      onHost('create symlink', dst, () => fs.symlinkSync(n.target!, dst));
      stats.symlinks++;
      continue;
    }
    if (kind === 'fifo' || kind === 'socket') {
      makeSpecialOnHost(kind, dst, n.mode);
      onHost('set times of', dst, () => fs.utimesSync(dst, toSeconds(n.mtime), toSeconds(n.mtime)));
      stats.special++;
      continue;
    }
    const first = n.nlink > 1 ? linked.get(n.ino) : undefined;
    if (first) {
      onHost('link', dst, () => fs.linkSync(first, dst));
      stats.hardlinks++;
      continue;
    }
    if (n.nlink > 1) linked.set(n.ino, dst);
    const data = vfs.inodes.readAll(n.ino);
    onHost('write', dst, () => {
      fs.writeFileSync(dst, data);
      fs.chmodSync(dst, n.mode & 0o7777);
      fs.utimesSync(dst, toSeconds(n.mtime), toSeconds(n.mtime));
    });
    stats.files++;
    stats.bytes += data.length;
  }
  for (const d of dirs.reverse()) {
    const dst = path.join(hostDir, d.rel);
    onHost('set mode and times of', dst, () => {
      fs.chmodSync(dst, d.mode & 0o7777);
      fs.utimesSync(dst, toSeconds(d.mtime), toSeconds(d.mtime));
    });
  }
  return stats;
}
