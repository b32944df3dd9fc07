/**
 * The three-way plan of a sync, the other way round from an apply: the project's changes since the
 * base (base tree → project folder), each checked against the vault's live tree, and written into
 * the vault in one transaction (all or nothing). The new base is the old one with the project's
 * changes, and none of the vault's own, so a later apply still carries the vault's work.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { ApplyResult, ChangePlan, Conflict, ConflictKind, PlannedChange, ProjectBase } from '../protocol/project';
import type { FileType } from '../protocol/vault';
import { listTree, type Node, pathChanges } from '../store/diff';
import { kindOf } from '../store/inodes';
import type { Vault } from '../store/vault';
import { staysInside } from '../vfs/transfer';
import { Vfs } from '../vfs/vfs';
import { advanceBase } from './base';
import { ProjectIgnore } from './ignore';
import { conflictKind, totalsOf } from './plan';
import { type HostEntry, hostEntry, refOf, sameEntry, TreeReader } from './trees';

const octal = (mode: number) => '0' + (mode & 0o7777).toString(8).padStart(3, '0');

/** Every entry of the project folder that a vault carries (ignored ones left out), by vault path. */
function scanProject(root: string, ignore: ProjectIgnore): Map<string, HostEntry> {
  const out = new Map<string, HostEntry>();
  const links = new Set<string>();
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(path.join(root, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const h = hostEntry(root, r)!;
      if (h.kind === 'other' || ignore.leftOut(r, h.kind === 'directory')) continue;
      if (h.kind === 'symlink') {
        links.add(r);
        if (!staysInside(rel, h.target ?? '', (x) => links.has(x))) {
          throw new AvfsError('UnsafeSymlink', `refusing symlink ${r} -> ${h.target}: it points outside the project`, { path: r, target: h.target });
        }
      }
      out.set('/' + r, h);
      if (h.kind === 'directory') walk(r);
    }
  };
  walk('');
  return out;
}

/** The project's entry still is the base's: same kind and bits, same bytes (same size and mtime taken as same bytes, as git does). */
function unchanged(root: string, rel: string, h: HostEntry | undefined, n: Node | undefined, read: (n: Node) => Buffer): boolean {
  if (h && n && h.kind === 'file' && kindOf(n.mode) === 'file' && (h.mode & 0o7777) === (n.mode & 0o7777) && h.size === n.size) {
    const ns = BigInt(n.mtime_s) * 1_000_000_000n + BigInt(n.mtime_ns);
    const d = h.mtimeNs - ns;
    if (d > -1000n && d < 1000n) return true;
  }
  return sameEntry(root, rel, h ?? null, n ?? null, read);
}

/** Makes the vault's entry at `vaultPath` the project's `h` (a directory: its bits; not what is in it). */
export function takeEntry(vfs: Vfs, root: string, vaultPath: string, h: HostEntry): void {
  const mode = h.mode & 0o7777;
  const at = vfs.tryResolve(vaultPath, false);
  if (h.kind === 'directory') {
    if (at && kindOf(at.attr.mode) !== 'directory') vfs.rm(vaultPath, { recursive: true });
    if (!at || kindOf(at.attr.mode) !== 'directory') vfs.mkdir(vaultPath, { mode });
    vfs.setattr(vaultPath, { mode }, false);
  } else if (h.kind === 'symlink') {
    if (at) vfs.rm(vaultPath, { recursive: true });
    vfs.symlink(h.target ?? '', vaultPath);
  } else {
    if (at && kindOf(at.attr.mode) !== 'file') vfs.rm(vaultPath, { recursive: true });
    vfs.writeFile(vaultPath, fs.readFileSync(path.join(root, vaultPath.slice(1))), { mode });
    vfs.setattr(vaultPath, { mode, mtime: h.mtimeNs }, false);
  }
}

/**
 * Makes the vault's tree at `vaultPath` the project's, what is under a directory included (ignored
 * paths left out, and left as the vault has them): the project's side of a conflict.
 */
export function takeTree(vfs: Vfs, root: string, vaultPath: string, ignore: ProjectIgnore): void {
  const rel = vaultPath.slice(1);
  const h = hostEntry(root, rel);
  if (!h || h.kind === 'other') {
    vfs.rm(vaultPath, { recursive: true, force: true });
    return;
  }
  if (h.kind === 'symlink') {
    const dir = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    if (!staysInside(dir, h.target ?? '', () => false)) {
      throw new AvfsError('UnsafeSymlink', `refusing symlink ${rel} -> ${h.target}: it points outside the project`, { path: rel, target: h.target });
    }
  }
  takeEntry(vfs, root, vaultPath, h);
  if (h.kind !== 'directory') return;
  const names = new Set(fs.readdirSync(path.join(root, rel)));
  for (const d of vfs.readdir(vaultPath)) {
    if (!names.has(d.name) && !ignore.ignored(`${rel}/${d.name}`, d.type === 'directory')) vfs.rm(`${vaultPath}/${d.name}`, { recursive: true, force: true });
  }
  for (const name of [...names].sort()) {
    const r = `${rel}/${name}`;
    const st = fs.lstatSync(path.join(root, r));
    if (!ignore.leftOut(r, st.isDirectory())) takeTree(vfs, root, '/' + r, ignore);
  }
}

const typeOf = (h: HostEntry | undefined, n: Node | undefined): FileType => (h ? (h.kind as FileType) : (kindOf(n!.mode) as FileType));

