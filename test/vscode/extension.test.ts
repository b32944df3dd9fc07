// The extension in a real VS Code: activation, its contributions, and what a person sees.
import assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { extension, manifest, until } from './helpers';
import { PART, requireUi, ui } from './ui';

describe('AVFS extension', () => {
  it('is activated by opening its view container', async () => {
    const ext = extension();
    assert.equal(ext.isActive, false, 'activated before anything asked for it');
    await vscode.commands.executeCommand('workbench.view.extension.avfs');
    await until('activation', () => ext.isActive);
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
  });

  it('shows its container in the activity bar, with the Vaults view and its welcome content', async function () {
    requireUi(this);
    // Start from another container, as a person would: clicking the selected one would close it.
    await vscode.commands.executeCommand('workbench.view.explorer');
    const tab = { role: 'tab', name: 'AVFS', exact: true, within: PART.activityBar } as const;
    assert.equal((await ui('attributes', { ...tab, names: ['aria-selected'] }))['aria-selected'], 'false');
    await ui('click', tab);
    assert.equal((await ui('attributes', { ...tab, names: ['aria-selected'] }))['aria-selected'], 'true');
    // With one view in the container, its name is in the side bar's title ("AVFS: Vaults").
    assert.match(await ui('visible', { css: '.composite.title .title-label', within: PART.sideBar }), /^AVFS: Vaults$/i);
    assert.match(await ui('visible', { css: '.welcome-view-content', within: PART.sideBar }), /once the extension is connected to the AVFS vault host/);
    await ui('screenshot', { name: 'avfs-view' });
  });

  it("the welcome view's Show Logs button opens the AVFS log at its activation line", async function () {
    requireUi(this);
    await vscode.commands.executeCommand('workbench.view.extension.avfs');
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await ui('click', { role: 'button', name: 'Show Logs', within: PART.sideBar });
    assert.equal(await ui('value', { role: 'combobox', name: 'Switch Output', within: PART.panel }), 'AVFS');
    const shown = await ui('visible', { text: `AVFS ${manifest().version} activated`, within: PART.panel });
    assert.match(shown, /\[info\] AVFS \S+ activated \(VS Code/);
  });
});
