// Agents plug in: the MCP server definition VS Code's agent mode starts (`avfs mcp` on the chosen
// vault), the "AVFS: Use Vault for Agents…" command and its status bar item, and the "AVFS Vault
// Shell" terminal profile (vaultShell.ts). The vault chosen is kept per workspace; none chosen is
// the current vault.
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { HostClient, Logger } from '../client/hostClient';
import { hostEnv } from '../client/launch';
import { hostNode } from '../client/runtime';
import { config } from '../config';
import { errorMessage } from '../errors';
import { VaultShell } from './vaultShell';

export const USE_VAULT_COMMAND = 'avfs.useVaultForAgents';
export const MCP_PROVIDER_ID = 'avfs.vaults';
export const SHELL_PROFILE_ID = 'avfs.vaultShell';
const STATE_KEY = 'avfs.agents.vault';

export interface AgentsDeps {
  extension: vscode.ExtensionContext;
  host: HostClient;
  log: Logger;
}

export class Agents implements vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly item: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly deps: AgentsDeps) {
    this.item = vscode.window.createStatusBarItem('avfs.agents', vscode.StatusBarAlignment.Left, 99);
    this.item.name = 'AVFS: Vault for Agents';
    this.item.command = USE_VAULT_COMMAND;
    this.render();
    this.item.show();
    this.disposables.push(
      this.item,
      this.changed,
      vscode.lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
        onDidChangeMcpServerDefinitions: this.changed.event,
        provideMcpServerDefinitions: () => [this.definition()],
      }),
      vscode.window.registerTerminalProfileProvider(SHELL_PROFILE_ID, {
        provideTerminalProfile: () => new vscode.TerminalProfile({ name: `AVFS Vault Shell (${this.vault ?? 'current vault'})`, pty: this.shell() }),
      }),
      // A vault created or deleted elsewhere: VS Code asks for the definitions again (the chosen one may be gone).
      deps.host.onVaultChanged((e) => {
        if (e.kind === 'created' || e.kind === 'deleted') {
          if (e.kind === 'deleted' && e.vault === this.vault) void this.use(undefined);
          else this.changed.fire();
        }
      }),
    );
  }

  /** The vault agents work in; undefined: the current vault. */
  get vault(): string | undefined {
    return this.deps.extension.workspaceState.get<string>(STATE_KEY);
  }

  async use(vault: string | undefined): Promise<void> {
    await this.deps.extension.workspaceState.update(STATE_KEY, vault);
    this.render();
    this.changed.fire();
    this.deps.log.info(`agents now work in ${vault ? `vault ${vault}` : 'the current vault'}`);
  }

  /** `avfs mcp` as VS Code starts it: this extension's CLI, on the Node the host runs on, in the same avfs home. */
  definition(): vscode.McpStdioServerDefinition {
    const settings = config.host();
    const script = join(this.deps.extension.extensionPath, 'dist', 'avfs.js');
    // The Node the host runs on (avfs.nodePath, else the extension's own runtime, else `node` from PATH).
    const node = hostNode(settings.nodePath, this.deps.extension.extensionPath).nodePath;
    const args = [script, ...(this.vault ? ['--vault', this.vault] : []), 'mcp'];
    const env: Record<string, string> = {};
    const home = hostEnv(process.env, settings.home).AVFS_HOME;
    if (home) env.AVFS_HOME = home;
    const { version } = this.deps.extension.extension.packageJSON as { version: string };
    return new vscode.McpStdioServerDefinition(`AVFS (${this.vault ?? 'current vault'})`, node, args, env, version);
  }

  /** A new vault shell, in the chosen vault. */
  shell(): VaultShell {
    return new VaultShell({ host: this.deps.host, vault: this.vault, log: this.deps.log });
  }

  /** "AVFS: Use Vault for Agents…": pick the vault, or the current one. */
  async pick(): Promise<void> {
    let vaults: string[];
    try {
      vaults = (await this.deps.host.request('vault/list', {})).vaults.filter((v) => v.status === 'ok').map((v) => v.name);
    } catch (e) {
      void vscode.window.showErrorMessage(`AVFS: could not list the vaults: ${errorMessage(e)}`);
      return;
    }
    const CURRENT = '$(target) The current vault';
    const items: vscode.QuickPickItem[] = [
      { label: CURRENT, description: this.vault === undefined ? 'in use' : '', detail: 'whichever vault `avfs vault use` makes current' },
      ...vaults.map((name) => ({ label: name, description: name === this.vault ? 'in use' : '' })),
    ];
    const chosen = await vscode.window.showQuickPick(items, { title: 'AVFS: Use Vault for Agents', placeHolder: 'The vault the MCP server and the AVFS Vault Shell work in' });
    if (!chosen) return;
    await this.use(chosen.label === CURRENT ? undefined : chosen.label);
  }

  private render(): void {
    this.item.text = `$(hubot) ${this.vault ?? 'current vault'}`;
    this.item.tooltip = `Agents (MCP in VS Code, the AVFS Vault Shell) work in ${this.vault ? `the vault ${this.vault}` : 'the current vault'}. Click to change.`;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

export function registerAgents(deps: AgentsDeps): { agents: Agents; disposables: vscode.Disposable[] } {
  const agents = new Agents(deps);
  return { agents, disposables: [agents, vscode.commands.registerCommand(USE_VAULT_COMMAND, () => agents.pick())] };
}
