// The Vaults view: what the CLI makes appears from host events; forks nest; the inline and
// context-menu actions do what they say.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { TreeNode } from '../../extension/views/treeModel';
import { answerNextModal, avfsJson, hostReady, reveal, tidyWindow, uniqueName, until } from './helpers';
import { notification, requireUi, row, rowScope, selectedRow, ui } from './ui';


describe('The Vaults view', () => {
  afterEach(tidyWindow);

  it('shows a vault the CLI creates, from the host event (no polling)', async function () {
    requireUi(this);
    const api = await hostReady();
    const name = uniqueName('cli-made');
    await avfsJson('vault', 'create', name, '--max-size-mb', '64');
    const returned = Date.now();
    // Scrolled to once the view has it (the suite's vaults fill more than a screen); the view is never refreshed by hand.
    await reveal(api, { kind: 'vault', vault: name }, { select: false });
    const shown = await ui('visible', row(name));
    process.stdout.write(`      (the row appeared ${Date.now() - returned} ms after the CLI call returned)\n`);
    assert.ok(shown.startsWith(name), shown);
    const level = await ui('attributes', { ...row(name), names: ['aria-level', 'aria-label'] });
    assert.equal(level['aria-level'], '1');
    assert.match(level['aria-label'] ?? '', /^\S+ 0 B of 64 MiB · 0 files/);
  });

  it('nests a fork under its parent, and lists a vault\'s files and checkpoints under it', async function () {
    requireUi(this);
    const api = await hostReady();
    const parent = uniqueName('parent');
    const fork = `${parent}-fork`;
    await avfsJson('vault', 'create', parent);
    await avfsJson('--vault', parent, 'write', '/src/app.py', 'print("hi")\n', '--parents');
    await avfsJson('--vault', parent, 'checkpoint', 'save', 'first');
    await avfsJson('vault', 'fork', parent, fork);
    await reveal(api, { kind: 'vault', vault: fork });
    assert.equal((await ui('attributes', { ...row(parent), names: ['aria-level'] }))['aria-level'], '1');
    assert.equal((await ui('attributes', { ...row(fork), names: ['aria-level'] }))['aria-level'], '2');
    await reveal(api, { kind: 'entry', vault: parent, path: '/src/app.py', type: 'file' });
    assert.equal((await ui('attributes', { css: selectedRow('app.py'), names: ['aria-level'] }))['aria-level'], '4');
    await reveal(api, { kind: 'checkpoint', vault: parent, name: 'first' });
    const checkpoint = await ui('attributes', { css: selectedRow('first'), names: ['aria-level', 'aria-label'] });
    assert.equal(checkpoint['aria-level'], '3');
    assert.match(checkpoint['aria-label'] ?? '', /^first just now · \d+ B/);
  });

  it('Checkpoint Now, clicked on a vault row, saves a checkpoint the CLI lists and the view shows', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = uniqueName('snap');
    await avfsJson('vault', 'create', vault);
    await avfsJson('--vault', vault, 'write', '/a.txt', 'a');
    await reveal(api, { kind: 'vault', vault });
    await ui('hover', row(vault));
    await ui('click', { role: 'button', name: 'Checkpoint Now', within: rowScope(vault) });
    let names: string[] = [];
    await until('the checkpoint', async () => {
      names = (await avfsJson<{ checkpoints: { name: string }[] }>('--vault', vault, 'checkpoint', 'list')).checkpoints.map((c) => c.name);
      return names.length === 1;
    });
    await reveal(api, { kind: 'checkpoint', vault, name: names[0]! });
    await ui('visible', row(names[0]!));
  });

  it('offers each kind of row the actions that fit it', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = uniqueName('menus');
    await avfsJson('vault', 'create', vault);
    await avfsJson('--vault', vault, 'write', '/f.txt', 'f');
    await avfsJson('--vault', vault, 'checkpoint', 'save', 'cp1');
    const menu = async (fields: TreeNode, label: string) => {
      await reveal(api, fields);
      // The mouse off the rows: a row's tooltip (a vault's quotas) left showing would take the click.
      await ui('moveMouse', { x: 900, y: 500 });
      const items = await ui('contextMenu', { css: selectedRow(label) });
      await ui('press', { key: 'Escape' });
      return items;
    };
    assert.deepEqual(await menu({ kind: 'vault', vault }, vault), [
      'Checkpoint Now',
      'Checkpoint Retention…',
      'Prune and Reclaim Space…',
      'Fork Vault…',
      'Add Vault to Workspace',
      'Set Quota…',
      'Mount',
      'Open Terminal in Mount',
      'Apply to Workspace…',
      'Compare with Fork…',
      'Copy Path',
      'Delete Vault…',
    ]);
    assert.deepEqual(await menu({ kind: 'checkpoint', vault, name: 'cp1' }, 'cp1'), ['Compare with Current', 'Restore Checkpoint…', 'Copy Path', 'Delete Checkpoint…']);
    assert.deepEqual(await menu({ kind: 'entry', vault, path: '/f.txt', type: 'file' }, 'f.txt'), ['Compare with Checkpoint…', 'Apply This Change', 'Copy Path']);
  });

  it('Fork asks for a name and the fork appears under its parent; Delete asks in a modal dialog, then removes it', async function () {
    requireUi(this);
    const api = await hostReady();
    const parent = uniqueName('tofork');
    await avfsJson('vault', 'create', parent);
    await reveal(api, { kind: 'vault', vault: parent });
    const forking = vscode.commands.executeCommand('avfs.forkVault', api.tree.node({ kind: 'vault', vault: parent }));
    await ui('visible', { css: '.quick-input-widget' });
    await ui('press', { key: 'Control+A' });
    await ui('type', { text: `${parent}-x` });
    await ui('press', { key: 'Enter' });
    await forking;
    const fork = `${parent}-x`;
    await reveal(api, { kind: 'vault', vault: fork });
    assert.equal((await ui('attributes', { css: selectedRow(fork), names: ['aria-level'] }))['aria-level'], '2');

    await reveal(api, { kind: 'vault', vault: fork });
    const modal = answerNextModal('Delete');
    await ui('menu', { css: selectedRow(fork), item: 'Delete Vault…' });
    const asked = await modal;
    assert.equal(asked.message, `Delete vault "${fork}"?`);
    assert.match(asked.detail ?? '', /^0 files \(0 B\) and 0 checkpoints are deleted with it, and \S+ is removed\. This cannot be undone\.$/);
    assert.deepEqual(asked.buttons, ['Delete']);
    await ui('gone', row(fork));
    const { vaults } = await avfsJson<{ vaults: { name: string }[] }>('vault', 'list');
    assert.ok(!vaults.some((v) => v.name === fork));
    assert.ok(vaults.some((v) => v.name === parent));
  });

  it('Set Quota changes the quota the CLI reports and the size the row shows against it', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = uniqueName('quota');
    await avfsJson('vault', 'create', vault);
    await reveal(api, { kind: 'vault', vault });
    const setting = vscode.commands.executeCommand('avfs.setQuota', api.tree.node({ kind: 'vault', vault }));
    await ui('visible', { css: '.quick-input-widget' });
    await ui('type', { text: 'Total size' });
    await ui('press', { key: 'Enter' });
    await ui('visible', { text: 'empty clears the quota', within: '.quick-input-widget' });
    await ui('type', { text: '32' });
    await ui('press', { key: 'Enter' });
    await setting;
    const quota = await avfsJson<{ max_size_mb: number | null }>('--vault', vault, 'quota', 'show');
    assert.equal(quota.max_size_mb, 32);
    await until('the row shows the quota', async () => /of 32 MiB/.test(await ui('visible', row(vault))));
  });

  it('Checkpoint Retention, from the vault\'s menu, sets what the CLI shows; a bad value shows the host\'s typed error and changes nothing', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = uniqueName('keep');
    await avfsJson('vault', 'create', vault);
    await reveal(api, { kind: 'vault', vault });
    const setting = vscode.commands.executeCommand('avfs.checkpointRetention', api.tree.node({ kind: 'vault', vault }));
    await ui('visible', { text: 'keeps the last 50', within: '.quick-input-widget' });
    await ui('type', { text: 'Keep the Last' });
    await ui('press', { key: 'Enter' });
    await ui('visible', { text: 'empty drops this rule', within: '.quick-input-widget' });
    await ui('press', { key: 'Control+A' });
    await ui('type', { text: '3' });
    await ui('press', { key: 'Enter' });
    await setting;
    assert.equal((await avfsJson<{ keep_last: number | null }>('--vault', vault, 'checkpoint', 'retention')).keep_last, 3);

    const bad = vscode.commands.executeCommand('avfs.checkpointRetention', api.tree.node({ kind: 'vault', vault }));
    await ui('visible', { text: 'keeps the last 3', within: '.quick-input-widget' });
    await ui('type', { text: 'Younger Than' });
    await ui('press', { key: 'Enter' });
    await ui('visible', { text: '30m, 12h, 7d or 2w', within: '.quick-input-widget' });
    await ui('type', { text: 'a week' });
    await ui('press', { key: 'Enter' });
    await bad;
    await notification(/Checkpoint Retention: invalid max_age "a week"/);
    const after = await avfsJson<{ keep_last: number | null; max_age: string | null }>('--vault', vault, 'checkpoint', 'retention');
    assert.deepEqual([after.keep_last, after.max_age], [3, null]);
  });

  it('Prune and Reclaim Space, one click on the Checkpoints row, says in a modal what goes and how many bytes come back, then does it', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = uniqueName('prune');
    await avfsJson('vault', 'create', vault);
    await avfsJson('--vault', vault, 'checkpoint', 'retention', '--off', '--hold-recent', '0');
    await avfsJson('--vault', vault, 'checkpoint', 'save', 'named');
    // Three automatic checkpoints (the undo points of restores), each the only one with its 50,001-byte file.
    for (let i = 0; i < 3; i++) {
      await avfsJson('--vault', vault, 'write', '/big.txt', `${i}${'x'.repeat(50_000)}`);
      await avfsJson('--vault', vault, 'checkpoint', 'restore', 'named');
    }
    const autos = (await avfsJson<{ checkpoints: Array<{ name: string; auto: boolean }> }>('--vault', vault, 'checkpoint', 'list')).checkpoints.filter((c) => c.auto);
    assert.equal(autos.length, 3);
    await reveal(api, { kind: 'checkpoint', vault, name: autos[2]!.name });
    await until('the row shows what it holds alone', async () => /48\.8 KiB alone/.test(await ui('visible', { css: selectedRow(autos[2]!.name) })));
    await avfsJson('--vault', vault, 'checkpoint', 'retention', '--keep-last', '1');

    await reveal(api, { kind: 'checkpoints', vault });
    await ui('hover', { css: selectedRow('Checkpoints') });
    const modal = answerNextModal('Prune and Reclaim');
    await ui('click', { role: 'button', name: 'Prune and Reclaim Space…', within: selectedRow('Checkpoints') });
    const asked = await modal;
    assert.equal(asked.message, `Prune 2 automatic checkpoints of vault "${vault}" and reclaim 98 KiB?`);
    assert.match(asked.detail ?? '', /^Retention: keeps the last 1; a pending run holds its restore point\.\n/);
    assert.ok(asked.detail?.includes(`  ${autos[0]!.name} (49 KiB alone)\n  ${autos[1]!.name} (49 KiB alone)`), asked.detail);
    assert.match(asked.detail ?? '', /98 KiB come back to the disk\./);
    assert.deepEqual(asked.buttons, ['Prune and Reclaim']);
    let names: string[] = [];
    await until('the CLI lists what the retention keeps', async () => {
      names = (await avfsJson<{ checkpoints: Array<{ name: string }> }>('--vault', vault, 'checkpoint', 'list')).checkpoints.map((c) => c.name);
      return names.length === 2;
    });
    assert.deepEqual(names, ['named', autos[2]!.name]);
    const stats = await avfsJson<{ content_chunks: number }>('--vault', vault, 'stats');
    assert.equal(stats.content_chunks, 1, 'the pruned ones\' chunks were reclaimed: only the kept one\'s file is stored');
    await ui('gone', row(autos[0]!.name));
  });
});
