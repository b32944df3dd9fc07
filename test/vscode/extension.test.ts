// The extension in a real VS Code: activation, its contributions, and the view before any vault.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { SETTINGS } from '../../extension/config';
import { agentRun, avfsJson, extension, hostReady, manifest, markerCommand, uniqueName, until } from './helpers';
import { PART, requireUi, ui } from './ui';

describe('AVFS extension', () => {
  it('activates on startup with its view never opened: it starts the host, and an agent\'s request waits for this window', async () => {
    // Nothing here activates it (no activate(), no view, no avfs: file): onStartupFinished does.
    const ext = extension();
    await until('activation on startup', () => ext.isActive, 30_000);
    const api = ext.exports;
    assert.equal(api.tree.view.visible, false, 'the Vaults view was opened');
    await until('the vault host ready, started by activation alone', () => api.host.state.name === 'ready', 30_000);
    const log = readFileSync(join(api.logUri.fsPath, 'AVFS.log'), 'utf8');
    const ms = /AVFS \S+ activated in ([\d.]+) ms/.exec(log);
    assert.ok(ms, 'the log says how long activate() took');
    // What VS Code counts of it: the entry (dist/extension.js), loaded by the host's own marks, and its activate() call; the core came after.
    const part = /VS Code's part: loading dist\/extension\.js ([\d.]+) ms \(its marks\), its activate\(\) call ([\d.]+) ms; the core loaded after that in ([\d.]+) ms/.exec(log);
    assert.ok(part, `the log says what VS Code's count holds:\n${log.split('\n')[0]}`);
    process.stdout.write(`      activate() took ${ms[1]} ms of the extension host's time, after VS Code's count: loading the entry ${part[1]} ms, its activate() call ${part[2]} ms; loading the core after ${part[3]} ms\n`);
    // The window is an approver from the start: a request is put to it (not denied as no_approver).
    const vault = uniqueName('startup');
    await avfsJson('vault', 'create', vault);
    const run = agentRun(vault, markerCommand('startup'));
    await until('the request to reach this window', () => api.approvals.pending().some((r) => r.vault === vault), 20_000);
    assert.equal(api.tree.view.visible, false, 'the Vaults view was opened');
    const [req] = api.approvals.pending();
    assert.ok(await api.approvals.answer(req!.id, 'deny'));
    const { envelope } = await run;
    assert.equal(envelope.result.approval?.outcome, 'denied');
    assert.match(envelope.result.approval?.by ?? '', /^vscode client \(pid \d+/);
    // The next test needs the fresh home's empty vault list.
    await avfsJson('vault', 'delete', vault, '--yes');
  });

  it('registers exactly the commands its manifest contributes, all under the AVFS category', async () => {
    await extension().activate();
    const { contributes } = manifest();
    const contributed = contributes.commands.map((c) => c.command).sort();
    assert.ok(contributed.length > 0);
    for (const c of contributes.commands) assert.equal(c.category, 'AVFS', `${c.command} category`);
    // VS Code adds <view id>.focus and similar commands for every view; those are not the extension's.
    const views = Object.values(contributes.views).flat().map((v) => `${v.id}.`);
    const registered = (await vscode.commands.getCommands(true))
      .filter((c) => c.startsWith('avfs.') && !views.some((v) => c.startsWith(v)))
      .sort();
    assert.deepEqual(registered, contributed);
    // Inline actions show an icon: every command in an inline group has one.
    const inline = Object.values(contributes.menus).flat().filter((m) => m.group?.startsWith('inline'));
    for (const m of inline) assert.ok(contributes.commands.find((c) => c.command === m.command)?.icon, `${m.command} is inline and has no icon`);
  });

  it('declares every setting it reads, with a type, a default, a scope and a description', () => {
    const declared = manifest().contributes.configuration.flatMap((section) => Object.entries(section.properties));
    assert.deepEqual(declared.map(([key]) => key).sort(), Object.values(SETTINGS).sort());
    for (const [key, p] of declared) {
      assert.ok(p.type && p.default !== undefined && p.scope && (p.description || p.markdownDescription), `${key} is fully declared`);
      // VS Code knows it: the default is what the configuration API returns when nothing is set.
      assert.deepEqual(vscode.workspace.getConfiguration().inspect(key)?.defaultValue, p.default);
    }
  });

  it('shows its container in the activity bar; with no vault yet, the welcome view offers Create Vault, which makes one', async function () {
    requireUi(this);
    // The home of this run is fresh: no vault (tests run in file order, and this file is first).
    const api = await hostReady();
    const { vaults } = await api.host.request('vault/list', {});
    assert.deepEqual(vaults, [], 'this test needs the fresh avfs home of a run (its file runs first)');
    // Start from another container, as a person would: clicking the selected one would close it.
    await vscode.commands.executeCommand('workbench.view.explorer');
    const tab = { role: 'tab', name: 'AVFS', exact: true, within: PART.activityBar } as const;
    assert.equal((await ui('attributes', { ...tab, names: ['aria-selected'] }))['aria-selected'], 'false');
    await ui('click', tab);
    assert.equal((await ui('attributes', { ...tab, names: ['aria-selected'] }))['aria-selected'], 'true');
    // With one view in the container, its name is in the side bar's title ("AVFS: Vaults").
    assert.match(await ui('visible', { css: '.composite.title .title-label', within: PART.sideBar }), /^AVFS: Vaults$/i);
    assert.match(await ui('visible', { css: '.welcome-view-content', within: PART.sideBar }), /Vaults are isolated workspaces for AI agents/);
    await ui('screenshot', { name: 'welcome' });
    await ui('click', { role: 'button', name: 'Create Vault', within: PART.sideBar });
    await ui('visible', { css: '.quick-input-widget' });
    await ui('type', { text: 'first' });
    await ui('press', { key: 'Enter' });
    await ui('visible', { role: 'treeitem', name: 'first', within: PART.sideBar });
    const listed = await api.host.request('vault/list', {});
    assert.deepEqual(listed.vaults.map((v) => v.name), ['first']);
  });

  it("the Show Logs command opens the AVFS log, with the host's own lines in it", async function () {
    requireUi(this);
    await hostReady();
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await vscode.commands.executeCommand('avfs.showLogs');
    assert.equal(await ui('value', { role: 'combobox', name: 'Switch Output', within: PART.panel }), 'AVFS');
    // The log ends with the host's lines (its `log` notifications): the view shows the end.
    assert.match(await ui('visible', { text: '[host] client', within: PART.panel }), /\[host\] client \S/);
    await vscode.commands.executeCommand('workbench.action.closePanel');
  });
});
