/**
 * The base of a vault made from a project, kept in its `meta` (`base.*` keys; a fork copies them
 * and the base checkpoint, so it has the same base): the folder it came from, the internal
 * checkpoint holding the tree both sides last agreed on, and the git commit of the project then.
 */
import type { ProjectBase } from '../protocol/project';
import { AvfsError } from '../protocol/errors';
import type { Edit } from '../store/checkpoints';
import type { Vault } from '../store/vault';

const KEYS = ['source', 'checkpoint', 'git_commit', 'git_checkpoint', 'git_prefix', 'exclude', 'created_at', 'moved_at'] as const;

export function readBase(v: Vault): ProjectBase | null {
  const source = v.meta('base.source');
  const checkpoint = v.meta('base.checkpoint');
  if (source === undefined || checkpoint === undefined) return null;
  return {
    source,
    checkpoint,
    git_commit: v.meta('base.git_commit') ?? null,
    git_checkpoint: v.meta('base.git_checkpoint') ?? null,
    git_prefix: v.meta('base.git_prefix') ?? '',
    exclude: JSON.parse(v.meta('base.exclude') ?? '[]') as string[],
    created_at: v.meta('base.created_at') ?? '',
    moved_at: v.meta('base.moved_at') ?? null,
  };
}

export function mustReadBase(v: Vault): ProjectBase {
  const b = readBase(v);
  if (!b) {
    throw new AvfsError('NotFound', `vault ${v.name} has no base: make it with 'avfs vault create ${v.name} --from DIR'`, { vault: v.name });
  }
  return b;
}

/** Writes the base (inside the caller's write transaction). */
export function writeBase(v: Vault, b: ProjectBase): void {
  for (const k of KEYS) {
    const value = b[k];
    v.setMeta(`base.${k}`, k === 'exclude' ? JSON.stringify(value) : (value as string | null));
  }
}

/**
 * The journal entry the base was taken at (`base.journal_seq`): changes since the base are then
 * looked for only at the paths the journal names after it. Absent (a fork: its journal counts
 * anew) or unusable, the whole trees are compared.
 */
export function baseJournalSeq(v: Vault): number | null {
  const s = v.meta('base.journal_seq');
  return s === undefined ? null : Number(s);
}

export function setBaseJournalSeq(v: Vault, seq: number | null): void {
  v.setMeta('base.journal_seq', seq === null ? null : String(seq));
}

/**
 * Moves the base forward by `edits` (the paths both sides now agree on, taken from the live tree),
 * in place: O(changed paths). A base that is also the git checkpoint (a vault made before the two
 * were kept apart) is copied once instead, so `--git-branch` keeps the tree of the base commit.
 */
export function advanceBase(v: Vault, base: ProjectBase, edits: Edit[], journalSeq?: number): string {
  const cp =
    base.checkpoint !== base.git_checkpoint ? v.checkpoints.amend(base.checkpoint, edits, 'live', journalSeq) : v.checkpoints.derive(base.checkpoint, edits, 'base');
  writeBase(v, { ...base, checkpoint: cp.name, moved_at: new Date().toISOString() });
  return cp.name;
}

