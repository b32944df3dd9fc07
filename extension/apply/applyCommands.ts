// Bringing a vault's work back to the project it was made from, in the editor: New Vault from
// Workspace Folder, Apply to Workspace (the multi-file diff of what will change, conflicts marked
// and blocking, then apply or a new git branch), Apply This Change (one file), and Compare with
// Fork (two experiments side by side, then keep one and discard the other). Everything goes
// through the host (project/* methods); the plan is the host's dry run. A conflicting file is shown
// in the diff against a document holding both sides between git's conflict markers
// (avfs-conflict://<vault>/<path>?{"project": FILE}), and is resolved file by file: the vault's
// version, the project's, or a merge; the apply is offered only once none is left.
import * as vscode from 'vscode';
import type { ApplyResult, PlannedChange } from '../../host/protocol/project';
import type { Ctx } from '../ctx';
import { HostCallError } from '../errors';
import { plural } from '../format';
import { toUri } from '../fs/vaultFs';
import { checkpointUri } from '../uris';
import { LONG_MS, withProgress } from '../restore';
import { type Arg, askVaultName, fileOf, vaultOf } from '../targets';

type Resource = [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined];

export const CONFLICT_SCHEME = 'avfs-conflict';

/** The document of a conflict: the project's side and the vault's, between git's conflict markers. */
export function conflictUri(vault: string, rel: string, projectFile: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CONFLICT_SCHEME, authority: vault, path: '/' + rel, query: JSON.stringify({ project: projectFile }) });
}

const decoder = new TextDecoder();

/** The vault's file as it is now, read-only: the vault's side in the merge editor. */
export function vaultSideUri(vault: string, rel: string): vscode.Uri {
  return vscode.Uri.from({ scheme: CONFLICT_SCHEME, authority: vault, path: '/' + rel, query: JSON.stringify({ side: 'vault', at: Date.now() }) });
}

/** Serves avfs-conflict: documents (read-only, made when opened). */
class ConflictDocuments implements vscode.TextDocumentContentProvider {
  constructor(private readonly ctx: Ctx) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const { project = '', side: which } = JSON.parse(uri.query) as { project?: string; side?: 'vault' };
    if (which === 'vault') {
      // The vault's side of a merge as it was when the merge began: its file is the merge's output.
      const r = await this.ctx.host.request('fs/readFile', { vault: uri.authority, path: uri.path });
      return Buffer.from(r.data, 'base64').toString('utf8');
    }
    const mine = await vscode.workspace.fs.readFile(vscode.Uri.file(project)).then(
      (b) => decoder.decode(b),
      () => undefined,
    );
    const theirs = await this.ctx.host.request('fs/readFile', { vault: uri.authority, path: uri.path }).then(
      (r) => Buffer.from(r.data, 'base64').toString('utf8'),
      () => undefined,
    );
    const side = (text: string | undefined) => (text === undefined ? '' : text.endsWith('\n') || text === '' ? text : `${text}\n`);
    return [
      `<<<<<<< project: ${project}${mine === undefined ? ' (deleted in the project)' : ''}\n`,
      side(mine),
      '=======\n',
      side(theirs),
      `>>>>>>> vault ${uri.authority}${theirs === undefined ? ' (deleted in the vault)' : ''}\n`,
    ].join('');
  }
}

let conflictProvider: vscode.Disposable | undefined;
function serveConflicts(ctx: Ctx): void {
  if (conflictProvider) return;
  conflictProvider = vscode.workspace.registerTextDocumentContentProvider(CONFLICT_SCHEME, new ConflictDocuments(ctx));
  ctx.extension.subscriptions.push(conflictProvider, { dispose: () => (conflictProvider = undefined) });
}

/** [label, the project's file now, the vault's file now (a conflict: both sides, marked)] for each changed file of the plan. */
export function planResources(plan: ApplyResult): Resource[] {
  const project = (rel: string) => vscode.Uri.file(`${plan.project}/${rel}`);
  const vault = (rel: string) => toUri(plan.vault, '/' + rel);
  return plan.changes
    .filter((c) => c.type === 'file' || c.type === 'symlink')
    .map((c): Resource => {
      if (c.status === 'conflict') return [vault(c.path), project(c.from ?? c.path), conflictUri(plan.vault, c.path, `${plan.project}/${c.path}`)];
      if (c.action === 'delete') return [project(c.path), project(c.path), undefined];
      if (c.action === 'add') return [vault(c.path), undefined, vault(c.path)];
      return [vault(c.path), project(c.from ?? c.path), vault(c.path)];
    });
}

