// The Vaults view: every vault of the avfs home (forks nested under their parent), and under each
// its files and its checkpoints. It reads everything from the host and re-reads when the host says
// a vault changed (refresh()); it never polls. While it is empty, VS Code shows the welcome content
// contributed in package.json for the state the `avfs.*` context keys describe.
import * as vscode from 'vscode';
import type { CheckpointInfo } from '../../host/protocol/changes';
import type { ApprovalRequest } from '../../host/protocol/exec';
import type { MountInfo } from '../../host/protocol/methods';
import type { DirEntry, VaultInfo } from '../../host/protocol/vault';
import type { HostClient, Logger } from '../client/hostClient';
import { approvalRow } from '../approvals/model';
import { errorMessage } from '../errors';
import { markdownText } from '../format';
import { toUri } from '../fs/vaultFs';
import { joinPath, parentPath } from '../uris';
import {
  checkpointDescription,
  checkpointsNewestFirst,
  checkpointTooltip,
  contextValue,
  nodeId,
  sortEntries,
  type TreeNode,
  vaultDescription,
  type ViewData,
  viewChanges,
  vaultForest,
  type VaultForest,
  vaultTooltip,
} from './treeModel';

export const VAULTS_VIEW = 'avfs.vaults';
/** Context key: the host answered and there is no vault (the welcome view offers Create Vault). */
export const NO_VAULTS_CONTEXT = 'avfs.noVaults';

/** What the view knows about the vaults: read once per refresh, shared by every node it shows. */
export interface Snapshot extends ViewData {
  forest: VaultForest;
  infos: Map<string, VaultInfo>;
  mounts: Map<string, MountInfo>;
}

/** What a refresh is asked to look at again: everything, or these vaults' files or checkpoints. */
export type RefreshHint = { vault: string; files: boolean; checkpoints: boolean } | undefined;

/** Host events come in bursts (an agent writing files): one re-read per burst. */
const REFRESH_DEBOUNCE_MS = 100;

