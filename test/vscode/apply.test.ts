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
    assert.match(asked.detail ?? '', /app\.py \(modified\) — CONFLICT \(content\): changed in the project/);
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
    assert.match(app.message, /^Conflict in app\.py \(content: its content differs on the two sides\): changed in the project\./);
    assert.deepEqual(app.buttons, ["Keep the Vault's", "Keep the Project's", 'Open Merge']);
    const onNotes = answerNextModal("Keep the Project's");
    assert.match((await onNotes).message, /^Conflict in notes\.txt \(content: /);
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

  it('Open Merge opens the merge editor with the three sides; the merge saved into the vault is then applied', async function () {
    requireUi(this);
    const { api, vault, dir } = await projectVault('merge');
    fs.writeFileSync(path.join(dir, 'app.py'), 'print("the developer edited it too")\n');
    const first = answerNextModal('Resolve File by File…');
    const running = vscode.commands.executeCommand('avfs.applyToWorkspace', api.tree.node({ kind: 'vault', vault }));
    await first;
    const onApp = answerNextModal('Open Merge');
    assert.deepEqual((await onApp).buttons, ["Keep the Vault's", "Keep the Project's", 'Open Merge']);
    await running;
    // The tab's input is VS Code's merge input (a proposed API to extensions: seen here by its label and its documents).
    const mergeTab = () => vscode.window.tabGroups.all.flatMap((g) => g.tabs).find((t) => t.label === 'Merging: app.py');
    await until("VS Code's merge editor", () => mergeTab()?.isActive === true);
    const project = fs.realpathSync(dir);
    const shown = () => vscode.window.visibleTextEditors.map((e) => e.document.uri.toString());
    await until('its sides shown', () => shown().includes(vscode.Uri.file(path.join(project, 'app.py')).toString()) && shown().some((u) => u.startsWith(`avfs://${vault}/app.py`)));
    // The base: the vault's base checkpoint, holding the file as both sides started from it.
    const base = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'avfs-checkpoint' && d.uri.authority === vault && d.uri.path === '/app.py');
    assert.ok(base, `the base checkpoint's app.py is open (${vscode.workspace.textDocuments.map((d) => d.uri.toString()).join(', ')})`);
    assert.equal(base.getText(), 'print("from the project")\n');
    // Resolved as a person would: the merged text typed into the result pane, then Complete Merge.
    const merged = 'print("the developer edited it too")\nprint("from the agent")\n';
    const result = vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'avfs' && d.uri.authority === vault && d.uri.path === '/app.py');
    assert.ok(result, "the vault's app.py is the merge's result");
    const edit = new vscode.WorkspaceEdit();
    edit.replace(result.uri, new vscode.Range(0, 0, result.lineCount, 0), merged);
    assert.ok(await vscode.workspace.applyEdit(edit));
    // Complete Merge (the merge editor's own command, on the merge editor in focus).
    await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    void vscode.commands.executeCommand('mergeEditor.acceptMerge');
    const inVault = async () => (await avfsJson<{ content: string }>('--vault', vault, 'cat', '/app.py')).content;
    // The conflict was not marked handled in the merge editor: VS Code asks before completing.
    await until('the merge saved into the vault, or VS Code asking first', async () => (await inVault()) === merged || (await ui('texts', { role: 'button', name: 'Complete with Conflicts' })).length > 0);
    if ((await inVault()) !== merged) await ui('click', { role: 'button', name: 'Complete with Conflicts' });
    await until('the merge saved into the vault', async () => (await inVault()) === merged);
    await until('the merge editor closed', () => mergeTab() === undefined);
    // Applying again: the vault's merged file is kept, then the rest applies.
    const again = answerNextModal('Resolve File by File…');
    const second = vscode.commands.executeCommand('avfs.applyToWorkspace', api.tree.node({ kind: 'vault', vault }));
    await again;
    const keep = answerNextModal("Keep the Vault's");
    await keep;
    const last = answerNextModal('Apply');
    assert.equal((await last).message, `Apply 1 change of vault ${vault} to ${project}?`);
    await second;
    assert.equal(fs.readFileSync(path.join(dir, 'app.py'), 'utf8'), merged);
    assert.equal(fs.readFileSync(path.join(dir, 'added.py'), 'utf8'), 'x = 1\n');
  });

  it("settles symlink and mode conflicts file by file (no merge for those), the vault's symlink and the project's mode", async () => {
    const { api, vault, dir } = await projectVault('kinds');
    fs.symlinkSync('notes.txt', path.join(dir, 'link'));
    fs.writeFileSync(path.join(dir, 'run.sh'), 'echo run\n', { mode: 0o755 });
    await avfsJson('--vault', vault, 'vault', 'sync');
    await avfsJson('--vault', vault, 'rm', '/link');
    await avfsJson('--vault', vault, 'ln', '-s', 'app.py', '/link');
    await avfsJson('--vault', vault, 'chmod', '700', '/run.sh');
    fs.rmSync(path.join(dir, 'link'));
    fs.symlinkSync('added.py', path.join(dir, 'link'));
    fs.chmodSync(path.join(dir, 'run.sh'), 0o750);
    const first = answerNextModal('Resolve File by File…');
    const running = vscode.commands.executeCommand('avfs.applyToWorkspace', api.tree.node({ kind: 'vault', vault }));
    const asked = await first;
    assert.match(asked.detail ?? '', /link \(modified\) — CONFLICT \(symlink\)/);
    assert.match(asked.detail ?? '', /run\.sh \(modified, mode 0700\) — CONFLICT \(mode\)/);
    const onLink = answerNextModal("Keep the Vault's");
    const link = await onLink;
    assert.match(link.message, /^Conflict in link \(symlink: /);
    assert.deepEqual(link.buttons, ["Keep the Vault's", "Keep the Project's"], 'no merge for a symlink');
    const onMode = answerNextModal("Keep the Project's");
    const mode = await onMode;
    assert.match(mode.message, /^Conflict in run\.sh \(mode: the same bytes with other permission bits\)/);
    assert.deepEqual(mode.buttons, ["Keep the Vault's", "Keep the Project's"]);
    const last = answerNextModal('Apply');
    assert.match((await last).message, /^Apply 2 changes of vault /);
    await running;
    assert.equal(fs.readlinkSync(path.join(dir, 'link')), 'app.py', "the vault's symlink");
    assert.equal(fs.statSync(path.join(dir, 'run.sh')).mode & 0o777, 0o750, "the project's mode");
    assert.equal((await avfsJson<{ mode: string }>('--vault', vault, 'stat', '/run.sh')).mode, '0750', 'the vault took it');
    assert.equal(fs.readFileSync(path.join(dir, 'app.py'), 'utf8'), 'print("from the agent")\n');
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
