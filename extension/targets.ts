// What a command acts on: the node it was run on in the Vaults view, the file of an editor or the
// Explorer, or (from the Command Palette) what the person picks; and the names a person types.
import * as vscode from 'vscode';
import { VAULT_NAME_RE } from '../host/protocol/vault';
import type { Ctx } from './ctx';
import { formatBytes, plural } from './format';
import { parseVaultUri, VAULT_SCHEME } from './uris';
import type { TreeNode } from './views/treeModel';

/** A command's argument: a tree node, a URI (editor title, Explorer), or nothing (the palette). */
export type Arg = TreeNode | vscode.Uri | undefined;

/** The vault a command is about: the node's, the URI's, or one the person picks. */
export async function vaultOf(ctx: Ctx, arg: Arg, placeHolder: string): Promise<string | undefined> {
  if (arg instanceof vscode.Uri) return arg.scheme === VAULT_SCHEME ? parseVaultUri(arg).vault : undefined;
  if (arg && 'vault' in arg) return arg.vault;
  const snap = await ctx.tree.snapshot();
  const items = [...snap.infos.values()].map((v) => ({
    label: v.name,
    description: `${formatBytes(v.size)} · ${plural(v.files, 'file')}${v.parent ? ` · fork of ${v.parent}` : ''}`,
  }));
  if (items.length === 0) {
    void vscode.window.showInformationMessage('There is no vault yet: create one with "AVFS: New Vault".');
    return undefined;
  }
  return (await vscode.window.showQuickPick(items, { placeHolder }))?.label;
}

export async function checkpointOf(ctx: Ctx, arg: Arg, placeHolder: string): Promise<{ vault: string; name: string } | undefined> {
  if (arg && !(arg instanceof vscode.Uri) && arg.kind === 'checkpoint') return { vault: arg.vault, name: arg.name };
  const vault = await vaultOf(ctx, arg, 'Vault of the checkpoint');
  if (!vault) return undefined;
  const name = await pickCheckpoint(ctx, vault, placeHolder);
  return name ? { vault, name } : undefined;
}

export async function pickCheckpoint(ctx: Ctx, vault: string, placeHolder: string): Promise<string | undefined> {
  const { checkpoints } = await ctx.host.request('checkpoint/list', { vault });
  if (checkpoints.length === 0) {
    void vscode.window.showInformationMessage(`Vault ${vault} has no checkpoint yet: save one with "AVFS: Checkpoint Now".`);
    return undefined;
  }
  const items = [...checkpoints].reverse().map((cp) => ({ label: cp.name, description: `${cp.created_at}${cp.description ? ` — ${cp.description}` : ''}` }));
  return (await vscode.window.showQuickPick(items, { placeHolder }))?.label;
}

export function fileOf(arg: Arg): { vault: string; path: string } | undefined {
  if (arg instanceof vscode.Uri) return arg.scheme === VAULT_SCHEME ? parseVaultUri(arg) : undefined;
  if (arg?.kind === 'entry') return { vault: arg.vault, path: arg.path };
  const active = vscode.window.activeTextEditor?.document.uri;
  return active?.scheme === VAULT_SCHEME ? parseVaultUri(active) : undefined;
}

/** A file's vault path (what `avfs cat` takes), a vault's file on disk, a checkpoint's name. */
export async function pathToCopy(ctx: Ctx, arg: Arg): Promise<string | undefined> {
  if (arg instanceof vscode.Uri || arg?.kind === 'entry') return fileOf(arg)?.path;
  if (arg?.kind === 'checkpoint') return arg.name;
  const vault = await vaultOf(ctx, arg, 'Vault whose file path to copy');
  return vault ? (await ctx.host.request('vault/info', { name: vault })).path : undefined;
}

/** Asks for a new vault's name, checked as the host checks it, and against the vaults there are. */
export async function askVaultName(ctx: Ctx, prompt: string, value: string): Promise<string | undefined> {
  const existing = new Set((await ctx.tree.snapshot()).infos.keys());
  const name = await vscode.window.showInputBox({
    prompt,
    value,
    placeHolder: 'letters, digits, _ and -',
    validateInput: (v) =>
      !VAULT_NAME_RE.test(v) ? 'A vault name is 1-64 characters of A-Z a-z 0-9 _ -, not starting with -' : existing.has(v) ? `A vault named ${v} exists already` : undefined,
  });
  return name?.trim() || undefined;
}
