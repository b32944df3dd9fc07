// Bringing a vault's work back to the project it was made from, in the editor: New Vault from
// Workspace Folder, Apply to Workspace (the multi-file diff of what will change, conflicts marked
// and blocking, then apply or a new git branch), Apply This Change (one file), and Compare with
// Fork (two experiments side by side, then keep one and discard the other). Everything goes
// through the host (project/* methods); the plan is the host's dry run.
import * as vscode from 'vscode';
import type { ApplyResult, PlannedChange } from '../../host/protocol/project';
import type { Ctx } from '../ctx';
import { HostCallError } from '../errors';
import { plural } from '../format';
import { toUri } from '../fs/vaultFs';
import { LONG_MS, withProgress } from '../restore';
import { type Arg, askVaultName, fileOf, vaultOf } from '../targets';

type Resource = [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined];

/** [label, the project's file now, the vault's file now] for each changed file of the plan. */
export function planResources(plan: ApplyResult): Resource[] {
  const project = (rel: string) => vscode.Uri.file(`${plan.project}/${rel}`);
  const vault = (rel: string) => toUri(plan.vault, '/' + rel);
  return plan.changes
    .filter((c) => c.type === 'file' || c.type === 'symlink')
    .map((c): Resource => {
      if (c.action === 'delete') return [project(c.path), project(c.path), undefined];
      if (c.action === 'add' && c.status !== 'conflict') return [vault(c.path), undefined, vault(c.path)];
      return [vault(c.path), project(c.from ?? c.path), vault(c.path)];
    });
}

function line(c: PlannedChange): string {
  const what = { add: 'added', modify: 'modified', delete: 'deleted', rename: 'renamed' }[c.action];
  const name = c.from !== undefined ? `${c.from} → ${c.path}` : c.path;
  return `  ${name} (${what}${c.mode_after ? `, mode ${c.mode_after}` : ''})${c.status === 'conflict' ? ` — CONFLICT: ${c.reason}` : c.status === 'same' ? ' — already there' : ''}`;
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

/** The plan of applying `vault` (or only `paths`), shown; then applied, or a branch made, on confirmation. */
async function applyFlow(ctx: Ctx, vault: string, paths?: string[]): Promise<void> {
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
    const pick = await vscode.window.showWarningMessage(
      `${plural(plan.conflicts.length, 'file')} changed both in ${vault} and in ${plan.project} since the vault's base: nothing can be applied until they agree.`,
      { modal: true, detail },
      ...(hasGit && !paths ? [branch] : []),
    );
    if (pick === branch) await createBranch(ctx, vault);
    return;
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