export function planSync(
  v: Vault,
  base: ProjectBase,
  root: string,
  opts: { dryRun: boolean; patch: boolean; recovered: string[]; conflict: (plan: ChangePlan) => AvfsError },
): ApplyResult {
  const baseRef = refOf(base.checkpoint, v);
  const baseTree = new TreeReader(v, baseRef);
  const live = new TreeReader(v, { kind: 'live' });
  const ignore = new ProjectIgnore(root, base.exclude);
  const project = scanProject(root, ignore);
  const baseNodes = listTree(v.store, baseRef);
  const vaultChanged = new Map(pathChanges(v.store, baseRef, { kind: 'live' }).map((c) => [c.path, c]));
  const paths = [...new Set([...project.keys(), ...[...baseNodes.keys()].filter((p) => !ignore.ignored(p.slice(1), kindOf(baseNodes.get(p)!.mode) === 'directory'))])].sort();
  const entries: PlannedChange[] = [];
  const conflicts: Conflict[] = [];
  const todo: Array<{ path: string; h: HostEntry | undefined }> = [];
  const removedHere = new Set(paths.filter((p) => baseNodes.has(p) && (!project.has(p) || project.get(p)!.kind !== kindOf(baseNodes.get(p)!.mode))));
  const patches: string[] = [];
  for (const p of paths) {
    const rel = p.slice(1);
    const h = project.get(p);
    const b = baseNodes.get(p);
    if (unchanged(root, rel, h, b, (n) => baseTree.read(n))) continue;
    const vc = vaultChanged.get(p);
    const liveNode = vc ? (vc.after ?? undefined) : b;
    let status: PlannedChange['status'];
    let reason: string | undefined;
    let kind: ConflictKind | undefined;
    if (sameEntry(root, rel, h ?? null, liveNode ?? null, (n) => live.read(n))) status = 'same';
    else if (!vc) status = 'apply';
    else {
      status = 'conflict';
      reason = !vc.after ? 'deleted in the vault' : !vc.before ? 'added in the vault too' : 'changed in the vault';
      kind = conflictKind(root, rel, vc, h ?? null, (n) => live.read(n));
    }
    if (status === 'apply' && removedHere.has(p) && b && kindOf(b.mode) === 'directory') {
      const added = [...vaultChanged.values()].filter((c) => !c.before && c.after && c.path.startsWith(p + '/')).map((c) => c.path.slice(1));
      if (added.length > 0) {
        status = 'conflict';
        reason = `removed in the project; the vault added ${added.slice(0, 3).join(', ')}${added.length > 3 ? ', …' : ''} in it`;
        kind = 'directory';
      }
    }
    const modeChanged = !!h && !!b && h.kind === kindOf(b.mode) && h.kind !== 'symlink' && (h.mode & 0o7777) !== (b.mode & 0o7777);
    entries.push({
      path: rel,
      action: !b ? 'add' : !h ? 'delete' : 'modify',
      type: typeOf(h, b),
      ...(b ? { size_before: b.size } : {}),
      ...(h ? { size_after: h.size } : {}),
      ...(modeChanged ? { mode_before: octal(b.mode), mode_after: octal(h.mode) } : {}),
      content_changed: !h || !b || h.kind !== kindOf(b.mode) || (h.kind === 'symlink' ? h.target !== b.target : h.kind === 'file' && !sameEntry(root, rel, { ...h, mode: b.mode }, b, (n) => baseTree.read(n))),
      status,
      ...(reason ? { reason } : {}),
      ...(kind ? { conflict: kind } : {}),
    });
    if (status === 'conflict') conflicts.push({ path: rel, kind: kind!, reason: reason! });
    if (status === 'apply') todo.push({ path: p, h });
    if (opts.patch && status !== 'same' && (h?.kind ?? 'file') === 'file' && (!b || kindOf(b.mode) === 'file')) {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { createTwoFilesPatch } = require('diff') as typeof import('diff');
      const before = liveNode && kindOf(liveNode.mode) === 'file' ? live.read(liveNode).toString('utf8') : '';
      const after = h ? fs.readFileSync(path.join(root, rel), 'utf8') : '';
      patches.push(createTwoFilesPatch(liveNode ? `a/${rel}` : '/dev/null', h ? `b/${rel}` : '/dev/null', before, after, undefined, undefined, { context: 3 }));
    }
  }
  const plan: ChangePlan = {
    vault: v.name,
    project: root,
    direction: 'sync',
    base: base.checkpoint,
    changes: entries,
    conflicts,
    ignored: [],
    totals: totalsOf(entries, conflicts.length),
    ...(opts.patch ? { patch: patches.join('') } : {}),
  };
  if (opts.dryRun) return { ...plan, dry_run: true, applied: 0, new_base: null, recovered: opts.recovered };
  if (conflicts.length > 0) throw opts.conflict(plan);
  const vfs = new Vfs(v);
  const removes = todo.filter((t) => baseNodes.has(t.path) && (!t.h || t.h.kind !== kindOf(baseNodes.get(t.path)!.mode))).reverse();
  const creates = todo.filter((t) => t.h);
  const newBase = vfs.mutate('/', () => {
    for (const t of removes) vfs.rm(t.path, { recursive: true, force: true });
    for (const t of creates) takeEntry(vfs, root, t.path, t.h!);
    const edits = [...removes.map((t) => ({ path: t.path, ino: null })), ...creates.map((t) => ({ path: t.path, ino: vfs.resolve(t.path, false).ino }))];
    const moved = advanceBase(v, base, edits);
    v.journal.append('project_sync', null, { details: { project: root, applied: todo.length, base: moved } });
    return moved;
  });
  return { ...plan, dry_run: false, applied: todo.length, new_base: newBase, recovered: opts.recovered };
}
