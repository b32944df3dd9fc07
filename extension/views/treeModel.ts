// What the Vaults view shows, as plain data: its nodes, their ids and context values, forks nested
// under their parent, and the labels, descriptions and tooltips built from the host's answers.
// Pure (no `vscode` import): unit-tested under node:test; vaultTree.ts turns these into TreeItems.
import type { CheckpointInfo } from '../../host/protocol/changes';
import type { MountInfo } from '../../host/protocol/methods';
import type { DirEntry, FileType, VaultInfo, VaultSummary } from '../../host/protocol/vault';
import { ago, formatBytes, markdownCode, markdownText, plural } from '../format';

export type TreeNode =
  | { kind: 'vault'; vault: string }
  | { kind: 'checkpoints'; vault: string }
  | { kind: 'files'; vault: string }
  | { kind: 'checkpoint'; vault: string; name: string }
  | { kind: 'entry'; vault: string; path: string; type: FileType }
  /** "Pending Approvals", shown above the vaults while this window has requests to answer. */
  | { kind: 'approvals' }
  | { kind: 'approval'; id: string };

/**
 * Stable ids: VS Code keeps a node's expansion and selection across refreshes by its id. Parts are
 * joined with `\n`, which no vault name, checkpoint name or path segment shown here contains.
 */
export function nodeId(node: TreeNode): string {
  switch (node.kind) {
    case 'vault':
    case 'checkpoints':
    case 'files':
      return `${node.kind}\n${node.vault}`;
    case 'checkpoint':
      return `checkpoint\n${node.vault}\n${node.name}`;
    case 'entry':
      return `entry\n${node.vault}\n${node.path}`;
    case 'approvals':
      return 'approvals';
    case 'approval':
      return `approval\n${node.id}`;
  }
}

/**
 * The `contextValue` that package.json's menus match (`viewItem == …`, `viewItem =~ /^vault/`):
 * `vault`, `vault.mounted` or `vault.unreadable` (a file in the vaults folder that cannot be read
 * as a vault: it can only be deleted), `checkpoints`, `files`, `checkpoint`, `file`, `directory`,
 * `symlink`, `approvals`, `approval.pending`.
 */
export function contextValue(node: TreeNode, state: 'mounted' | 'unreadable' | undefined = undefined): string {
  switch (node.kind) {
    case 'vault':
      return state ? `vault.${state}` : 'vault';
    case 'entry':
      return node.type === 'other' ? 'file' : node.type;
    case 'approval':
      return 'approval.pending';
    default:
      return node.kind;
  }
}

/** The host's vault list as a forest: top-level vaults, and each vault's direct forks. */
export interface VaultForest {
  roots: VaultSummary[];
  forksOf(name: string): VaultSummary[];
  get(name: string): VaultSummary | undefined;
}

export function vaultForest(vaults: readonly VaultSummary[]): VaultForest {
  const byName = new Map(vaults.map((v) => [v.name, v]));
  const children = new Map<string, VaultSummary[]>();
  const roots: VaultSummary[] = [];
  for (const v of [...vaults].sort((a, b) => compareNames(a.name, b.name))) {
    // A fork whose parent is gone (deleted with --flatten re-parents, but a damaged home may not)
    // is shown at the top rather than lost; so is a vault file that cannot be read.
    if (v.status === 'ok' && v.parent !== null && byName.has(v.parent) && v.parent !== v.name) {
      const list = children.get(v.parent) ?? [];
      list.push(v);
      children.set(v.parent, list);
    } else {
      roots.push(v);
    }
  }
  return { roots, forksOf: (name) => children.get(name) ?? [], get: (name) => byName.get(name) };
}

const MiB = 1024 * 1024;

/** "1.2 MiB of 256 MiB · 14 files · mounted" */
export function vaultDescription(v: VaultInfo, mount: MountInfo | undefined): string {
  const size = v.quotas.max_size_mb !== null ? `${formatBytes(v.size)} of ${formatBytes(v.quotas.max_size_mb * MiB)}` : formatBytes(v.size);
  const parts = [size, plural(v.files, 'file')];
  if (mount) parts.push('mounted');
  if (v.damaged) parts.push('damaged');
  return parts.join(' · ');
}

