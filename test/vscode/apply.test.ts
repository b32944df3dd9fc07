// A vault made from a project folder, brought back in the editor: Apply to Workspace shows the
// multi-file diff of what will change and applies on confirmation; a conflict is shown and blocks
// the apply, each conflicting file marked in the diff and resolved file by file; Compare with Fork
// opens two experiments in the multi-file diff editor.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { answerNextModal, avfsJson, hostReady, tidyWindow, uniqueName, until } from './helpers';
import { PART, requireUi, ui } from './ui';

const made: string[] = [];

/** A project folder with two files, a vault made from it, and the vault's change to app.py. */
async function projectVault(prefix: string): Promise<{ api: Awaited<ReturnType<typeof hostReady>>; vault: string; dir: string }> {
  const api = await hostReady();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `avfs-${prefix}-`));
  made.push(dir);
  fs.writeFileSync(path.join(dir, 'app.py'), 'print("from the project")\n');
  fs.writeFileSync(path.join(dir, 'notes.txt'), 'notes\n');
  const vault = uniqueName(prefix);
  await avfsJson('vault', 'create', vault, '--from', dir, '--no-use');
  await avfsJson('--vault', vault, 'write', '/app.py', 'print("from the agent")\n');
  await avfsJson('--vault', vault, 'write', '/added.py', 'x = 1\n');
  return { api, vault, dir };
}

const activeLabel = () => vscode.window.tabGroups.activeTabGroup.activeTab?.label;

describe('Apply to Workspace', () => {
  afterEach(async () => {
    await tidyWindow();
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows the multi-file diff of what will change, then applies on confirmation', async () => {
    const { api, vault, dir } = await projectVault('apply');
    const modal = answerNextModal('Apply');
    const running = vscode.commands.executeCommand('avfs.applyToWorkspace', api.tree.node({ kind: 'vault', vault }));
    const asked = await modal;
    assert.equal(asked.message, `Apply 2 changes of vault ${vault} to ${fs.realpathSync(dir)}?`);
    assert.deepEqual(asked.buttons, ['Apply']);
    assert.match(asked.detail ?? '', /app\.py \(modified\)/);
    assert.match(asked.detail ?? '', /added\.py \(added\)/);
    // The diff was opened before the question: both files, the project's side against the vault's.
    assert.equal(activeLabel(), `Apply ${vault} → ${path.basename(dir)} (2 files)`);
    await running;
    assert.equal(fs.readFileSync(path.join(dir, 'app.py'), 'utf8'), 'print("from the agent")\n');
    assert.equal(fs.readFileSync(path.join(dir, 'added.py'), 'utf8'), 'x = 1\n');
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'notes\n');
  });

  it('marks each conflicting file in the diff, and no Apply is offered while one is left', async () => {
    const { api, vault, dir } = await projectVault('conflict');
    fs.writeFileSync(path.join(dir, 'app.py'), 'print("the developer edited it too")\n');
    const modal = answerNextModal(undefined);
    const running = vscode.commands.executeCommand('avfs.applyToWorkspace', api.tree.node({ kind: 'vault', vault }));
    const asked = await modal;
    await running;
    assert.match(asked.message, /^1 file changed both in .* since the vault's base: nothing can be applied until they agree\.$/);
    assert.deepEqual(asked.buttons, ['Resolve File by File…'], 'no Apply is offered');
    assert.match(asked.detail ?? '', /app\.py \(modified\) — CONFLICT: changed in the project/);
    assert.equal(activeLabel(), `Apply ${vault} → ${path.basename(dir)} — 1 conflict (2 files)`);
    // In the diff the conflicting file is the project's against both sides between conflict markers; the other is the vault's.
    const conflictDoc = () => vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'avfs-conflict' && d.uri.authority === vault);
    await until('the conflict document is shown in the diff', () => conflictDoc() !== undefined);
    assert.equal(conflictDoc()!.uri.path, '/app.py', 'only the conflicting file is marked');
    const marked = conflictDoc()!.getText();
    assert.equal(
      marked,
      `<<<<<<< project: ${fs.realpathSync(dir)}/app.py\nprint("the developer edited it too")\n=======\nprint("from the agent")\n>>>>>>> vault ${vault}\n`,
    );
    assert.equal(fs.readFileSync(path.join(dir, 'app.py'), 'utf8'), 'print("the developer edited it too")\n');
    assert.equal(fs.existsSync(path.join(dir, 'added.py')), false, 'nothing was written');
  });

  it("resolves conflicts file by file (the vault's version, the project's), then applies the rest", async () => {
    const { api, vault, dir } = await projectVault('resolve');
    await avfsJson('--vault', vault, 'write', '/notes.txt', 'notes, by the agent\n');
    fs.writeFileSync(path.join(dir, 'app.py'), 'print("the developer edited it too")\n');
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'notes, mine\n');
    const first = answerNextModal('Resolve File by File…');
    const running = vscode.commands.executeCommand('avfs.applyToWorkspace', api.tree.node({ kind: 'vault', vault }));
    assert.match((await first).message, /^2 files changed both/);
    const onApp = answerNextModal("Keep the Vault's");
    const app = await onApp;
    assert.match(app.message, /^Conflict in app\.py: changed in the project\./);
    assert.deepEqual(app.buttons, ["Keep the Vault's", "Keep the Project's", 'Open Merge']);
    const onNotes = answerNextModal("Keep the Project's");
    assert.match((await onNotes).message, /^Conflict in notes\.txt: changed in the project\./);
    // Both resolved: the plan is made again, and now Apply is offered, for what is left to write.
    const last = answerNextModal('Apply');
    const apply = await last;
    assert.equal(apply.message, `Apply 1 change of vault ${vault} to ${fs.realpathSync(dir)}?`);
    assert.deepEqual(apply.buttons, ['Apply']);
    await running;
    assert.equal(fs.readFileSync(path.join(dir, 'app.py'), 'utf8'), 'print("from the agent")\n', "the vault's version was kept");
    assert.equal(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8'), 'notes, mine\n', "the project's version was kept");
    assert.equal(fs.readFileSync(path.join(dir, 'added.py'), 'utf8'), 'x = 1\n');
    const inVault = await avfsJson<{ content: string }>('--vault', vault, 'cat', '/notes.txt');
    assert.equal(inVault.content, 'notes, mine\n', 'the vault took the project\'s notes.txt');
  });

  it('Compare with Fork opens two forks in the multi-file diff editor', async function () {
    requireUi(this);
    const { api, vault } = await projectVault('forks');
    const fork = `${vault}-b`;
    await avfsJson('vault', 'fork', vault, fork);
    await avfsJson('--vault', fork, 'write', '/app.py', 'print("the other experiment")\n');
    await api.tree.settled();
    const running = vscode.commands.executeCommand('avfs.compareWithFork', api.tree.node({ kind: 'vault', vault }));
    await ui('visible', { css: '.quick-input-widget' });
    await ui('type', { text: fork });
    await ui('press', { key: 'Enter' });
    await until('the diff editor', () => activeLabel() === `${vault} ↔ ${fork} (1 file)`);
    await until('both experiments shown', async () => {
      const text = (await ui('texts', { css: `${PART.editor} .multiDiffEditor .view-lines` })).join('\n');
      return text.includes('from the agent') && text.includes('the other experiment');
    });
    await vscode.commands.executeCommand('notifications.clearAll');
    await running;
  });
});
