// The README's pictures, taken from the real UI: the Vaults view with vaults, a fork and
// checkpoints; a checkpoint compared with the current tree in the native diff editor; an agent's
// command waiting for approval (its picture: test/start.test.ts); the Executions view showing a run's diff.
//   npm run screenshots   (writes docs/screenshots/*.png)
// In a whole test run they are taken too (into the run's screenshot folder), so they cannot rot.
// They use an avfs home of their own (the `avfs.home` setting), so no other test's vault shows.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { AvfsTestApi } from '../../extension/extension';
import { agentRun, answerNextModal, avfs, hostReady, reveal, tidyWindow, until } from './helpers';
import { notification, PART, requireUi, row, ui } from './ui';

describe('README pictures', () => {
  let home: string;
  let api: AvfsTestApi;
  const cli = async (...args: string[]) => {
    const r = await avfs(args, { home });
    assert.equal(r.code, 0, `avfs ${args.join(' ')}: ${r.stderr}`);
  };

  before(async function () {
    requireUi(this);
    home = mkdtempSync(join(tmpdir(), 'avfs-pictures-'));
    await cli('vault', 'create', 'web-app', '--max-size-mb', '256');
    await cli('--vault', 'web-app', 'write', '/README.md', '# web-app\n\nA small service an agent works on.\n');
    await cli('--vault', 'web-app', 'write', '/src/app.py', 'from util import greet\n\nprint(greet("world"))\n', '--parents');
    await cli('--vault', 'web-app', 'write', '/src/util.py', 'def greet(name):\n    return f"Hello, {name}"\n');
    await cli('--vault', 'web-app', 'write', '/tests/test_app.py', 'from util import greet\n\n\ndef test_greet():\n    assert greet("x") == "Hello, x"\n', '--parents');
    await cli('--vault', 'web-app', 'checkpoint', 'save', 'scaffold', '-m', 'before the agent started');
    await cli('--vault', 'web-app', 'write', '/src/util.py', 'def greet(name, punctuation="!"):\n    """Greets someone by name."""\n    return f"Hello, {name}{punctuation}"\n');
    await cli('--vault', 'web-app', 'write', '/src/cli.py', 'import sys\n\nfrom util import greet\n\nprint(greet(sys.argv[1]))\n');
    await cli('--vault', 'web-app', 'checkpoint', 'save', 'add-cli', '-m', 'greeting from the command line');
    await cli('--vault', 'web-app', 'write', '/src/app.py', 'from util import greet\n\nfor name in ("world", "agents"):\n    print(greet(name))\n');
    await cli('--vault', 'web-app', 'rm', '/tests/test_app.py');
    await cli('vault', 'fork', 'web-app', 'web-app-try-async');
    await cli('--vault', 'web-app-try-async', 'write', '/src/server.py', 'import asyncio\n');
    await cli('vault', 'create', 'docs-site');
    await cli('--vault', 'docs-site', 'write', '/index.md', '# Docs\n');
    await vscode.workspace.getConfiguration('avfs').update('home', home, vscode.ConfigurationTarget.Global);
    api = await hostReady();
    await until('the pictures home', () => api.host.state.name === 'ready' && api.host.state.home === home, 30_000);
  });

  after(async () => {
    await tidyWindow();
    if (sideBarWidth) await ui('resizeSideBar', { width: sideBarWidth });
    if (!home) return;
    await vscode.workspace.getConfiguration('avfs').update('home', undefined, vscode.ConfigurationTarget.Global);
    await until('the run home again', () => api.host.state.name === 'ready' && api.host.state.home !== home, 30_000);
    rmSync(home, { recursive: true, force: true });
  });

  let sideBarWidth: number | undefined;

  /** A wider side bar (the rows' descriptions show whole), the mouse out of the way, nothing hovering. */
  async function frame(): Promise<void> {
    sideBarWidth ??= await ui('resizeSideBar', { width: 520 });
    await ui('moveMouse', { x: 900, y: 500 });
    await ui('press', { key: 'Escape' });
    await api.tree.settled();
  }

  it('the Vaults view: vaults, a fork, files and checkpoints', async () => {
    await reveal(api, { kind: 'entry', vault: 'web-app', path: '/src/util.py', type: 'file' }, { select: false });
    await reveal(api, { kind: 'checkpoint', vault: 'web-app', name: 'scaffold' }, { select: false });
    await reveal(api, { kind: 'vault', vault: 'web-app-try-async' }, { select: false });
    await vscode.window.showTextDocument(vscode.Uri.parse('avfs://web-app/src/util.py'));
    await reveal(api, { kind: 'entry', vault: 'web-app', path: '/src/util.py', type: 'file' });
    for (const label of ['web-app', 'web-app-try-async', 'docs-site', 'scaffold', 'add-cli', 'util.py']) await ui('visible', row(label));
    await frame();
    await ui('screenshot', { name: 'vaults-tree' });
  });

  it('a checkpoint against the current tree, in the multi-file diff editor', async () => {
    await reveal(api, { kind: 'checkpoint', vault: 'web-app', name: 'scaffold' });
    await ui('click', row('scaffold'));
    await until('the diff editor', () => vscode.window.tabGroups.activeTabGroup.activeTab?.label.startsWith('web-app: scaffold ↔ Current') === true);
    await until('its text', async () => (await ui('texts', { css: `${PART.editor} .multiDiffEditor .view-lines` })).join('\n').includes('Greets someone'));
    await ui('moveMouse', { x: 900, y: 700 });
    await ui('screenshot', { name: 'checkpoint-diff' });
  });

  it('an agent\'s command waiting for approval, in a notification', async () => {
    await tidyWindow();
    await vscode.window.showTextDocument(vscode.Uri.parse('avfs://web-app/src/app.py'));
    const run = agentRun('web-app', `python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); open(".env", "w").write("PORT=%d\\n" % s.getsockname()[1])'`, { home });
    await frame();
    // Headless Chromium shows notifications in the Notification Center: it opens to show this one.
    await notification(/Agent wants to run .* in vault web-app/, 20_000);
    // Its picture (approval-notification.png) is of the toast, which only a window without the
    // smoke-test driver shows: test/start.test.ts takes it in `npm start`.
    // Too long to show whole (132 characters): the notification offers Review…, whose modal has the answers.
    const modal = answerNextModal('Approve Once');
    await ui('click', { role: 'button', name: 'Review…', exact: true, within: '.notifications-center' });
    await modal;
    assert.equal((await run).envelope.result.state, 'completed');
  });

  it('the Executions view: a run, its decision and its changes with an inline diff', async () => {
    await tidyWindow();
    const command = 'sed -i \'s/return f"Hello, {name}{punctuation}"/return f"Hi, {name}{punctuation}"/\' src/util.py && echo "PORT=8000" > .env.example';
    const { envelope } = await agentRun('web-app', command, { home });
    assert.equal(envelope.result.state, 'completed');
    await api.executions.reveal(envelope.id);
    // The whole window for the view: the side bar closed, the panel maximized.
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
    try {
      await ui('click', { role: 'tab', name: 'Changes', frame: '#avfs-executions' });
      await until('the inline diff', async () => (await ui('texts', { css: 'pre.patch', frame: '#avfs-executions' })).join('\n').includes('+ return f"Hi, {name}'));
      await ui('moveMouse', { x: 900, y: 120 });
      await ui('screenshot', { name: 'executions-view' });
    } finally {
      await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
      await vscode.commands.executeCommand('workbench.action.closePanel');
      await vscode.commands.executeCommand('workbench.view.extension.avfs');
    }
  });
});
