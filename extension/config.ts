// The extension's settings, read in one place. Every key here is contributed in package.json
// (`contributes.configuration`, with type, default, scope and description); a node:test checks the
// two lists are the same.
import * as vscode from 'vscode';
import type { HostSettings } from './client/hostClient';

export const SETTINGS = {
  nodePath: 'avfs.nodePath',
  home: 'avfs.home',
  requestTimeoutSeconds: 'avfs.requestTimeoutSeconds',
  hostIdleExitSeconds: 'avfs.hostIdleExitSeconds',
  showViewOnStartup: 'avfs.showViewOnStartup',
  vaultShellMaterialize: 'avfs.vaultShell.materialize',
} as const;

/** Settings the running host was started with: changing one restarts it. */
const HOST_SETTINGS = [SETTINGS.nodePath, SETTINGS.home];

function read<T>(key: string, fallback: T): T {
  const [section, name] = [key.slice(0, key.indexOf('.')), key.slice(key.indexOf('.') + 1)];
  return vscode.workspace.getConfiguration(section).get<T>(name) ?? fallback;
}

export const config = {
  host(): HostSettings {
    const home = read(SETTINGS.home, '').trim();
    return {
      // Empty: the Node shipped in the extension (client/runtime.ts: hostNode).
      nodePath: read(SETTINGS.nodePath, '').trim(),
      home: home || undefined,
      requestTimeoutMs: Math.max(1, read(SETTINGS.requestTimeoutSeconds, 30)) * 1000,
      // Read when a host is started (`avfs host --idle-exit`): a running host keeps the grace it started with.
      idleExitMs: Math.max(0, read(SETTINGS.hostIdleExitSeconds, 60)) * 1000,
    };
  },
  showViewOnStartup(): boolean {
    return read(SETTINGS.showViewOnStartup, false);
  },
  /** Read at each line the vault shell runs. */
  vaultShellMaterialize(): boolean {
    return read(SETTINGS.vaultShellMaterialize, false);
  },
  affectsHost(e: vscode.ConfigurationChangeEvent): boolean {
    return HOST_SETTINGS.some((key) => e.affectsConfiguration(key));
  },
};
