// The extension host's side of the UI bridge (runner side: scripts/vscode/uiDriver.mjs). A test calls
// `await ui('stepName', args)` to have Playwright act on or look at the workbench it runs in; the
// step's error (an element that never appeared…) fails the test. Steps are in ./uiSteps.ts.
import { request } from 'node:http';
import type { Context } from 'mocha';
import * as vscode from 'vscode';
import type { UiSteps } from './uiSteps';

export const UI_DRIVER_ENV = 'AVFS_UI_DRIVER';

/** Workbench parts by their element ids, for a step target's `within`. */
export const PART = {
  activityBar: '#workbench\\.parts\\.activitybar',
  sideBar: '#workbench\\.parts\\.sidebar',
  panel: '#workbench\\.parts\\.panel',
  statusBar: '#workbench\\.parts\\.statusbar',
  editor: '#workbench\\.parts\\.editor',
} as const;

type StepArgs<K extends keyof UiSteps> = Parameters<UiSteps[K]>[1];
type StepResult<K extends keyof UiSteps> = Awaited<ReturnType<UiSteps[K]>>;

/**
 * Skips the calling test when no UI driver is there (`npm run test:desktop`: plain VS Code without
 * the harness). The code-server harness always provides one and fails any skipped test.
 */
export function requireUi(test: Context): void {
  if (!process.env[UI_DRIVER_ENV]) test.skip();
}

export function ui<K extends keyof UiSteps>(step: K, args: StepArgs<K>): Promise<StepResult<K>> {
  const base = process.env[UI_DRIVER_ENV];
  if (!base) return Promise.reject(new Error(`no UI driver: ${UI_DRIVER_ENV} is not set (run under scripts/vscode/test.mjs)`));
  const body = JSON.stringify(args);
  // Captured here, so that a failed step's stack points at the test line that asked for it.
  const callSite = new Error();
  const failed = (message: string): Error => {
    const e = new Error(message);
    e.stack = `Error: ${message}\n${(callSite.stack ?? '').split('\n').slice(1).join('\n')}`;
    return e;
  };
  return new Promise((resolve, reject) => {
    const req = request(`${base}/step/${encodeURIComponent(step)}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        try {
          const reply = JSON.parse(text) as { ok: true; value: StepResult<K> } | { ok: false; error: string };
          if (reply.ok) resolve(reply.value);
          else reject(failed(`UI step ${step}: ${reply.error}`));
        } catch {
          reject(failed(`UI step ${step}: unreadable reply (HTTP ${res.statusCode}): ${text.slice(0, 200)}`));
        }
      });
    });
    req.on('error', (e) => reject(failed(`UI step ${step}: ${e.message}`)));
    req.end(body);
  });
}

/**
 * The notifications the window holds, each as its text (message, source and buttons). In headless
 * Chromium they go to the Notification Center rather than toasts, so it is opened to read them.
 */
export async function notifications(): Promise<string[]> {
  await vscode.commands.executeCommand('notifications.showList');
  await ui('visible', { css: '.notifications-center' });
  return ui('texts', { css: '.notifications-center .notification-list-item' });
}

/** Waits until a notification matches (its text: message, source and buttons) and returns its text. */
export async function notification(match: RegExp, ms = 15_000): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const shown = await notifications();
    const found = shown.find((n) => match.test(n));
    if (found) return found;
    if (Date.now() > end) throw new Error(`no notification matches ${match} within ${ms} ms; the window shows ${JSON.stringify(shown)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** A row of the side bar's tree whose label is `label` (its accessible name is the label, then the description). */
export function row(label: string): { role: 'treeitem'; pattern: string; within: string } {
  return { role: 'treeitem', pattern: `^${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}( |$)`, within: PART.sideBar };
}

/** The same row as a CSS scope, for the inline action buttons inside it. */
export function rowScope(label: string): string {
  return `${PART.sideBar} .monaco-list-row[aria-label="${label}"], ${PART.sideBar} .monaco-list-row[aria-label^="${label} "]`;
}

/**
 * The selected row of the side bar's tree labelled `label`, as a CSS selector (a target, or the
 * scope of its inline buttons). reveal() selects the row it shows: this tells apart rows with the
 * same label under different vaults (two vaults' checkpoints, two "Files" nodes).
 */
export function selectedRow(label: string): string {
  return `${PART.sideBar} .monaco-list-row.selected[aria-label^="${label} "]`;
}
