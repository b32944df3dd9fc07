/**
 * The three-way plan of an apply: the vault's changes since its base (base tree → vault tree),
 * each checked against the project folder. A path the project still has as the base had it is
 * written; one the project already holds as the vault has it is left; any other is a conflict.
 * Paths the vault did not change are never looked at, so the developer's own edits stay.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { ChangePlan, Conflict, ConflictKind, PlannedChange, ProjectBase } from '../protocol/project';
import type { FileType } from '../protocol/vault';
import { asText, type Node, type PathChange, pathChanges, pathChangesAt } from '../store/diff';
import { kindOf } from '../store/inodes';
import type { Vault } from '../store/vault';
import { staysInside } from '../vfs/transfer';
import type { Step } from './commit';
import { ProjectIgnore } from './ignore';
import { type HostEntry, hostEntry, sameEntry, TreeReader } from './trees';

const octal = (mode: number) => '0' + (mode & 0o7777).toString(8).padStart(3, '0');
const typeOf = (n: Node): FileType => kindOf(n.mode) as FileType;

export interface ApplyPlan {
  plan: ChangePlan;
  /** The steps that make the plan in the project (none without host checks). */
  steps: Step[];
  /** The vault's changes the plan covers (ignored paths left out). */
  changes: PathChange[];
}

/** The changes at, under, or (new directories) above the paths asked for; all without a list. */
function selected(changes: PathChange[], only: string[] | undefined): PathChange[] {
  if (!only) return changes;
  const asked = only.map((p) => '/' + p.replace(/^\/+|\/+$/g, ''));
  return changes.filter(
    (c) => asked.some((a) => c.path === a || c.path.startsWith(a + '/')) || (c.after && kindOf(c.after.mode) === 'directory' && asked.some((a) => a.startsWith(c.path + '/'))),
  );
}

/** A symlink the vault would write that points out of the project is refused, with nothing written. */
function checkSymlinks(changes: PathChange[], links: Set<string>): void {
  for (const c of changes) {
    const n = c.after;
    if (!n || kindOf(n.mode) !== 'symlink') continue;
    const rel = c.path.slice(1);
    const dir = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/')) : '';
    if (!staysInside(dir, n.target ?? '', (r) => links.has(r))) {
      throw new AvfsError('UnsafeSymlink', `refusing symlink ${rel} -> ${n.target}: it points outside the project`, { path: rel, target: n.target });
    }
  }
}

/** What kind of conflict a path is, from the base's node, the vault's and the project's entry. */
export function conflictKind(root: string, rel: string, c: PathChange, h: HostEntry | null, read: (n: Node) => Buffer): ConflictKind {
  const a = c.after;
  if (!h || !a) return 'deleted';
  const k = kindOf(a.mode);
  if (h.kind === 'symlink' || k === 'symlink') return 'symlink';
  if (h.kind !== k) return 'type';
  if (!c.before) return 'added';
  if (k === 'directory') return 'mode';
  return h.size === a.size && fs.readFileSync(path.join(root, rel)).equals(read(a)) ? 'mode' : 'content';
}

/** Describes one change for the plan, its status and, when it is written, its steps. */
function describe(
  c: PathChange,
  sameContent: (b: Node, a: Node) => boolean,
  status: PlannedChange['status'],
  reason?: string,
  conflict?: ConflictKind,
): PlannedChange {
  const b = c.before;
  const a = c.after;
  const node = (a ?? b)!;
  const action = !b ? 'add' : !a ? 'delete' : 'modify';
  const modeChanged = !!a && !!b && typeOf(a) === typeOf(b) && typeOf(a) !== 'symlink' && (a.mode & 0o7777) !== (b.mode & 0o7777);
  return {
    path: c.path.slice(1),
    action,
    type: typeOf(node),
    ...(b ? { size_before: b.size } : {}),
    ...(a ? { size_after: a.size } : {}),
    ...(modeChanged ? { mode_before: octal(b.mode), mode_after: octal(a.mode) } : {}),
    content_changed: !a || !b || !sameContent(b, a),
    status,
    ...(reason ? { reason } : {}),
    ...(conflict ? { conflict } : {}),
  };
}