function line(c: PlannedChange): string {
  const what = { add: 'added', modify: 'modified', delete: 'deleted', rename: 'renamed' }[c.action];
  const name = c.from !== undefined ? `${c.from} → ${c.path}` : c.path;
  return `  ${name} (${what}${c.mode_after ? `, mode ${c.mode_after}` : ''})${c.status === 'conflict' ? ` — CONFLICT${c.conflict ? ` (${c.conflict})` : ''}: ${c.reason}` : c.status === 'same' ? ' — already there' : ''}`;
}

export function planTitle(plan: ApplyResult): string {
  const conflicts = plan.conflicts.length ? ` — ${plural(plan.conflicts.length, 'conflict')}` : '';
  return `Apply ${plan.vault} → ${plan.project.split('/').pop()}${conflicts}`;
}

async function createBranch(ctx: Ctx, vault: string): Promise<void> {
  const name = await vscode.window.showInputBox({ prompt: `New branch for the changes of ${vault} (from the commit it was made from)`, value: `avfs/${vault}` });
  if (!name) return;
  const r = await withProgress(`Committing ${vault} onto ${name}…`, () => ctx.host.request('project/apply', { vault, git_branch: name }, { timeoutMs: LONG_MS }));
  void vscode.window.showInformationMessage(`Committed ${plural(r.changes.length, 'change')} of ${vault} on the new branch ${name} (${r.git_branch?.commit.slice(0, 12)}); your working tree, index and HEAD are unchanged.`);
}

const KEEP_VAULT = "Keep the Vault's";
const KEEP_PROJECT = "Keep the Project's";
const OPEN_MERGE = 'Open Merge';

const KIND_TEXT: Record<NonNullable<PlannedChange['conflict']>, string> = {
  content: 'its content differs on the two sides',
  mode: 'the same bytes with other permission bits',
  symlink: 'a symlink pointing elsewhere on one side',
  type: 'a file on one side, a folder on the other',
  deleted: 'removed on one side, changed on the other',
  added: 'added on both sides, differently',
  rename: 'renamed on one side, changed on the other',
  directory: 'a folder removed on one side, added to on the other',
};

/**
 * Asks which side of one conflict wins, and makes it so through the host (project/apply with
 * `keep`, for that path and, for a rename, both of its paths): the vault's entry written into the
 * project (bytes, bits, symlink target, or its removal), or the project's into the vault. A text
 * file both sides edited can also be merged: the merge editor (base: the vault's base checkpoint;
 * output: the vault's file). False: stop resolving.
 */
async function resolveOne(ctx: Ctx, plan: ApplyResult, c: PlannedChange): Promise<boolean> {
  const rel = c.path;
  const name = c.from !== undefined ? `${c.from} → ${rel}` : rel;
  const projectFile = vscode.Uri.file(`${plan.project}/${rel}`);
  const vaultPath = '/' + rel;
  const mergeable = c.type === 'file' && (c.conflict === 'content' || c.conflict === 'added');
  const kind = c.conflict ? ` (${c.conflict}: ${KIND_TEXT[c.conflict]})` : '';
  const pick = await vscode.window.showWarningMessage(
    `Conflict in ${name}${kind}: ${c.reason ?? 'changed on both sides'}. Which version should both sides keep?`,
    {
      modal: true,
      detail: [
        `${KEEP_VAULT}: the vault's ${name} replaces the project's (your change there is lost).`,
        `${KEEP_PROJECT}: the project's ${name} goes into the vault (the agent's change there is dropped).`,
        ...(mergeable ? [`${OPEN_MERGE}: merge the two into the vault's file, then apply again.`] : []),
      ].join('\n'),
    },
    KEEP_VAULT,
    KEEP_PROJECT,
    ...(mergeable ? [OPEN_MERGE] : []),
  );
  if (pick === KEEP_VAULT || pick === KEEP_PROJECT) {
    const paths = c.from !== undefined ? [c.from, rel] : [rel];
    const keep = pick === KEEP_VAULT ? 'vault' : 'project';
    await withProgress(`Keeping the ${keep}'s ${name}…`, () => ctx.host.request('project/apply', { vault: plan.vault, paths, keep }, { timeoutMs: LONG_MS }));
    return true;
  }
  if (pick === OPEN_MERGE) {
    await vscode.commands.executeCommand('_open.mergeEditor', {
      base: vscode.Uri.from(checkpointUri({ vault: plan.vault, path: vaultPath, checkpoint: plan.base })),
      input1: { uri: projectFile, title: 'Project', description: plan.project },
      input2: { uri: vaultSideUri(plan.vault, rel), title: 'Vault', description: plan.vault },
      output: toUri(plan.vault, vaultPath),
    });
    void vscode.window.showInformationMessage(`Merging ${rel} into vault ${plan.vault}: once saved, run Apply to Workspace again and keep the vault's version.`);
  }
  return false;
}

