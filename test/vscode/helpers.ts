// Helpers for the tests that run inside VS Code (test/vscode/*.test.ts).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HostState } from '../../extension/client/hostState';
import { ExecutionEnvelope } from '../../host/protocol/exec';
import type { AvfsTestApi } from '../../extension/extension';
import type { TreeNode } from '../../extension/views/treeModel';

export const EXTENSION_ID = 'agentvfs.agentvfs-vscode';

export function extension(): vscode.Extension<AvfsTestApi> {
  const ext = vscode.extensions.getExtension<AvfsTestApi>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not loaded`);
  return ext;
}

/** The extension's package.json, as VS Code read it. */
export function manifest(): Manifest {
  return extension().packageJSON as Manifest;
}

export interface Manifest {
  version: string;
  contributes: {
    commands: { command: string; category?: string; icon?: string }[];
    views: Record<string, { id: string }[]>;
    configuration: { properties: Record<string, { type: string; default: unknown; description?: string; markdownDescription?: string; scope?: string }> }[];
    menus: Record<string, { command: string; when?: string; group?: string }[]>;
  };
}

/** Waits until `check()` holds, polling every 50 ms; fails the test naming `what` after `ms`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !(await check()); ) {
    if (Date.now() > end) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The extension, activated, with its vault host running (it starts it when asked). */
export async function hostReady(): Promise<AvfsTestApi> {
  const api = await extension().activate();
  await vscode.commands.executeCommand('workbench.view.extension.avfs');
  api.host.ensureStarted();
  await until('the vault host ready', () => api.host.state.name === 'ready', 30_000);
  return api;
}

export function readyState(api: AvfsTestApi): Extract<HostState, { name: 'ready' }> {
  const s = api.host.state;
  assert.equal(s.name, 'ready', `the host is ${s.name}`);
  return s as Extract<HostState, { name: 'ready' }>;
}

/** A vault name no other test uses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1000)}`;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real `avfs` CLI (dist/avfs.js of the extension under test) on the test run's avfs home
 * ($AVFS_HOME, shared with the extension's host), as a person in a terminal would: with the `node`
 * on PATH (the Node that built its native modules), not the extension host's own runtime.
 */
export function avfs(args: string[], opts: { input?: string; home?: string } = {}): Promise<CliResult> {
  const cli = join(extension().extensionPath, 'dist', 'avfs.js');
  const env = opts.home ? { ...process.env, AVFS_HOME: opts.home } : process.env;
  return new Promise((resolve, reject) => {
    const child = spawn('node', [cli, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

/** `avfs --json …`, which must succeed; its one JSON document. */
export async function avfsJson<T = Record<string, unknown>>(...args: string[]): Promise<T> {
  const r = await avfs(['--json', ...args]);
  assert.equal(r.code, 0, `avfs ${args.join(' ')} exited ${r.code}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

/** Closes editors and notifications a test left, so the next starts from a plain window. */
export async function tidyWindow(): Promise<void> {
  // Unsaved edits would stop closeAllEditors with a "Save changes?" dialog: revert them first.
  for (let i = 0; i < 20 && vscode.workspace.textDocuments.some((d) => d.isDirty); i++) {
    const dirty = vscode.workspace.textDocuments.find((d) => d.isDirty);
    if (!dirty) break;
    await vscode.window.showTextDocument(dirty);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  }
  await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  await vscode.commands.executeCommand('notifications.clearAll');
  await vscode.commands.executeCommand('notifications.hideList');
}

/**
 * Shows `fields`'s node in the Vaults view (its ancestors expanded) and selects it. The view learns
 * of a vault the CLI just made from the host's event, a moment later: until then VS Code cannot
 * resolve the node, so this retries.
 */
export async function reveal(api: AvfsTestApi, fields: TreeNode, options: { expand?: boolean; select?: boolean } = {}): Promise<void> {
  await vscode.commands.executeCommand('workbench.view.extension.avfs');
  let last: unknown;
  for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 200))) {
    await api.tree.settled();
    try {
      await api.tree.view.reveal(api.tree.node(fields), { select: options.select ?? true, focus: options.select ?? true, expand: options.expand ?? false });
      // A row is what a person clicks: wait until VS Code has drawn what the reveal opened.
      await api.tree.settled();
      return;
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

export interface ModalSeen {
  message: string;
  detail: string | undefined;
  buttons: string[];
}

/**
 * Answers the extension's next modal confirmation with `answer` (undefined: Cancel) and returns
 * what it said. While extension tests run, VS Code refuses to show modal dialogs at all
 * ("DialogService: refused to show dialog in tests"), so this one edge of the vscode API is
 * answered here; everything else the test does goes through the real window.
 */
export function answerNextModal(answer: string | undefined, ms = 15_000): Promise<ModalSeen> {
  const window = vscode.window as unknown as { showWarningMessage: (...args: unknown[]) => Thenable<unknown> };
  const real = window.showWarningMessage;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      window.showWarningMessage = real;
      reject(new Error(`the extension asked no modal confirmation within ${ms} ms`));
    }, ms);
    window.showWarningMessage = (message: unknown, ...rest: unknown[]) => {
      const options = rest[0] as vscode.MessageOptions | undefined;
      if (typeof message !== 'string' || !options?.modal) return real.call(vscode.window, message, ...rest);
      window.showWarningMessage = real;
      clearTimeout(timer);
      const buttons = rest.slice(1).map((b) => (typeof b === 'string' ? b : (b as vscode.MessageItem).title));
      resolve({ message, detail: options.detail, buttons });
      return Promise.resolve(answer);
    };
  });
}

/** A command the built-in policy sends for approval (inline Python using sockets: networked), which writes marker.txt. */
export function markerCommand(tag: string): string {
  return `python3 -c 'import socket; open("marker.txt", "w").write("${tag}")'`;
}

/** Starts `avfs --json proxy exec` as an agent would, in the background: its envelope when it ends. */
export function agentRun(vault: string, shell: string, opts: { home?: string } = {}): Promise<{ r: CliResult; envelope: ExecutionEnvelope }> {
  return avfs(['--json', '--vault', vault, 'proxy', 'exec', '--shell', shell], opts).then((r) => {
    try {
      return { r, envelope: ExecutionEnvelope.parse(JSON.parse(r.stdout)) };
    } catch {
      throw new Error(`proxy exec printed no envelope (exit ${r.code}): ${r.stdout}${r.stderr}`);
    }
  });
}


/** A new vault made with the CLI (with these files), once the extension's host lists it. */
export async function newVault(api: AvfsTestApi, prefix: string, files: Record<string, string> = {}): Promise<string> {
  const vault = uniqueName(prefix);
  await avfsJson('vault', 'create', vault);
  for (const [path, text] of Object.entries(files)) await avfsJson('--vault', vault, 'write', path, text);
  await until('the extension to know the vault', async () => (await api.host.request('vault/list', {})).vaults.some((v) => v.name === vault));
  return vault;
}

export interface WarningWatch extends vscode.Disposable {
  /** The non-modal warning notifications shown since, in order (they are shown as usual). */
  toasts: string[];
  /** The modal ones, held until the test answers each (undefined: Cancel). */
  modals: { seen: ModalSeen; answer(pick: string | undefined): void }[];
}

/**
 * Watches the extension's warning messages: records each notification and holds each modal (which
 * VS Code refuses to show in tests, see answerNextModal) until the test answers it, so a test can
 * look at the window while a modal is open.
 */
export function watchWarnings(): WarningWatch {
  const window = vscode.window as unknown as { showWarningMessage: (...args: unknown[]) => Thenable<unknown> };
  const real = window.showWarningMessage;
  const watch: WarningWatch = {
    toasts: [],
    modals: [],
    dispose: () => (window.showWarningMessage = real),
  };
  window.showWarningMessage = (message: unknown, ...rest: unknown[]) => {
    const options = rest[0] as vscode.MessageOptions | undefined;
    if (typeof message !== 'string') return real.call(vscode.window, message, ...rest);
    if (!options?.modal) {
      watch.toasts.push(message);
      return real.call(vscode.window, message, ...rest);
    }
    const buttons = rest.slice(1).map((b) => (typeof b === 'string' ? b : (b as vscode.MessageItem).title));
    return new Promise((resolve) => watch.modals.push({ seen: { message, detail: options.detail, buttons }, answer: resolve }));
  };
  return watch;
}
