// The extension's vault host: started on first use, shown in the status bar, restarted after a
// crash, and refused (with both versions named) on a Node its native module was not built for.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { HostState } from '../../extension/client/hostState';
import { avfs, avfsJson, extension, hostReady, readyState, tidyWindow, until } from './helpers';
import { notification, PART, requireUi, row, ui } from './ui';

const statusItem = (state: string) => ({ role: 'button', name: `AVFS vault host: ${state}`, exact: true, within: PART.statusBar }) as const;

describe('The vault host', () => {
  afterEach(tidyWindow);

  it('starts for the view, serves the CLI too, and shows its state in the status bar with Open Logs and Restart Host', async function () {
    requireUi(this);
    const api = await hostReady();
    const ready = readyState(api);
    // The CLI in a terminal reaches the same host, and sees this window among its clients.
    const status = await avfsJson<{ running: boolean; pid: number; clients: { name: string; kind: string }[] }>('host', 'status');
    assert.equal(status.running, true);
    assert.equal(status.pid, ready.pid);
    assert.ok(status.clients.some((c) => c.kind === 'vscode' && c.name.startsWith('VS Code')), JSON.stringify(status.clients));
    await ui('hover', statusItem('ready'));
    const tooltip = await ui('visible', { css: '.monaco-hover-content:has-text("AVFS vault host")' });
    // Spawned by this window, or (after an earlier test's Restart Host) the same host joined on its socket.
    assert.match(tooltip, new RegExp(`Vault host ${ready.version} \\(pid ${ready.pid}(\\)|, already running: connected to its socket\\))`));
    assert.match(tooltip, /Open Logs · Restart Host/);
  });

  it('restarts a host that was killed, says so with Open Logs and Restart Host, and serves again', async function () {
    requireUi(this);
    const api = await hostReady();
    const killed = readyState(api).pid;
    const seen: HostState['name'][] = [];
    const listener = api.host.onDidChangeState((s) => seen.push(s.name));
    try {
      process.kill(killed, 'SIGKILL');
      await until('a new host', () => api.host.state.name === 'ready' && readyState(api).pid !== killed, 30_000);
    } finally {
      listener.dispose();
    }
    assert.deepEqual(seen, ['restarting', 'starting', 'ready']);
    const shown = await notification(/The AVFS vault host exited \(killed by SIGKILL\); restarting it\./);
    assert.match(shown, /Open Logs/);
    assert.match(shown, /Restart Host/);
    assert.equal((await api.host.hostRequest('host/status', {})).pid, readyState(api).pid);
  });

  it('Restart Host in the status bar tooltip starts a new host', async function () {
    requireUi(this);
    const api = await hostReady();
    const before = readyState(api).pid;
    await ui('hover', statusItem('ready'));
    await ui('click', { role: 'link', name: 'Restart Host', within: '.monaco-hover-content:has-text("AVFS vault host")' });
    await until('a new host', () => api.host.state.name === 'ready' && readyState(api).pid !== before, 30_000);
  });

  it('connects to a host already serving the home (started in a terminal), and starts its own when that one stops', async function () {
    requireUi(this);
    const api = await hostReady();
    const home = mkdtempSync(join(tmpdir(), 'avfs-outside-'));
    const config = vscode.workspace.getConfiguration('avfs');
    const terminalHost = spawn('node', [join(extension().extensionPath, 'dist', 'avfs.js'), 'host'], { env: { ...process.env, AVFS_HOME: home }, stdio: 'ignore' });
    try {
      assert.equal((await avfs(['vault', 'create', 'from-terminal'], { home })).code, 0);
      await until('the terminal host', async () => (await avfs(['--json', 'host', 'status'], { home })).stdout.includes('"running": true'));
      await config.update('home', home, vscode.ConfigurationTarget.Global);
      await until('connected to it', () => api.host.state.name === 'ready' && api.host.state.home === home, 30_000);
      const connected = readyState(api);
      assert.equal(connected.via, 'socket');
      assert.equal(connected.pid, terminalHost.pid);
      await ui('visible', row('from-terminal'));
      terminalHost.kill('SIGTERM');
      await until('its own host', () => api.host.state.name === 'ready' && readyState(api).via === 'spawned', 30_000);
      assert.equal(readyState(api).home, home);
      await ui('visible', row('from-terminal'));
    } finally {
      terminalHost.kill('SIGKILL');
      await config.update('home', undefined, vscode.ConfigurationTarget.Global);
      await until('back on the run home', () => api.host.state.name === 'ready' && api.host.state.home !== home, 30_000);
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('refuses to run the host on a Node whose native-module ABI differs, naming both versions and the fix', async function () {
    requireUi(this);
    const api = await hostReady();
    const config = vscode.workspace.getConfiguration('avfs');
    // The extension host's own Node (code-server's Node 24) did not build the host's better-sqlite3 (npm install did, on Node 20).
    await config.update('nodePath', process.execPath, vscode.ConfigurationTarget.Global);
    try {
      await until('the host refused', () => api.host.state.name === 'failed', 30_000);
      const expected = new RegExp(
        `better-sqlite3 was built for Node \\d+ \\(NODE_MODULE_VERSION \\d+\\), but "avfs.nodePath" \\("${escape(process.execPath)}"\\) ` +
          `runs Node ${escape(process.version)} \\(NODE_MODULE_VERSION ${process.versions.modules}\\)\\. Set "avfs.nodePath" to a Node \\d+ binary`,
      );
      assert.match(await notification(expected), /Open Settings/);
      await ui('visible', statusItem('failed'));
      await vscode.commands.executeCommand('workbench.view.extension.avfs');
      assert.match(await ui('visible', { css: '.welcome-view-content', within: PART.sideBar }), /The AVFS vault host is not running/);
    } finally {
      await config.update('nodePath', undefined, vscode.ConfigurationTarget.Global);
    }
    await until('the host back on the default Node', () => api.host.state.name === 'ready', 30_000);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