/**
 * The plan of applying `vault` (or only `paths`), shown; then applied, or a branch made, on
 * confirmation. While a file conflicts no Apply is offered: each conflict is resolved (or the
 * flow ends), and the plan is made and shown again.
 */
async function applyFlow(ctx: Ctx, vault: string, paths?: string[]): Promise<void> {
  serveConflicts(ctx);
  for (;;) {
    const plan = await ctx.host.request('project/apply', { vault, dry_run: true, ...(paths ? { paths } : {}) }, { timeoutMs: LONG_MS });
    const todo = plan.changes.filter((c) => c.status !== 'same');
    if (todo.length === 0) {
      void vscode.window.showInformationMessage(`${plan.project} already has every change of vault ${vault}${paths ? ` to ${paths.join(', ')}` : ''}.`);
      return;
    }
    const resources = planResources(plan);
    if (resources.length > 0) await vscode.commands.executeCommand('vscode.changes', planTitle(plan), resources);
    const hasGit = (await ctx.host.request('project/base', { vault })).base?.git_commit;
    const branch = 'Create Branch…';
    const detail = plan.changes.map(line).join('\n');
    if (plan.conflicts.length > 0) {
      const resolve = 'Resolve File by File…';
      const pick = await vscode.window.showWarningMessage(
        `${plural(plan.conflicts.length, 'file')} changed both in ${vault} and in ${plan.project} since the vault's base: nothing can be applied until they agree.`,
        { modal: true, detail },
        resolve,
        ...(hasGit && !paths ? [branch] : []),
      );
      if (pick === branch) return createBranch(ctx, vault);
      if (pick !== resolve) return;
      for (const c of plan.changes.filter((x) => x.status === 'conflict')) {
        if (!(await resolveOne(ctx, plan, c))) return;
      }
      continue;
    }
    const apply = 'Apply';
    const pick = await vscode.window.showWarningMessage(
      `Apply ${plural(todo.length, 'change')} of vault ${vault} to ${plan.project}?`,
      { modal: true, detail: `${detail}\n\nAll or nothing: files you changed that the vault did not touch are left as they are.` },
      apply,
      ...(hasGit && !paths ? [branch] : []),
    );
    if (pick === branch) return createBranch(ctx, vault);
    if (pick !== apply) return;
    const r = await withProgress(`Applying ${vault} to ${plan.project}…`, () =>
      ctx.host.request('project/apply', { vault, ...(paths ? { paths } : {}) }, { timeoutMs: LONG_MS }).catch((e: unknown) => {
        if (e instanceof HostCallError && e.kind === 'Conflict') throw new Error(`the project changed meanwhile: ${e.message}`);
        throw e;
      }),
    );
    void vscode.window.showInformationMessage(`Applied ${plural(r.applied, 'change')} of vault ${vault} to ${r.project}.`);
    return;
  }
}

