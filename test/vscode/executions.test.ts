// The Executions view: runs of an agent's `avfs proxy exec` (the real CLI through the extension's
// host) appear live with their output, a run's detail lists its changed files with inline diffs,
// a file opens in the native diff editor, and "Restore to before this run" brings the old text
// back. Clicks go to the webview's own buttons, through Playwright, as a person's would.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { agentRun, answerNextModal, avfs, avfsJson, hostReady, newVault, readyState, tidyWindow, until } from './helpers';
import { requireUi, ui } from './ui';

/** Inside the executions webview. */
const VIEW = '#avfs-executions';
const inView = <T extends object>(t: T) => ({ ...t, frame: VIEW });

/** Selects the run whose command is `command` in the list. */
async function selectRun(command: string): Promise<void> {
  await ui('click', inView({ css: `tr.run td.command[title="${command.replace(/"/g, '\\"')}"]` }));
  await ui('visible', inView({ css: 'h2.title', within: '.detail' }));
}

describe('Executions view', () => {
  afterEach(tidyWindow);

  it('lists a run live with its output as it comes, then its exit code and duration', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'runs', { '/app.py': 'print("version one")\n' });
    await api.executions.reveal();
    // It prints a line, then waits until the test lets it go on (a file appears in the vault).
    const command = 'echo first; until [ -e go ]; do sleep 0.1; done; echo second';
    const run = agentRun(vault, command);
    await until('the run listed', () => api.executions.list().some((r) => r.command === command && r.running));
    await selectRun(command);
    // Streamed: the first line shows while the command still sleeps.
    await until('its first line', async () => (await ui('texts', inView({ css: '.detail pre.stdout' }))).join('').includes('first'));
    assert.ok(api.executions.list().find((r) => r.command === command)?.running, 'still running when its first line showed');
    await avfsJson('--vault', vault, 'write', '/go', '');
    const { envelope } = await run;
    await until('the run finished in the view', async () => /exit 0/.test(await ui('visible', inView({ css: '.detail .facts' }))));
    assert.equal((await ui('texts', inView({ css: '.detail pre.stdout' }))).join(''), 'first second');
    const cells = await ui('texts', inView({ css: `tr.run[data-run="${envelope.id}"] td` }));
    assert.deepEqual(cells.slice(0, 5), [command, vault, 'allow', 'completed', '0']);
    assert.match(cells[5]!, /^\d+ ms$|^\d+(\.\d)? s$/);
  });

  it('shows what a run changed with inline diffs; a file opens in the diff editor; Restore to before this run brings the old text back', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'runs', { '/app.py': 'print("version one")\n' });
    await api.executions.reveal();
    const command = 'sed -i s/one/two/ app.py && echo hello > new.txt';
    const { envelope } = await agentRun(vault, command);
    assert.equal(envelope.result.decision?.action, 'allow_with_checkpoint');
    assert.ok(envelope.result.checkpoint);
    await selectRun(command);
    await ui('click', inView({ role: 'tab', name: 'Changes' }));
    const appDiff = `vscode-collapsible[data-path="/app.py"]`;
    await until('the inline diff of app.py', async () => (await ui('texts', inView({ css: `${appDiff} pre.patch` }))).join('\n').includes('+print("version two")'));
    const patch = (await ui('texts', inView({ css: `${appDiff} pre.patch` }))).join('\n');
    assert.match(patch, /^@@ -1,1 \+1,1 @@/);
    assert.match(patch, /-print\("version one"\)/);
    assert.match((await ui('texts', inView({ css: `vscode-collapsible[data-path="/new.txt"] pre.patch` }))).join('\n'), /\+hello/);

    // One file in the native diff editor: the checkpoint's text against the current one.
    await ui('click', inView({ role: 'button', name: 'Open Diff', within: appDiff }));
    await until('the diff editor', () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff);
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input as vscode.TabInputTextDiff;
    assert.equal(input.original.scheme, 'avfs-checkpoint');
    assert.deepEqual(JSON.parse(input.original.query), { checkpoint: envelope.result.checkpoint });
    assert.equal(input.modified.toString(), `avfs://${vault}/app.py`);

    // The whole run in the multi-file diff editor.
    await api.executions.reveal(envelope.id);
    await ui('click', inView({ role: 'button', name: 'Open Changes' }));
    await until('the multi-file diff editor', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label.startsWith(`${vault}: before`) === true);
    // The command is cut in the middle past 40 characters; both files are in it.
    assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab?.label, `${vault}: before \`sed -i s/one/two/ a…cho hello > new.txt\` ↔ Current (2 files)`);

    // Undo the run: a modal says what will be lost, then the vault is as before it.
    await api.executions.reveal(envelope.id);
    const modal = answerNextModal('Restore');
    await ui('click', inView({ role: 'button', name: 'Restore to before this run' }));
    const asked = await modal;
    assert.match(asked.message, new RegExp(`^Restore vault "${vault}" to before \`sed -i`));
    assert.match(asked.detail ?? '', /\/app\.py[\s\S]*\/new\.txt/);
    await until('the old text back', async () => (await avfs(['--vault', vault, 'cat', '/app.py'])).stdout === 'print("version one")\n');
    assert.notEqual((await avfs(['--vault', vault, 'cat', '/new.txt'])).code, 0, 'new.txt is gone');
  });

  it('keeps the selected run and the open tab when hidden and shown again', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'runs', { '/app.py': 'print("version one")\n' });
    await api.executions.reveal();
    const command = 'sed -i s/one/three/ app.py';
    const { envelope } = await agentRun(vault, command);
    await selectRun(command);
    await ui('click', inView({ role: 'tab', name: 'Changes' }));
    await vscode.commands.executeCommand('workbench.action.closePanel');
    await ui('gone', { css: '.panel' });
    // Shown again: a new page (no retainContextWhenHidden), which restores its state.
    await vscode.commands.executeCommand('avfs.showExecutions');
    await ui('visible', inView({ css: `tr.run.selected[data-run="${envelope.id}"]` }));
    assert.equal((await ui('attributes', inView({ css: 'vscode-tabs', names: ['selected-index'] })))['selected-index'], '1');
    await ui('visible', inView({ css: 'vscode-collapsible[data-path="/app.py"]' }));
  });

  it('a run that took no checkpoint cannot be restored, and says why', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'runs', { '/app.py': 'print("version one")\n' });
    await api.executions.reveal();
    const command = 'cat app.py';
    const { envelope } = await agentRun(vault, command);
    assert.equal(envelope.result.checkpoint, null);
    await selectRun(command);
    const restore = await ui('attributes', inView({ role: 'button', name: 'Restore to before this run', names: ['disabled', 'title'] }));
    assert.notEqual(restore.disabled, null, 'the button is disabled');
    assert.match(restore.title ?? '', /took no checkpoint \(the policy let it run without one \(allow\)\)/);
    assert.match(await ui('visible', inView({ css: '.restore-note' })), /--checkpoint always/);
  });

  it('a run that was going when the host crashed is shown as lost (not running… forever), with no Restore', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'runs');
    await api.executions.reveal();
    // Bounded (10 s at most): whatever the crash leaves of it ends by itself.
    const command = `echo going-${Date.now()}; for i in $(seq 1 100); do [ -e go ] && break; sleep 0.1; done`;
    const run = agentRun(vault, command).catch(() => undefined);
    await until('the run listed as running', () => api.executions.list().some((r) => r.command === command && r.running));
    const pid = readyState(api).pid;
    process.kill(pid, 'SIGKILL');
    await until('a new host', () => api.host.state.name === 'ready' && readyState(api).pid !== pid, 30_000);
    await until('the run shown as lost', () => api.executions.list().find((r) => r.command === command)?.state === 'lost');
    assert.equal(api.executions.list().find((r) => r.command === command)?.running, false);
    await run;
    await selectRun(command);
    const id = api.executions.list().find((r) => r.command === command)!.id;
    const cells = await ui('texts', inView({ css: `tr.run[data-run="${id}"] td` }));
    assert.equal(cells[3], 'lost');
    const restore = await ui('attributes', inView({ role: 'button', name: 'Restore to before this run', names: ['disabled', 'title'] }));
    assert.notEqual(restore.disabled, null, 'the button is disabled');
    assert.match(restore.title ?? '', /vault host stopped while this run was going/);
  });

  it('while a run streams, new output is added without moving a reader who scrolled up back to the bottom', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'runs');
    await api.executions.reveal();
    // Many lines at once, then one line every 0.1 s until the test lets it end (15 s at most).
    const command = `seq 1 400; for i in $(seq 1 150); do [ -e go ] && break; echo more $i; sleep 0.1; done`;
    const run = agentRun(vault, command);
    await until('the run listed', () => api.executions.list().some((r) => r.command === command && r.running));
    await selectRun(command);
    await ui('click', inView({ role: 'tab', name: 'Output' }));
    const out = inView({ css: '.detail pre.stdout' });
    await until('its first lines', async () => (await ui('texts', out)).join('').includes('400'));
    try {
      const up = await ui('scroll', { ...out, top: 100 });
      assert.equal(up.top, 100);
      await until('more output shown', async () => (await ui('scroll', out)).height > up.height + 40);
      await new Promise((r) => setTimeout(r, 500));
      assert.equal((await ui('scroll', out)).top, 100, 'the reader stays where they scrolled');
    } finally {
      // Let the run end either way: none is left going after the test.
      await avfsJson('--vault', vault, 'write', '/go', '');
    }
    assert.equal((await run).envelope.result.state, 'completed');
  });

  it('a command, its output and a changed file named like HTML are shown as text: no element is made, no handler runs', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'runs');
    await api.executions.reveal();
    const evil = '<img src=x onerror=document.body.dataset.pwned=1>';
    const command = `echo '${evil}' > '${evil}'; cat '${evil}'`;
    const { envelope } = await agentRun(vault, command);
    assert.equal(envelope.result.state, 'completed', JSON.stringify(envelope.result.error));
    assert.deepEqual(envelope.result.changed_files, [`/${evil}`]);
    await selectRun(command);
    await ui('click', inView({ role: 'tab', name: 'Output' }));
    assert.equal((await ui('texts', inView({ css: `tr.run[data-run="${envelope.id}"] td.command` })))[0], command);
    assert.equal(await ui('visible', inView({ css: '.detail h2.title' })), command);
    assert.equal((await ui('texts', inView({ css: '.detail pre.stdout' }))).join(''), evil);
    await ui('click', inView({ role: 'tab', name: 'Changes' }));
    const file = await ui('attributes', inView({ css: 'vscode-collapsible.file', names: ['data-path', 'description'] }));
    assert.equal(file['data-path'], `/${evil}`);
    assert.match(file.description ?? '', new RegExp(`^/${evil.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · `));
    assert.deepEqual(await ui('texts', inView({ css: 'img' })), [], 'no img element was made');
    assert.equal((await ui('attributes', inView({ css: 'body', names: ['data-pwned'] })))['data-pwned'], null, 'its handler never ran');
  });
});
