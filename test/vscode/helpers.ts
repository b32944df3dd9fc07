// Helpers for the tests that run inside VS Code (test/vscode/*.test.ts).
import assert from 'node:assert/strict';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'agentvfs.agentvfs-vscode';

export function extension(): vscode.Extension<unknown> {
  const ext = vscode.extensions.getExtension(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not loaded`);
  return ext;
}

/** The extension's package.json, as VS Code read it. */
export function manifest(): Manifest {
  return extension().packageJSON as Manifest;
}

export interface Manifest {
  version: string;
  contributes: { commands: { command: string; category?: string }[]; views: Record<string, { id: string }[]> };
}

/** Waits until `check()` holds, polling every 50 ms; fails the test naming `what` after `ms`. */
export async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); ) {
    if (Date.now() > end) assert.fail(`${what} did not happen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
