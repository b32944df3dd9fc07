// Agents in the editor: the MCP server definition the extension gives VS Code (and VS Code starting
// it: the server answers tools/list), "AVFS: Use Vault for Agents…" in the status bar, and the AVFS
// Vault Shell: a line runs in the vault, a line that needs approval is asked in a notification, a
// denied line prints the decision.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { VaultShell } from '../../extension/agents/vaultShell';
import { ExecutionEnvelope } from '../../host/protocol/exec';
import { avfs, extension, hostReady, manifest, markerCommand, newVault, tidyWindow, until } from './helpers';
import { notification, PART, requireUi, ui } from './ui';

/** A vault shell in a terminal, and everything it has written. */
function openShell(pty: VaultShell): { terminal: vscode.Terminal; output: () => string; send: (line: string) => void } {
  let out = '';
  pty.onDidWrite((d) => (out += d));
  const terminal = vscode.window.createTerminal({ name: 'AVFS Vault Shell (test)', pty });
  // sendText types into the pseudoterminal (handleInput), as a person or an agent at it would.
  return { terminal, output: () => out, send: (line) => terminal.sendText(line, true) };
}
const plain = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

describe('Agents', () => {
  afterEach(async () => {
    for (const t of vscode.window.terminals) if (t.name.startsWith('AVFS Vault Shell')) t.dispose();
    await tidyWindow();
  });

  it('contributes the MCP server definition provider and the vault shell profile', () => {
    const { contributes, engines } = manifest() as unknown as {
      contributes: { mcpServerDefinitionProviders: Array<{ id: string }>; terminal: { profiles: Array<{ id: string; title: string }> } };
      engines: { vscode: string };
    };
    assert.deepEqual(contributes.mcpServerDefinitionProviders.map((p) => p.id), ['avfs.vaults']);
    assert.deepEqual(contributes.terminal.profiles.map((p) => p.title), ['AVFS Vault Shell']);
    assert.equal(engines.vscode, '^1.101.0');
    assert.ok(typeof vscode.lm.registerMcpServerDefinitionProvider === 'function', `VS Code ${vscode.version} has the MCP API`);
  });

  it('the provider gives `avfs mcp` on the chosen vault; the definition starts a server that answers tools/list, through the host', async () => {
    const api = await hostReady();
    const vault = await newVault(api, 'agents', { '/hello.txt': 'from the vault\n' });
    await api.agents.use(vault);
    const def = api.agents.definition();
    assert.match(def.label, new RegExp(`AVFS \\(${vault}\\)`));
    assert.deepEqual(def.args.slice(-3), ['--vault', vault, 'mcp']);
    // Start it as VS Code does: the definition's command, args and env.
    const transport = new StdioClientTransport({ command: def.command, args: def.args, env: { ...(process.env as Record<string, string>), ...(def.env as Record<string, string>) }, stderr: 'pipe' });
    const client = new Client({ name: 'agents test', version: '1' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      for (const name of ['read_file', 'edit_file', 'exec', 'checkpoint_restore']) assert.ok(tools.some((t) => t.name === name), name);
      const r = (await client.callTool({ name: 'read_file', arguments: { path: '/hello.txt' } })) as { content: Array<{ text: string }> };
      assert.equal(r.content[0]!.text, 'from the vault\n');
      // Through the editor's host: the host lists the MCP server as a client.
      const status = await api.host.hostRequest('host/status', {});
      assert.ok(status.clients.some((c) => c.name.startsWith('avfs mcp (pid')), JSON.stringify(status.clients.map((c) => c.name)));
    } finally {
      await client.close();
    }
    await api.agents.use(undefined);
    assert.deepEqual(api.agents.definition().args.slice(-1), ['mcp']);
  });

  it('VS Code starts the server itself: the AVFS tools are in vscode.lm.tools, read_file answers, and exec needing approval asks in our notification', async function () {
    requireUi(this);
    this.timeout(180_000);
    const api = await hostReady();
    const tool = (suffix: string) => vscode.lm.tools.find((t) => t.name.startsWith('mcp_') && t.name.endsWith(`_${suffix}`));
    // The AVFS tools listed now are another server's (an earlier try's, whose definition went with
    // its vault): VS Code drops them once it has let that definition go. Until then a tool of that
    // name is listed but not ours, and invoking it after VS Code dropped it fails ("Tool
    // mcp_agentvfs_read_file was not contributed").
    await until('VS Code to drop the AVFS tools of an earlier server', () => tool('read_file') === undefined, 30_000);
    const vault = await newVault(api, 'lm', { '/hello.txt': 'from the vault\n' });
    await api.agents.use(vault);
    // VS Code names the server of a definition from an extension's provider `<extension id in lower
    // case>/<label>`; the label names the vault. Starting that one alone: '*' also starts the
    // server of the definition VS Code is about to drop (the one before use(vault): it takes a
    // changed definition half a second later), whose tools are listed, then dropped.
    const server = `${extension().id.toLowerCase()}/${api.agents.definition().label}`;
    // The suite's window has VS Code's AI features off (QUIET_SETTINGS: chat.disableAIFeatures), and
    // then VS Code starts no MCP server: workbench.mcp.startServer returns at once, spawning nothing.
    // A person using agent mode has them on.
    const chat = vscode.workspace.getConfiguration('chat');
    const aiOff = chat.inspect<boolean>('disableAIFeatures')?.globalValue;
    await chat.update('disableAIFeatures', false, vscode.ConfigurationTarget.Global);
    try {
      // Turning them on takes effect asynchronously (the built-in chat extension is enabled and
      // activates): until it has, startServer finds no server. Ask again until VS Code has started
      // ours (and has the definition: until then there is no server of that name).
      const t0 = Date.now();
      await until('VS Code to start the AVFS server and list its tools', async () => {
        await vscode.commands.executeCommand('workbench.mcp.startServer', server, { waitForLiveTools: true });
        return tool('read_file') !== undefined;
      }, 90_000);
      process.stdout.write(`      (VS Code listed the AVFS tools ${Date.now() - t0} ms after AI features were turned on)\n`);
      const names = vscode.lm.tools.filter((t) => t.name.startsWith('mcp_')).map((t) => t.name.replace(/^mcp_[^_]+_/, ''));
      for (const name of ['read_file', 'write_file', 'edit_file', 'exec', 'checkpoint_restore', 'vault_list']) assert.ok(names.includes(name), `${name} in ${names.join(' ')}`);
      const exec = tool('exec')!;
      assert.ok(exec.inputSchema && 'properties' in exec.inputSchema, 'exec has its input schema');
      // VS Code spawned it (not this test): the host lists it as a client.
      const status = await api.host.hostRequest('host/status', {});
      assert.ok(status.clients.some((c) => c.name.startsWith('avfs mcp (pid')), JSON.stringify(status.clients.map((c) => c.name)));

      const text = (r: vscode.LanguageModelToolResult) => r.content.filter((p): p is vscode.LanguageModelTextPart => p instanceof vscode.LanguageModelTextPart).map((p) => p.value).join('');
      // VS Code hands a model the tool's structuredContent (the JSON its outputSchema describes).
      const read = await vscode.lm.invokeTool(tool('read_file')!.name, { input: { path: '/hello.txt' }, toolInvocationToken: undefined });
      assert.equal((JSON.parse(text(read)) as { content: string }).content, 'from the vault\n');

      // exec of a command the policy sends for approval, invoked through VS Code: our notification
      // asks (VS Code's own "run this tool?" confirmation is answered Yes by the workbench in test mode).
      const run = vscode.lm.invokeTool(exec.name, { input: { command: markerCommand('lm') }, toolInvocationToken: undefined });
      // Turning AI features on can reveal the chat view while the center opens: look again until it shows.
      for (let end = Date.now() + 60_000; ; ) {
        try {
          await notification(new RegExp(`Agent wants to run .*marker.* in vault ${vault}`), 5_000);
          break;
        } catch (e) {
          await ui('screenshot', { name: `lm-notification-${Date.now()}` });
          if (Date.now() > end) throw e;
        }
      }
      await ui('click', { role: 'button', name: 'Approve Once', exact: true, within: '.notifications-center' });
      const envelope = ExecutionEnvelope.parse(JSON.parse(text(await run)));
      assert.equal(envelope.result.approval?.outcome, 'approved');
      assert.equal(envelope.result.exit_code, 0);
      assert.equal((await avfs(['--vault', vault, 'cat', '/marker.txt'])).stdout, 'lm');
    } finally {
      // stopServer takes the server's name ('*' names none). With the vault's definition gone
      // (use(undefined)) VS Code lets the server go, and its tools; the next test, or a try again
      // of this one, starts without them.
      await vscode.commands.executeCommand('workbench.mcp.stopServer', server).then(undefined, () => undefined);
      await api.agents.use(undefined);
      await until('VS Code to drop the AVFS tools', () => tool('read_file') === undefined, 30_000).catch(() => undefined);
      // Back as the suite has them (off), not to the default (on) for the tests after this one.
      await chat.update('disableAIFeatures', aiOff, vscode.ConfigurationTarget.Global);
    }
  });

  it('Use Vault for Agents… picks the vault, shown in the status bar', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'pick');
    const picked = vscode.commands.executeCommand('avfs.useVaultForAgents');
    await ui('visible', { role: 'option', name: vault, within: '.quick-input-widget' });
    await ui('click', { role: 'option', name: vault, within: '.quick-input-widget' });
    await picked;
    assert.equal(api.agents.vault, vault);
    assert.deepEqual(api.agents.definition().args.slice(-3), ['--vault', vault, 'mcp']);
    await ui('visible', { role: 'button', name: vault, within: PART.statusBar });
    await api.agents.use(undefined);
  });

  it('the vault shell runs a line in the vault, tracks cd, asks for an approval, and a denied line prints the decision', async function () {
    requireUi(this);
    this.timeout(120_000);
    const api = await hostReady();
    const vault = await newVault(api, 'shell');
    assert.equal((await avfs(['--vault', vault, 'write', '-p', '/sub/keep.txt', 'x\n'])).code, 0);
    await api.agents.use(vault);
    const pty = api.agents.shell();
    const { output, send } = openShell(pty);
    await until('the prompt', () => plain(output()).includes(`avfs:${vault} /$ `));

    send('echo hello from the shell > greet.txt && cat greet.txt');
    await until('the line to run', () => pty.runs.length === 1 && pty.runs[0]!.envelope !== undefined, 60_000);
    assert.match(plain(output()), /hello from the shell\r\n/);
    assert.equal((await avfs(['--vault', vault, 'cat', '/greet.txt'])).stdout, 'hello from the shell\n');

    send('cd sub');
    await until('the new prompt', () => plain(output()).includes(`avfs:${vault} /sub$ `));
    send('ls');
    await until('ls to run in /sub', () => pty.runs.length === 2 && pty.runs[1]!.envelope !== undefined, 60_000);
    assert.match(pty.runs[1]!.envelope!.result.stdout, /keep\.txt/);
    assert.equal(pty.runs[1]!.envelope!.request.cwd, '/sub');

    // A line that needs approval: the window's notification asks; Approve Once lets it run.
    send(markerCommand('shell'));
    await notification(new RegExp(`Agent wants to run .*marker.* in vault ${vault}`), 30_000);
    await ui('click', { role: 'button', name: 'Approve Once', exact: true, within: '.notifications-center' });
    await until('the approved line to finish', () => pty.runs.length === 3 && pty.runs[2]!.envelope !== undefined, 60_000);
    assert.equal(pty.runs[2]!.envelope!.result.approval?.outcome, 'approved');
    assert.equal((await avfs(['--vault', vault, 'cat', '/sub/marker.txt'])).stdout, 'shell');

    // A denied line: the decision is printed and nothing runs.
    send('echo ran > ran.txt; rm -rf /');
    await until('the denied line', () => pty.runs.length === 4 && pty.runs[3]!.envelope !== undefined, 60_000);
    assert.equal(pty.runs[3]!.envelope!.result.state, 'denied');
    assert.match(plain(output()), /avfs: denied: deny by builtin:host_escape: /);
    assert.notEqual((await avfs(['--vault', vault, 'cat', '/sub/ran.txt'])).code, 0, 'nothing of the line ran');
    await api.agents.use(undefined);
  });
});