/**
 * Plans bringing the vault's tree `to` (its live tree, or the snapshot an apply took) to the
 * project folder `root`, from the base tree. Reads only the changed paths on both sides.
 */
export function planApply(
  v: Vault,
  base: ProjectBase,
  baseTree: TreeReader,
  toTree: TreeReader,
  root: string,
  opts: { patch?: boolean; hostChecks?: boolean; only?: string[]; candidates?: string[] | null; keepVault?: boolean } = {},
): ApplyPlan {
  const hostChecks = opts.hostChecks ?? true;
  // Where the journal says the vault changed since the base, when it can say; else everywhere.
  const at = opts.candidates ? pathChangesAt(v.store, baseTree.ref, toTree.ref, opts.candidates) : null;
  const all = selected(at ?? pathChanges(v.store, baseTree.ref, toTree.ref), opts.only);
  const ignore = new ProjectIgnore(root, base.exclude);
  const ignored: string[] = [];
  const changes = all.filter((c) => {
    const rel = c.path.slice(1);
    const isDir = kindOf((c.after ?? c.before)!.mode) === 'directory';
    if (!ignore.ignored(rel, isDir)) return true;
    ignored.push(rel);
    return false;
  });
  checkSymlinks(changes, new Set(changes.filter((c) => c.after && kindOf(c.after.mode) === 'symlink').map((c) => c.path.slice(1))));
  const removedHere = new Set(changes.filter((c) => c.before && (!c.after || typeOf(c.before) !== typeOf(c.after))).map((c) => c.path.slice(1)));
  const entries: PlannedChange[] = [];
  const conflicts: Conflict[] = [];
  const removes: Step[] = [];
  const creates: Step[] = [];
  const patches: string[] = [];
  const hostOf = new Map<string, HostEntry | null>();
  const sameContent = (b: Node, a: Node): boolean => {
    if (typeOf(b) !== typeOf(a)) return false;
    if (typeOf(a) === 'symlink') return a.target === b.target;
    if (typeOf(a) !== 'file') return true;
    return a.size === b.size && baseTree.read(b).equals(toTree.read(a));
  };
  for (const c of changes) {
    const rel = c.path.slice(1);
    if (!hostChecks) {
      entries.push(describe(c, sameContent, 'apply'));
      continue;
    }
    const h = hostEntry(root, rel);
    hostOf.set(rel, h);
    let status: PlannedChange['status'];
    let reason: string | undefined;
    let kind: ConflictKind | undefined;
    if (sameEntry(root, rel, h, c.after, (n) => toTree.read(n))) status = 'same';
    else if (sameEntry(root, rel, h, c.before, (n) => baseTree.read(n))) status = 'apply';
    else {
      status = 'conflict';
      reason = !h ? 'deleted in the project' : !c.before ? 'added in the project too' : 'changed in the project';
      kind = conflictKind(root, rel, c, h, (n) => toTree.read(n));
    }
    // A directory the vault removes can go only if the project added nothing in it.
    if (status === 'apply' && h?.kind === 'directory' && removedHere.has(rel)) {
      const added = fs.readdirSync(path.join(root, rel)).filter((name) => !removedHere.has(`${rel}/${name}`));
      if (added.length > 0) {
        status = 'conflict';
        reason = `removed in the vault; the project added ${added.slice(0, 3).join(', ')}${added.length > 3 ? ', …' : ''} in it`;
        kind = 'directory';
      }
    }
    // Settled for the vault: its entry replaces whatever the project has there.
    if (status === 'conflict' && opts.keepVault) {
      status = 'apply';
      reason = undefined;
      kind = undefined;
    }
    entries.push(describe(c, sameContent, status, reason, kind));
    if (status === 'conflict') conflicts.push({ path: rel, kind: kind!, reason: reason! });
    if (status !== 'apply') continue;
    const a = c.after;
    if (h && (!a || kindOf(a.mode) !== h.kind)) removes.push({ op: 'remove', rel });
    if (!a) continue;
    const k = kindOf(a.mode);
    if (k === 'directory') {
      if (!h || h.kind !== 'directory') creates.push({ op: 'mkdir', rel, mode: a.mode });
      else creates.push({ op: 'chmod', rel, mode: a.mode, oldMode: h.mode });
    } else if (k === 'symlink') {
      creates.push({ op: 'put', rel, kind: 'symlink', target: a.target ?? '' });
    } else if (k === 'file') {
      creates.push({ op: 'put', rel, kind: 'file', data: toTree.read(a), mode: a.mode, mtimeNs: toTree.mtimeNs(a) });
    } else {
      throw new AvfsError('NotSupported', `cannot apply ${rel}: a ${k} is not carried to a project`, { path: rel, type: k });
    }
  }
  if (opts.patch) {
    for (const e of entries) {
      if (e.type !== 'file' || e.status === 'same') continue;
      const c = changes.find((x) => x.path === '/' + e.path)!;
      const h = hostChecks ? hostOf.get(e.path) : undefined;
      const before = h?.kind === 'file' ? asText(fs.readFileSync(path.join(root, e.path))) : !hostChecks && c.before && kindOf(c.before.mode) === 'file' ? asText(baseTree.read(c.before)) : '';
      const after = c.after && kindOf(c.after.mode) === 'file' ? asText(toTree.read(c.after)) : '';
      if (before === undefined || after === undefined) {
        patches.push(`Binary files a/${e.path} and b/${e.path} differ\n`);
        continue;
      }
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { createTwoFilesPatch } = require('diff') as typeof import('diff');
      patches.push(createTwoFilesPatch(h || (!hostChecks && c.before) ? `a/${e.path}` : '/dev/null', c.after ? `b/${e.path}` : '/dev/null', before, after, undefined, undefined, { context: 3 }));
    }
  }
  const shown = foldRenames(changes, entries, sameContent);
  // Both paths of a renamed file in conflict are one rename conflict.
  const renamed = new Set(shown.filter((e) => e.conflict === 'rename').flatMap((e) => [e.path, e.from!]));
  for (const x of conflicts) if (renamed.has(x.path)) x.kind = 'rename';
  return {
    plan: {
      vault: v.name,
      project: root,
      direction: 'apply',
      base: base.checkpoint,
      changes: shown,
      conflicts,
      ignored,
      totals: totalsOf(shown, conflicts.length),
      ...(opts.patch ? { patch: patches.join('') } : {}),
    },
    // Removals deepest first, then creations parents first.
    steps: [...removes.reverse(), ...creates],
    changes,
  };
}