export const applyFactories: Record<string, (ctx: Ctx) => (arg?: Arg) => unknown> = {
  'avfs.newVaultFromWorkspace': (ctx) => (arg) =>
    ctx.run('New Vault from Workspace Folder', async () => {
      const folders = vscode.workspace.workspaceFolders ?? [];
      const folder =
        arg instanceof vscode.Uri && arg.scheme === 'file'
          ? arg
          : folders.length === 1
            ? folders[0]!.uri
            : (await vscode.window.showWorkspaceFolderPick({ placeHolder: 'Folder to make a vault from' }))?.uri;
      if (!folder) {
        if (folders.length === 0) void vscode.window.showInformationMessage('Open a folder first: a vault is made from a workspace folder.');
        return;
      }
      const name = await askVaultName(ctx, `Name of the vault made from ${folder.fsPath} (.git and .gitignore'd files are left out)`, folder.path.split('/').pop()?.replace(/[^A-Za-z0-9_-]/g, '-') ?? 'project');
      if (!name) return;
      const r = await withProgress(`Importing ${folder.fsPath} into ${name}…`, () => ctx.host.request('project/create', { name, host_path: folder.fsPath }, { timeoutMs: LONG_MS }));
      ctx.tree.refresh({ vault: name, files: false, checkpoints: false });
      void vscode.window.showInformationMessage(`Vault ${name} made from ${r.base.source}: ${plural(r.files_imported, 'file')}${r.base.git_commit ? `, base commit ${r.base.git_commit.slice(0, 12)}` : ''}.`);
    }),

  'avfs.applyToWorkspace': (ctx) => (arg) =>
    ctx.run('Apply to Workspace', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault whose changes to apply to its project');
      if (vault) await applyFlow(ctx, vault);
    }),

  'avfs.applyThisChange': (ctx) => (arg) =>
    ctx.run('Apply This Change', async () => {
      const file = fileOf(arg);
      if (!file) {
        void vscode.window.showInformationMessage('Apply This Change works on a vault file: run it from an avfs:// editor or the Vaults view.');
        return;
      }
      await applyFlow(ctx, file.vault, [file.path]);
    }),

  'avfs.compareWithFork': (ctx) => (arg) =>
    ctx.run('Compare with Fork', async () => {
      const vault = await vaultOf(ctx, arg, 'Vault to compare');
      if (!vault) return;
      const snap = await ctx.tree.snapshot();
      const me = snap.infos.get(vault);
      const kin = [...snap.infos.values()].filter((v) => v.name !== vault && (v.parent === vault || v.name === me?.parent || (me?.parent && v.parent === me.parent)));
      const others = kin.length > 0 ? kin : [...snap.infos.values()].filter((v) => v.name !== vault);
      const other = (await vscode.window.showQuickPick(others.map((v) => ({ label: v.name, description: v.parent ? `fork of ${v.parent}` : undefined })), { placeHolder: `Compare ${vault} with…` }))?.label;
      if (!other) return;
      const r = await ctx.host.request('project/compare', { vault, other }, { timeoutMs: LONG_MS });
      if (r.changes.length === 0) {
        void vscode.window.showInformationMessage(`Vaults ${vault} and ${other} hold the same files.`);
        return;
      }
      const resources = r.changes.map((c): Resource => [toUri(c.status === 'deleted' ? vault : other, c.path), c.status === 'added' ? undefined : toUri(vault, c.path), c.status === 'deleted' ? undefined : toUri(other, c.path)]);
      await vscode.commands.executeCommand('vscode.changes', `${vault} ↔ ${other}`, resources);
      const keepMine = `Keep ${vault}, Discard ${other}`;
      const keepOther = `Keep ${other}, Discard ${vault}`;
      const pick = await vscode.window.showInformationMessage(`${plural(r.changes.length, 'file')} differ between ${vault} and ${other}.`, keepMine, keepOther);
      if (!pick) return;
      const discard = pick === keepMine ? other : vault;
      const sure = await vscode.window.showWarningMessage(`Delete vault "${discard}"?`, { modal: true, detail: 'Its files, checkpoints and audit trail go with it. This cannot be undone.' }, 'Delete');
      if (sure !== 'Delete') return;
      await withProgress(`Deleting vault ${discard}…`, () => ctx.host.request('vault/delete', { name: discard, flatten: true }, { timeoutMs: LONG_MS }));
      ctx.tree.refresh({ vault: discard, files: false, checkpoints: false });
    }),
};
