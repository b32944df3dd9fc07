/**
 * Import of a host directory into a vault and export of a vault directory to the host. Both keep
 * modes, mtimes, symlinks and hard links, and refuse (before writing anything) a symlink whose
 * target would leave the tree being copied.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError, err } from '../protocol/errors';
import { kindOf } from '../store/inodes';
import { joinPath, normalizePath } from './paths';
import type { Vfs } from './vfs';

export interface TransferStats {
  files: number;
  dirs: number;
  symlinks: number;
  hardlinks: number;
  bytes: number;
}

const emptyStats = (): TransferStats => ({ files: 0, dirs: 0, symlinks: 0, hardlinks: 0, bytes: 0 });

/**
 * True if a symlink at `relDir` (relative to the tree root) whose text is `target` resolves inside
 * the tree. Absolute targets never do. `..` is taken the way the OS takes it: stepping back out of
 * a component that is itself a symlink in the tree goes wherever that link points, so it is refused.
 */
function staysInside(relDir: string, target: string, isSymlink: (rel: string) => boolean): boolean {
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

interface HostNode {
  rel: string;
  stat: fs.Stats;
  mtimeNs: bigint;
  target?: string;
}

const mtimeOf = (p: string): bigint => fs.lstatSync(p, { bigint: true }).mtimeNs;

function scanHost(root: string): HostNode[] {
  const out: HostNode[] = [];
  const walk = (rel: string): void => {
    const abs = path.join(root, rel);
    for (const name of fs.readdirSync(abs).sort()) {
      const childRel = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(path.join(root, childRel));
      if (st.isSymbolicLink()) {
        const target = fs.readlinkSync(path.join(root, childRel));
        const hostIsSymlink = (r: string) => {
          try {
            return fs.lstatSync(path.join(root, r)).isSymbolicLink();
          } catch {
            return false;
          }
        };
        if (!staysInside(rel, target, hostIsSymlink)) {
          throw new AvfsError('UnsafeSymlink', `refusing symlink ${childRel} -> ${target}: it points outside ${root}`, {
            path: childRel,
            target,
          });
        }
        out.push({ rel: childRel, stat: st, mtimeNs: mtimeOf(path.join(root, childRel)), target });
      } else if (st.isDirectory()) {
        out.push({ rel: childRel, stat: st, mtimeNs: mtimeOf(path.join(root, childRel)) });
        walk(childRel);
      } else if (st.isFile()) {
        out.push({ rel: childRel, stat: st, mtimeNs: mtimeOf(path.join(root, childRel)) });
      }
      // sockets, fifos and devices are skipped: a vault holds files, directories and links
    }
  };
  walk('');
  return out;
}

/** Copies the host directory `hostDir` into the vault directory `vaultDir`, in one transaction. */
export function importTree(vfs: Vfs, hostDir: string, vaultDir: string): TransferStats {
  let rootStat: fs.Stats;
  try {
    rootStat = fs.lstatSync(hostDir);
  } catch {
    throw new AvfsError('NotFound', `host path not found: ${hostDir}`, { path: hostDir });
  }
  if (rootStat.isSymbolicLink()) throw new AvfsError('UnsafeSymlink', `refusing to import a symlink as the root: ${hostDir}`, { path: hostDir });
  const base = normalizePath(vaultDir);
  const stats = emptyStats();
  if (rootStat.isFile()) {
    const at = vfs.tryResolve(base);
    const dst = at && kindOf(at.attr.mode) === 'directory' ? joinPath(at.path, path.basename(hostDir)) : base;
    vfs.mutate(dst, () => {
      vfs.writeFile(dst, fs.readFileSync(hostDir), { mode: rootStat.mode });
      vfs.setattr(dst, { mode: rootStat.mode, mtime: mtimeOf(hostDir) });
      vfs.vault.journal.append('import', dst, { size: rootStat.size, details: { source: path.resolve(hostDir) } });
    });
    return { ...stats, files: 1, bytes: rootStat.size };
  }
  if (!rootStat.isDirectory()) throw err.invalidInput(`not a file or directory: ${hostDir}`, { path: hostDir });
  const nodes = scanHost(hostDir);
  const seen = new Map<string, string>();
  const dirTimes: Array<[string, bigint]> = [];
  vfs.mutate(base, () => {
    vfs.mkdir(base, { parents: true });
    for (const n of nodes) {
      const dst = joinPath(base, n.rel);
      const mtime = n.mtimeNs;
      if (n.target !== undefined) {
        if (vfs.exists(dst)) vfs.rm(dst, { recursive: true });
        vfs.symlink(n.target, dst);
        vfs.setattr(dst, { mtime }, false);
        stats.symlinks++;
      } else if (n.stat.isDirectory()) {
        const existing = vfs.tryResolve(dst, false);
        if (existing && kindOf(existing.attr.mode) !== 'directory') vfs.rm(dst, {});
        if (!existing || kindOf(existing.attr.mode) !== 'directory') vfs.mkdir(dst, { mode: n.stat.mode });
        vfs.setattr(dst, { mode: n.stat.mode });
        dirTimes.push([dst, mtime]);
        stats.dirs++;
      } else {
        const key = `${n.stat.dev}:${n.stat.ino}`;
        const first = n.stat.nlink > 1 ? seen.get(key) : undefined;
        const existing = vfs.tryResolve(dst, false);
        if (existing) vfs.rm(dst, { recursive: true });
        if (first !== undefined) {
          vfs.link(first, dst);
          stats.hardlinks++;
          continue;
        }
        if (n.stat.nlink > 1) seen.set(key, dst);
        const data = fs.readFileSync(path.join(hostDir, n.rel));
        vfs.writeFile(dst, data, { mode: n.stat.mode });
        vfs.setattr(dst, { mode: n.stat.mode, mtime });
        stats.files++;
        stats.bytes += data.length;
      }
    }
    // Directory mtimes last: adding children above bumped them.
    for (const [dst, mtime] of dirTimes.reverse()) vfs.setattr(dst, { mtime });
    vfs.vault.journal.append('import', base, { size: stats.bytes, details: { source: path.resolve(hostDir), ...stats } });
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

/** Seconds as a double, to the microsecond (what utimes can carry). */
function lstatOrUndefined(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

const toSeconds = (ns: bigint): number => Number(ns / 1000n) / 1e6;

/** Copies the vault directory `vaultDir` to the host directory `hostDir`. Existing host files are only replaced with `force`. */
export function exportTree(vfs: Vfs, vaultDir: string, hostDir: string, opts: { force?: boolean } = {}): TransferStats {
  const stats = emptyStats();
  const src = vfs.resolve(vaultDir, true);
  const nodes: VaultNode[] = [];
  if (kindOf(src.attr.mode) === 'file') {
    const dst = fs.existsSync(hostDir) && fs.statSync(hostDir).isDirectory() ? path.join(hostDir, path.posix.basename(src.path)) : hostDir;
    if (lstatOrUndefined(dst) && !opts.force) throw new AvfsError('AlreadyExists', `host file exists: ${dst} (use --force)`, { path: dst });
    fs.rmSync(dst, { force: true }); // a symlink there is replaced, never written through
    fs.writeFileSync(dst, vfs.inodes.readAll(src.ino), { mode: src.attr.mode & 0o7777 });
    fs.chmodSync(dst, src.attr.mode & 0o7777);
    fs.utimesSync(dst, toSeconds(src.attr.atime), toSeconds(src.attr.mtime));
    return { ...stats, files: 1, bytes: src.attr.size };
  }
  if (kindOf(src.attr.mode) !== 'directory') throw err.invalidInput(`cannot export ${src.path}: not a file or directory`);
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
  fs.mkdirSync(hostDir, { recursive: true });
  const linked = new Map<number, string>();
  const dirs: VaultNode[] = [];
  for (const n of nodes) {
    const dst = path.join(hostDir, n.rel);
    const kind = kindOf(n.mode);
    if (kind === 'directory') {
      fs.mkdirSync(dst, { recursive: true });
      dirs.push(n);
      stats.dirs++;
      continue;
    }
    fs.rmSync(dst, { force: true, recursive: true });
    if (kind === 'symlink') {
      fs.symlinkSync(n.target!, dst);
      stats.symlinks++;
      continue;
    }
    const first = n.nlink > 1 ? linked.get(n.ino) : undefined;
    if (first) {
      fs.linkSync(first, dst);
      stats.hardlinks++;
      continue;
    }
    if (n.nlink > 1) linked.set(n.ino, dst);
    const data = vfs.inodes.readAll(n.ino);
    fs.writeFileSync(dst, data);
    fs.chmodSync(dst, n.mode & 0o7777);
    fs.utimesSync(dst, toSeconds(n.mtime), toSeconds(n.mtime));
    stats.files++;
    stats.bytes += data.length;
  }
  for (const d of dirs.reverse()) {
    const dst = path.join(hostDir, d.rel);
    fs.chmodSync(dst, d.mode & 0o7777);
    fs.utimesSync(dst, toSeconds(d.mtime), toSeconds(d.mtime));
  }
  return stats;
}