/** A file or symlink that left one path and appeared at another (same inode) is shown as one rename. */
export function foldRenames(changes: PathChange[], entries: PlannedChange[], sameContent: (b: Node, a: Node) => boolean): PlannedChange[] {
  const gone = new Map<number, number>();
  changes.forEach((c, i) => {
    if (c.before && !c.after && kindOf(c.before.mode) !== 'directory') gone.set(c.before.ino, i);
  });
  const drop = new Set<number>();
  const out = entries.map((e, i): PlannedChange => {
    const c = changes[i]!;
    if (c.before || !c.after) return e;
    const j = gone.get(c.after.ino);
    if (j === undefined || drop.has(j) || typeOf(changes[j]!.before!) !== typeOf(c.after)) return e;
    drop.add(j);
    const old = entries[j]!;
    const status: PlannedChange['status'] = old.status === 'conflict' || e.status === 'conflict' ? 'conflict' : e.status;
    const reason = e.reason ?? old.reason;
    return {
      ...e,
      action: 'rename' as const,
      from: old.path,
      ...(old.size_before !== undefined ? { size_before: old.size_before } : {}),
      content_changed: !sameContent(changes[j]!.before!, c.after),
      status,
      ...(reason ? { reason } : {}),
      ...(status === 'conflict' ? { conflict: 'rename' as const } : {}),
    };
  });
  return out.filter((_, i) => !drop.has(i));
}

export function totalsOf(entries: PlannedChange[], conflicts: number): ChangePlan['totals'] {
  const count = (a: PlannedChange['action']) => entries.filter((e) => e.action === a).length;
  return {
    added: count('add'),
    modified: count('modify'),
    deleted: count('delete'),
    renamed: count('rename'),
    mode_changed: entries.filter((e) => e.mode_before !== undefined).length,
    conflicts,
  };
}
