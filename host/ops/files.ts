/**
 * File operations (`fs/*`): what a FileSystemProvider needs, and the CLI's file commands. Paths
 * are absolute vault paths, checked here for every caller; the vfs does the rest.
 */
import { TextDecoder } from 'node:util';
import { resolve as resolveHostPath, isAbsolute } from 'node:path';
import { AvfsError, err } from '../protocol/errors';
import type { FileText, TreeNode } from '../protocol/files';
import type { MethodParamsParsed, MethodResult } from '../protocol/methods';
import type { DirEntry } from '../protocol/vault';
import { kindOf } from '../store/inodes';
import { checkVaultPath, joinPath, normalizePath, splitPath } from '../vfs/paths';
import { exportTree, importTree } from '../vfs/transfer';
import { isoTime, modeString, Vfs } from '../vfs/vfs';
import type { OpsContext, OpsTable } from './context';
import { reading, writing } from './vaultAccess';

const vaultPath = (p: string) => checkVaultPath(p);

function readVfs<T>(ctx: OpsContext, vault: string | undefined, fn: (vfs: Vfs) => T): T {
  return reading(ctx, vault, (v) => fn(new Vfs(v)));
}

function writeVfs<T>(ctx: OpsContext, vault: string | undefined, fn: (vfs: Vfs) => T): T {
  return writing(ctx, vault, (v) => fn(new Vfs(v)));
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function decodeText(data: Buffer): string | undefined {
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}

type WriteParams = MethodParamsParsed<'fs/writeFile'>;
type WriteResult = MethodResult<'fs/writeFile'>;

/**
 * fs/writeFile's rules, for bytes in memory or a sequence of blocks (a stream too big to hold):
 * create / overwrite / append, missing parents, all in one transaction.
 */
export function writeContent(
  vfs: Vfs,
  path: string,
  data: Uint8Array | Iterable<Uint8Array>,
  written: () => number,
  opts: Omit<WriteParams, 'vault' | 'path' | 'data'>,
): WriteResult {
  return vfs.mutate(path, () => {
    const existed = vfs.exists(path);
    if (!existed && !opts.create) throw err.notFound(normalizePath(path));
    if (opts.parents) vfs.mkdir('/' + splitPath(path).slice(0, -1).join('/'), { parents: true });
    const attr = vfs.writeFile(path, data, {
      append: opts.append,
      exclusive: existed && !opts.overwrite && !opts.append,
      ...(opts.mode !== undefined ? { mode: opts.mode } : {}),
    });
    return { path: normalizePath(path), size: attr.size, written: written(), appended: opts.append, created: !existed };
  });
}

/** The blocks of an input of unknown size (the CLI's standard input), held in memory or a temporary file. */
export interface Spooled {
  readonly size: number;
  blocks(): Iterable<Buffer>;
  dispose(): void;
}

/**
 * fs/writeFile with the bytes from a stream: `spool` reads it, calling `check` with the running
 * total so a quota stops it as soon as the input passes it, before the write itself.
 */
export async function writeFromStream(
  ctx: OpsContext,
  p: Omit<WriteParams, 'data'>,
  spool: (check: (received: number) => void) => Promise<Spooled>,
): Promise<WriteResult> {
  const path = vaultPath(p.path);
  return writing(ctx, p.vault, async (v) => {
    const vfs = new Vfs(v);
    const s = await spool(vfs.quotaProbe(path, { append: p.append }));
    try {
      return writeContent(vfs, path, s.blocks(), () => s.size, p);
    } finally {
      s.dispose();
    }
  });
}

function buildTree(vfs: Vfs, path: string, name: string, depth: number, maxDepth: number, all: boolean): TreeNode {
  const st = vfs.stat(path, false);
  const node: TreeNode = { name, type: st.type, size: st.size, ...(st.target !== undefined ? { target: st.target } : {}) };
  if (st.type === 'directory' && depth < maxDepth) {
    node.children = vfs
      .readdir(path)
      .filter((e) => all || !e.name.startsWith('.'))
      .map((e) => buildTree(vfs, joinPath(path, e.name), e.name, depth + 1, maxDepth, all));
  }
  return node;
}

/** A host path as the caller meant it: absolute, or taken from the caller's working directory. */
function hostPath(p: { host_path: string; host_cwd?: string | undefined }): string {
  if (isAbsolute(p.host_path)) return p.host_path;
  if (p.host_cwd === undefined || !isAbsolute(p.host_cwd)) {
    throw new AvfsError('InvalidInput', `host path ${JSON.stringify(p.host_path)} is relative: give an absolute path, or host_cwd`, { field: 'host_path', value: p.host_path });
  }
  return resolveHostPath(p.host_cwd, p.host_path);
}

export const fileOps = {
  'fs/stat': (ctx, p) => readVfs(ctx, p.vault, (vfs) => vfs.stat(vaultPath(p.path), p.follow)),

  'fs/readDirectory': (ctx, p) =>
    readVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      let entries: DirEntry[];
      if (p.list_file) {
        const st = vfs.stat(path, true);
        entries =
          st.type === 'directory'
            ? vfs.readdir(path)
            : [{ name: splitPath(path).pop() ?? '/', type: st.type, size: st.size, modified: st.mtime, ino: st.ino, mode: st.mode, nlink: st.nlink }];
      } else {
        entries = vfs.readdir(path);
      }
      if (!p.all) entries = entries.filter((e) => !e.name.startsWith('.'));
      return { path: normalizePath(path), entries };
    }),

  'fs/readFile': (ctx, p) =>
    readVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      const data = vfs.readFile(path);
      return { path: normalizePath(path), size: data.length, data: data.toString('base64') };
    }),

  'fs/readText': (ctx, p) =>
    readVfs(ctx, p.vault, (vfs): FileText => {
      const path = vaultPath(p.path);
      const data = vfs.readFile(path);
      const text = decodeText(data);
      return text !== undefined
        ? { path: normalizePath(path), size: data.length, encoding: 'utf8', content: text }
        : { path: normalizePath(path), size: data.length, encoding: 'base64', content: data.toString('base64') };
    }),

  'fs/writeFile': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const data = Buffer.from(p.data, 'base64');
      return writeContent(vfs, vaultPath(p.path), data, () => data.length, p);
    }),

  'fs/createDirectory': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      return vfs.mutate(path, () => {
        const existed = p.parents && vfs.tryResolve(path, true) !== undefined;
        vfs.mkdir(path, { parents: p.parents, ...(p.mode !== undefined ? { mode: p.mode } : {}) });
        return { path: normalizePath(path), created: !existed };
      });
    }),

  'fs/delete': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      const { removed } = vfs.rm(path, { recursive: p.recursive, force: p.force, dirOnly: p.directory_only });
      return { path: normalizePath(path), removed };
    }),

  'fs/rename': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const from = vaultPath(p.from);
      let to = vaultPath(p.to);
      return vfs.mutate(to, () => {
        if (p.into_directory) {
          const target = vfs.tryResolve(to, true);
          if (target && kindOf(target.attr.mode) === 'directory' && kindOf(vfs.resolve(from, false).attr.mode) !== 'directory') {
            to = joinPath(target.path, splitPath(from).pop() ?? '');
          }
        }
        if (!p.overwrite && vfs.exists(to)) throw err.exists(normalizePath(to));
        vfs.rename(from, to);
        return { from: normalizePath(from), to: normalizePath(to) };
      });
    }),

  'fs/copy': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const from = vaultPath(p.from);
      const to = vaultPath(p.to);
      return vfs.mutate(to, () => {
        if (!p.overwrite && vfs.exists(to)) throw err.exists(normalizePath(to));
        const { copied } = vfs.copy(from, to, { recursive: p.recursive });
        return { from: normalizePath(from), to: normalizePath(to), copied };
      });
    }),

  'fs/link': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      if (p.symbolic) vfs.symlink(p.target, path);
      else vfs.link(vaultPath(p.target), path);
      return { path: normalizePath(path), target: p.target, symbolic: p.symbolic };
    }),

  'fs/chmod': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      const attr = vfs.setattr(path, { mode: p.mode });
      return { path: normalizePath(path), mode: modeString(attr.mode) };
    }),

  'fs/touch': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      const now = BigInt(Date.now()) * 1_000_000n;
      const attr = vfs.mutate(path, () =>
        vfs.exists(path) ? vfs.setattr(path, { atime: now, mtime: now }) : vfs.writeFile(path, Buffer.alloc(0), { exclusive: true }),
      );
      return { path: normalizePath(path), mtime: isoTime(attr.mtime) };
    }),

  'fs/tree': (ctx, p) =>
    readVfs(ctx, p.vault, (vfs) => {
      const path = vaultPath(p.path);
      const shown = normalizePath(path);
      return { path: shown, tree: buildTree(vfs, path, shown, 0, p.level, p.all) };
    }),

  'fs/import': (ctx, p) =>
    writeVfs(ctx, p.vault, (vfs) => {
      const dst = normalizePath(vaultPath(p.path));
      const s = importTree(vfs, hostPath(p), dst, { force: p.force });
      return {
        source: p.host_path,
        vfs_path: dst,
        files_imported: s.files,
        dirs_created: s.dirs,
        symlinks: s.symlinks,
        hardlinks: s.hardlinks,
        special_files: s.special,
        total_bytes: s.bytes,
        skipped_count: s.skipped.length,
        skipped: s.skipped,
      };
    }),

  'fs/export': (ctx, p) =>
    readVfs(ctx, p.vault, (vfs) => {
      const src = normalizePath(vaultPath(p.path));
      const s = exportTree(vfs, src, hostPath(p), { force: p.force });
      return {
        vfs_path: src,
        destination: p.host_path,
        files_exported: s.files,
        dirs_created: s.dirs,
        symlinks: s.symlinks,
        hardlinks: s.hardlinks,
        special_files: s.special,
        total_bytes: s.bytes,
      };
    }),
} satisfies Partial<OpsTable>;
