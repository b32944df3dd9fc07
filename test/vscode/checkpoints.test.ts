// Checkpoints from the view: Restore (asked in a modal that says what will be lost) changes what the
// open editor shows; Compare with Current and Compare with Checkpoint open the native diff editors.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { AvfsTestApi } from '../../extension/extension';
import { answerNextModal, avfs, avfsJson, hostReady, reveal, tidyWindow, uniqueName, until } from './helpers';
import { notification, PART, requireUi, selectedRow, ui } from './ui';

const EDITOR_TEXT = '.editor-group-container.active .monaco-editor .view-lines';

/** A vault with `base` saved as checkpoint `cp`, then changed: /app.py edited, /new.txt added, /old.txt deleted. */
async function changedSince(prefix: string): Promise<{ api: AvfsTestApi; vault: string }> {
  const api = await hostReady();
  const vault = uniqueName(prefix);
  await avfsJson('vault', 'create', vault);
  await avfsJson('--vault', vault, 'write', '/app.py', 'print("version one")\n');
  await avfsJson('--vault', vault, 'write', '/old.txt', 'old\n');
  await avfsJson('--vault', vault, 'checkpoint', 'save', 'base');
  await avfsJson('--vault', vault, 'write', '/app.py', 'print("version two")\n');
  await avfsJson('--vault', vault, 'write', '/new.txt', 'new\n');
  assert.equal((await avfs(['--vault', vault, 'rm', '/old.txt'])).code, 0);
  return { api, vault };
}

function revealCheckpoint(api: AvfsTestApi, vault: string, name: string): Promise<void> {
  return reveal(api, { kind: 'checkpoint', vault, name });
}

describe('Checkpoints', () => {
  afterEach(tidyWindow);

  it('Restore asks in a modal what will be lost, then the open editor shows the checkpoint\'s text', async function () {
    requireUi(this);
    const { api, vault } = await changedSince('restore');
    const editor = await vscode.window.showTextDocument(vscode.Uri.parse(`avfs://${vault}/app.py`));
    assert.equal(editor.document.getText(), 'print("version two")\n');
    await revealCheckpoint(api, vault, 'base');
    const modal = answerNextModal('Restore');
    await ui('menu', { css: selectedRow('base'), item: 'Restore Checkpoint…' });
    const asked = await modal;
    assert.equal(asked.message, `Restore vault "${vault}" to checkpoint "base"? The work done since then will be lost.`);
    assert.deepEqual(asked.buttons, ['Restore']);
    assert.equal(
      asked.detail,
      [
        '1 file changed since then lose those changes:',
        '  /app.py',
        '1 path created since then will be deleted:',
        '  /new.txt',
        '1 path deleted since then come back:',
        '  /old.txt',
        '',
        'The current tree is saved first as an automatic checkpoint, so this restore can be undone.',
      ].join('\n'),
    );
    await until('the editor back at the checkpoint', () => editor.document.getText() === 'print("version one")\n');
    assert.match(await ui('visible', { css: EDITOR_TEXT }), /version one/);
    assert.equal((await avfs(['--vault', vault, 'cat', '/old.txt'])).stdout, 'old\n');
    assert.notEqual((await avfs(['--vault', vault, 'cat', '/new.txt'])).code, 0);
    await notification(new RegExp(`Vault ${vault} restored to checkpoint base; the tree before it is saved as checkpoint before-restore-`));
  });

  it('Compare with Current opens what changed since a checkpoint in the multi-file diff editor', async function () {
    requireUi(this);
    const { api, vault } = await changedSince('compare');
    await revealCheckpoint(api, vault, 'base');
    await ui('hover', { css: selectedRow('base') });
    await ui('click', { role: 'button', name: 'Compare with Current', within: selectedRow('base') });
    // The multi-file diff editor adds the number of files to the title.
    await until('the diff editor', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label === `${vault}: base ↔ Current (3 files)`);
    // It shows "Loading..." until it has read both sides of each file through the file systems.
    await until('the three files listed', async () => {
      const editor = await ui('visible', { css: `${PART.editor} .multiDiffEditor` });
      return ['app.py', 'new.txt', 'old.txt'].every((name) => editor.includes(name));
    });
    await until('both sides of app.py', async () => {
      const text = (await ui('texts', { css: `${PART.editor} .multiDiffEditor .view-lines` })).join('\n');
      return text.includes('version one') && text.includes('version two');
    });
  });

  it('Compare with Checkpoint… in an editor\'s title shows the file side by side with the checkpoint', async function () {
    requireUi(this);
    const { vault } = await changedSince('onefile');
    const uri = vscode.Uri.parse(`avfs://${vault}/app.py`);
    await vscode.window.showTextDocument(uri);
    await ui('click', { role: 'button', name: 'Compare with Checkpoint…', within: PART.editor });
    await ui('visible', { css: '.quick-input-widget' });
    await ui('type', { text: 'base' });
    await ui('press', { key: 'Enter' });
    await until('the diff editor', () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input as vscode.TabInputTextDiff;
    assert.equal(input.original.scheme, 'avfs-checkpoint');
    assert.deepEqual(JSON.parse(input.original.query), { checkpoint: 'base' });
    assert.equal(input.modified.toString(), uri.toString());
    assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab?.label, 'app.py (base) ↔ Current');
  });
});