export class VaultTree implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  readonly view: vscode.TreeView<TreeNode>;
  private readonly emitter = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private loading: Promise<Snapshot> | undefined;
  private last: Snapshot | undefined;
  /** Reads started so far: a read that ends after a newer one started (a slow host, the home changed) is not kept. */
  private reads = 0;
  /** Settles when a newer read replaces the current one (snapshot() then waits for that one). */
  private replace: () => void = () => undefined;
  private replaced = new Promise<void>((r) => (this.replace = r));
  /** One node object per id, so that a node handed to a command is the one the view knows. */
  private readonly nodes = new Map<string, TreeNode>();
  private readonly checkpointInfo = new Map<string, CheckpointInfo>();
  private readonly entryInfo = new Map<string, DirEntry>();
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshAll = false;
  private readonly dirtyFiles = new Set<string>();
  private readonly dirtyCheckpoints = new Set<string>();
  /** getChildren calls under way, and when the view last did anything (settled() waits for a quiet view). */
  private fetching = 0;
  /** Redraws under way: between a refresh's timer and the change it fires, the host is being read. */
  private redrawing = 0;
  private lastActivity = 0;

  constructor(
    private readonly host: HostClient,
    private readonly log: Logger,
    /** The approval requests this window holds (the Pending Approvals node lists them). */
    private readonly approvals: { pending(): ApprovalRequest[]; get(id: string): ApprovalRequest | undefined },
  ) {
    this.view = vscode.window.createTreeView(VAULTS_VIEW, { treeDataProvider: this, showCollapseAll: true });
  }

  /**
   * Re-reads the vaults soon (calls within a burst make one re-read) and redraws what changed:
   * with no hint, everything; with a hint (a host event), the vaults whose rows changed and the
   * files or checkpoints the event names.
   */
  refresh(hint?: RefreshHint): void {
    this.lastActivity = Date.now();
    if (!hint) this.refreshAll = true;
    else {
      if (hint.files) this.dirtyFiles.add(hint.vault);
      if (hint.checkpoints) this.dirtyCheckpoints.add(hint.vault);
    }
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.redraw(), REFRESH_DEBOUNCE_MS);
  }

  /**
   * Resolves once the view has been quiet for `quietMs`, counted from this call at the earliest: no
   * refresh pending or reading the host, no node being fetched, no host event for that long (an
   * event for a change the caller just made may still be on its way when this is called). A
   * redraw's read of a home with many vaults can take longer than `quietMs`: until it has fired
   * its change, rows it will redraw (a Checkpoints row that just became expandable) are stale.
   */
  async settled(quietMs = 300): Promise<void> {
    const since = Date.now();
    while (this.refreshTimer || this.redrawing > 0 || this.fetching > 0 || Date.now() - Math.max(this.lastActivity, since) < quietMs) await new Promise((r) => setTimeout(r, 50));
  }

  private async redraw(): Promise<void> {
    this.refreshTimer = undefined;
    this.redrawing++;
    try {
      await this.redrawNow();
    } finally {
      this.redrawing--;
      this.lastActivity = Date.now();
    }
  }

  private async redrawNow(): Promise<void> {
    const [all, files, checkpoints] = [this.refreshAll, [...this.dirtyFiles], [...this.dirtyCheckpoints]];
    this.refreshAll = false;
    this.dirtyFiles.clear();
    this.dirtyCheckpoints.clear();
    const before = this.last;
    this.loading = undefined;
    let after: Snapshot | undefined;
    try {
      after = await this.snapshot();
    } catch {
      // The view shows why (welcome content); getChildren logs it.
    }
    if (all || !before || !after) return this.emitter.fire(undefined);
    const changes = viewChanges(before, after);
    if (changes.list) return this.emitter.fire(undefined);
    const redrawn = new Set(changes.vaults);
    for (const vault of redrawn) this.emitter.fire(this.node({ kind: 'vault', vault }));
    for (const vault of files) if (!redrawn.has(vault) && after.infos.has(vault)) this.emitter.fire(this.node({ kind: 'files', vault }));
    for (const vault of checkpoints) if (!redrawn.has(vault) && after.infos.has(vault)) this.emitter.fire(this.node({ kind: 'checkpoints', vault }));
  }

  /**
   * The vaults as last read (reading them now if the view has not yet). A read that a newer one
   * replaces while it is awaited (the home changed, the host restarted) gives way to the newer one:
   * what it would give is another home's vaults, and a request to a host that went away can hang
   * until its time-out (30 s) where the newer read takes milliseconds.
   */
  async snapshot(): Promise<Snapshot> {
    for (;;) {
      const read = this.read();
      const replaced = this.replaced;
      let outcome: { snap: Snapshot } | undefined;
      try {
        outcome = await Promise.race([read.then((snap) => ({ snap })), replaced.then(() => undefined)]);
      } catch (e) {
        if (read === this.loading) throw e;
      }
      if (outcome && read === this.loading) return outcome.snap;
    }
  }

  /** The read under way or last done; a new one when a redraw dropped it (waking those who wait on the old one). */
  private read(): Promise<Snapshot> {
    if (!this.loading) {
      this.loading = this.load();
      this.replace();
      this.replaced = new Promise<void>((r) => (this.replace = r));
    }
    return this.loading;
  }

  /** The vaults as last read, without asking the host; undefined before the first read. */
  get lastSnapshot(): Snapshot | undefined {
    return this.last;
  }

  checkpoint(node: Extract<TreeNode, { kind: 'checkpoint' }>): CheckpointInfo | undefined {
    return this.checkpointInfo.get(nodeId(node));
  }

  async getChildren(node?: TreeNode): Promise<TreeNode[]> {
    this.fetching++;
    try {
      return await this.children(node);
    } catch (e) {
      // The welcome content (host not running, Restricted Mode) explains an empty view.
      this.log.warn(`Vaults view: ${node ? nodeId(node).replace(/\n/g, ' ') : 'vault list'}: ${errorMessage(e)}`);
      if (!node) void vscode.commands.executeCommand('setContext', NO_VAULTS_CONTEXT, false);
      return [];
    } finally {
      this.fetching--;
      this.lastActivity = Date.now();
    }
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    const snap = this.last;
    const item = new vscode.TreeItem('', vscode.TreeItemCollapsibleState.Collapsed);
    item.id = nodeId(node);
    switch (node.kind) {
      case 'vault': {
        const info = snap?.infos.get(node.vault);
        const mount = snap?.mounts.get(node.vault);
        item.label = node.vault;
        const summary = snap?.forest.get(node.vault);
        if (summary?.status === 'unreadable') {
          item.contextValue = contextValue(node, 'unreadable');
          item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'));
          item.description = 'cannot be read';
          item.tooltip = new vscode.MarkdownString(`**${node.vault}** cannot be read as a vault: ${markdownText(summary.reason)}`);
          item.collapsibleState = vscode.TreeItemCollapsibleState.None;
          break;
        }
        item.contextValue = contextValue(node, mount ? 'mounted' : undefined);
        item.iconPath = new vscode.ThemeIcon(info?.parent ? 'repo-forked' : 'database');
        if (info) {
          item.description = vaultDescription(info, mount);
          item.tooltip = new vscode.MarkdownString(vaultTooltip(info, mount));
        }
        // Top-level vaults open expanded the first time; VS Code remembers the person's choice by id.
        if (!info?.parent) item.collapsibleState = vscode.TreeItemCollapsibleState.Expanded;
        break;
      }
      case 'files':
        item.label = 'Files';
        item.contextValue = contextValue(node);
        item.iconPath = new vscode.ThemeIcon('files');
        item.tooltip = new vscode.MarkdownString(`The files of vault **${node.vault}** (\`avfs://${node.vault}/\`)`);
        break;
      case 'checkpoints': {
        const count = snap?.infos.get(node.vault)?.checkpoints.length;
        item.label = 'Checkpoints';
        item.description = count === undefined ? undefined : String(count);
        item.contextValue = contextValue(node);
        item.iconPath = new vscode.ThemeIcon('history');
        if (count === 0) item.collapsibleState = vscode.TreeItemCollapsibleState.None;
        break;
      }
      case 'checkpoint': {
        const cp = this.checkpointInfo.get(item.id);
        item.label = node.name;
        item.contextValue = contextValue(node);
        item.collapsibleState = vscode.TreeItemCollapsibleState.None;
        item.iconPath = new vscode.ThemeIcon(cp?.auto ? 'history' : 'bookmark');
        if (cp) {
          item.description = checkpointDescription(cp);
          item.tooltip = new vscode.MarkdownString(checkpointTooltip(cp));
        }
        // A click shows what changed since: the checkpoint against the current tree.
        item.command = { command: 'avfs.compareWithCurrent', title: 'Compare with Current', arguments: [node] };
        break;
      }
      case 'approvals': {
        const count = this.approvals.pending().length;
        item.label = 'Pending Approvals';
        item.description = String(count);
        item.contextValue = contextValue(node);
        item.iconPath = new vscode.ThemeIcon('bell-dot', new vscode.ThemeColor('list.warningForeground'));
        item.tooltip = new vscode.MarkdownString('Commands agents asked to run that need your approval: answer each with its inline buttons.');
        item.collapsibleState = vscode.TreeItemCollapsibleState.Expanded;
        break;
      }
      case 'approval': {
        const req = this.approvals.get(node.id);
        item.contextValue = contextValue(node);
        item.collapsibleState = vscode.TreeItemCollapsibleState.None;
        item.iconPath = new vscode.ThemeIcon('shield');
        if (!req) {
          item.label = 'settled';
          break;
        }
        const row = approvalRow(req);
        item.label = row.label;
        item.description = row.description;
        item.tooltip = new vscode.MarkdownString(row.tooltip);
        break;
      }
      case 'entry': {
        const uri = toUri(node.vault, node.path);
        item.label = node.path.slice(node.path.lastIndexOf('/') + 1);
        item.resourceUri = uri;
        item.contextValue = contextValue(node);
        const entry = this.entryInfo.get(item.id);
        if (entry?.type === 'symlink' && entry.target) item.description = `→ ${entry.target}`;
        if (node.type === 'directory') break;
        item.collapsibleState = vscode.TreeItemCollapsibleState.None;
        item.command = { command: 'vscode.open', title: 'Open', arguments: [uri] };
        break;
      }
    }
    return item;
  }

  getParent(node: TreeNode): TreeNode | undefined {
    switch (node.kind) {
      case 'vault': {
        const parent = this.last?.infos.get(node.vault)?.parent;
        return parent && this.last?.infos.has(parent) ? this.node({ kind: 'vault', vault: parent }) : undefined;
      }
      case 'files':
      case 'checkpoints':
        return this.node({ kind: 'vault', vault: node.vault });
      case 'checkpoint':
        return this.node({ kind: 'checkpoints', vault: node.vault });
      case 'entry': {
        const dir = parentPath(node.path);
        return dir === '/' ? this.node({ kind: 'files', vault: node.vault }) : this.node({ kind: 'entry', vault: node.vault, path: dir, type: 'directory' });
      }
      case 'approval':
        return this.node({ kind: 'approvals' });
      case 'approvals':
        return undefined;
    }
  }

  dispose(): void {
    clearTimeout(this.refreshTimer);
    this.view.dispose();
    this.emitter.dispose();
  }

  private async children(node: TreeNode | undefined): Promise<TreeNode[]> {
    if (!node) {
      const snap = await this.snapshot();
      const pending = this.approvals.pending().length > 0;
      void vscode.commands.executeCommand('setContext', NO_VAULTS_CONTEXT, snap.forest.roots.length === 0 && !pending);
      return [
        ...(pending ? [this.node({ kind: 'approvals' })] : []),
        ...snap.forest.roots.filter((v) => v.status === 'unreadable' || snap.infos.has(v.name)).map((v) => this.node({ kind: 'vault', vault: v.name })),
      ];
    }
    switch (node.kind) {
      case 'vault': {
        const snap = await this.snapshot();
        const forks = snap.forest.forksOf(node.vault).filter((v) => snap.infos.has(v.name));
        return [
          this.node({ kind: 'files', vault: node.vault }),
          this.node({ kind: 'checkpoints', vault: node.vault }),
          ...forks.map((v) => this.node({ kind: 'vault', vault: v.name })),
        ];
      }
      case 'checkpoints': {
        const { checkpoints } = await this.host.request('checkpoint/list', { vault: node.vault });
        return checkpointsNewestFirst(checkpoints).map((cp) => {
          const child = this.node({ kind: 'checkpoint', vault: node.vault, name: cp.name });
          this.checkpointInfo.set(nodeId(child), cp);
          return child;
        });
      }
      case 'files':
      case 'entry': {
        const dir = node.kind === 'files' ? '/' : node.path;
        const { entries } = await this.host.request('fs/readDirectory', { vault: node.vault, path: dir });
        return sortEntries(entries).map((e) => {
          const child = this.node({ kind: 'entry', vault: node.vault, path: joinPath(dir, e.name), type: e.type });
          this.entryInfo.set(nodeId(child), e);
          return child;
        });
      }
      case 'checkpoint':
      case 'approval':
        return [];
      case 'approvals':
        return this.approvals.pending().map((req) => this.node({ kind: 'approval', id: req.id }));
    }
  }

  private async load(): Promise<Snapshot> {
    const read = ++this.reads;
    const [{ vaults }, mounts] = await Promise.all([
      this.host.request('vault/list', {}),
      this.host.request('mount/list', {}).then(
        (r) => r.mounts.filter((m) => m.live),
        (e: unknown) => {
          this.log.warn(`Vaults view: mount list: ${errorMessage(e)}`);
          return [];
        },
      ),
    ]);
    const infos = new Map<string, VaultInfo>();
    await Promise.all(
      vaults.map(async (v) => {
        if (v.status !== 'ok') return;
        try {
          infos.set(v.name, await this.host.request('vault/info', { name: v.name }));
        } catch (e) {
          // Deleted between the two calls, or unreadable: shown once it can be read.
          this.log.warn(`Vaults view: vault ${v.name}: ${errorMessage(e)}`);
        }
      }),
    );
    const snap: Snapshot = { vaults, forest: vaultForest(vaults), infos, mounts: new Map(mounts.map((m) => [m.vault, m])) };
    if (read === this.reads) this.last = snap;
    return snap;
  }

  /** The canonical node for these fields (VS Code hands the same object back to commands; reveal() takes it). */
  node<N extends TreeNode>(fields: N): N {
    const id = nodeId(fields);
    const known = this.nodes.get(id) as N | undefined;
    if (known && (known.kind !== 'entry' || (fields.kind === 'entry' && known.type === fields.type))) return known;
    this.nodes.set(id, fields);
    return fields;
  }
}