/** The vault's tooltip, as Markdown. */
export function vaultTooltip(v: VaultInfo, mount: MountInfo | undefined): string {
  const lines = [`**${v.name}**${v.current ? ' (the current vault)' : ''}`, ''];
  if (v.parent) lines.push(`Fork of **${v.parent}**`, '');
  lines.push(`${formatBytes(v.size)} in ${plural(v.files, 'file')}, ${plural(v.checkpoints.length, 'checkpoint')}; ${formatBytes(v.size_on_disk)} on disk`, '');
  const { max_size_mb: size, max_files: files, max_file_size_mb: fileSize } = v.quotas;
  const used = (n: number, limit: number) => ` (${Math.round((100 * n) / limit)}% used)`;
  lines.push(
    `Quotas: size ${size === null ? 'none' : formatBytes(size * MiB) + used(v.size, size * MiB)}, ` +
      `files ${files === null ? 'none' : files + used(v.files, files)}, ` +
      `file size ${fileSize === null ? 'none' : formatBytes(fileSize * MiB)}`,
    '',
  );
  if (mount) lines.push(`Mounted at ${markdownCode(mount.mountpoint)}${mount.readonly ? ' (read-only)' : ''}`, '');
  if (v.damaged) lines.push(`**Damaged** since ${markdownText(v.damaged.found_at)}: ${markdownText(v.damaged.recovery)}`, '');
  lines.push(markdownCode(v.path));
  return lines.join('\n');
}

/** Checkpoints as the view lists them: newest first. */
export function checkpointsNewestFirst(list: readonly CheckpointInfo[]): CheckpointInfo[] {
  return [...list].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at) || compareNames(b.name, a.name));
}

/** "5 min ago · 14 KiB · 2.0 KiB alone — clean tree" (alone: what deleting it and gc give back, shown when not 0) */
export function checkpointDescription(cp: CheckpointInfo, now = Date.now()): string {
  const alone = cp.alone_size ? ` · ${cp.alone_size_human} alone` : '';
  const text = `${ago(cp.created_at, now)} · ${cp.total_size_human}${alone}`;
  return cp.description ? `${text} — ${cp.description}` : text;
}

export function checkpointTooltip(cp: CheckpointInfo): string {
  return [
    `**${cp.name}**${cp.auto ? ' (made automatically)' : ''}`,
    '',
    cp.description ? `${markdownText(cp.description)}\n` : '',
    `Saved ${cp.created_at}: ${plural(cp.file_count, 'entry', 'entries')}, ${cp.total_size_human}`,
    cp.alone_size_human === null ? '' : `\n\nHolds ${cp.alone_size_human} no other checkpoint, fork or the current tree holds: what deleting it (then gc) gives back`,
    cp.auto ? '\n\nKept by the vault\'s retention (AVFS: Checkpoint Retention…)' : '',
  ]
    .filter((l, i, all) => l !== '' || all[i - 1] !== '')
    .join('\n');
}

/** Directory entries as the view lists them: directories first, then by name (numbers in order). */
export function sortEntries(entries: readonly DirEntry[]): DirEntry[] {
  const rank = (e: DirEntry) => (e.type === 'directory' ? 0 : 1);
  return [...entries].sort((a, b) => rank(a) - rank(b) || compareNames(a.name, b.name));
}

function compareNames(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' }) || (a < b ? -1 : a > b ? 1 : 0);
}

/** What the view shows of the vaults, as read from the host at one moment. */
export interface ViewData {
  vaults: readonly VaultSummary[];
  infos: ReadonlyMap<string, VaultInfo>;
  mounts: ReadonlyMap<string, MountInfo>;
}

/**
 * What changed between two reads: `list` when vaults came, went, or moved in the forest (the whole
 * view is redrawn), else the vaults whose rows read differently (each redrawn with what is under it).
 * Redrawing less than everything matters: VS Code forgets the nodes under what it redraws until it
 * has fetched them again, and an inline action clicked in that moment reaches its command without
 * its node.
 */
export function viewChanges(before: ViewData, after: ViewData): { list: boolean; vaults: string[] } {
  const shape = (d: ViewData) =>
    JSON.stringify(
      [...d.vaults]
        .map((v) => [v.name, v.status, v.status === 'ok' ? v.parent : null, d.infos.has(v.name)])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
  if (shape(before) !== shape(after)) return { list: true, vaults: [] };
  const row = (d: ViewData, name: string) => {
    const info = d.infos.get(name);
    const summary = d.vaults.find((v) => v.name === name);
    const mount = d.mounts.get(name);
    return JSON.stringify([summary, info && { ...info, checkpoints: info.checkpoints.length }, mount?.mountpoint, mount?.readonly]);
  };
  return { list: false, vaults: after.vaults.map((v) => v.name).filter((name) => row(before, name) !== row(after, name)) };
}
