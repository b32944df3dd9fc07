// Approvals in the editor: an agent's `avfs proxy exec` (the real CLI, handing its run to the
// extension's vault host) needs approval, the window shows a notification, and a click on its
// buttons decides what the waiting CLI prints. Requests that queue are counted in the status bar
// and listed under Pending Approvals, where they are answered too; one settled elsewhere leaves.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { agentRun, answerNextModal, avfs, extension, hostReady, markerCommand, newVault, readyState, reveal, tidyWindow, until, watchWarnings } from './helpers';
import { notification, PART, requireUi, row, ui } from './ui';

/** The notification center's button `name` on the notification whose text matches `match`. */
async function clickOnNotification(match: RegExp, name: string): Promise<void> {
  await notification(match, 20_000);
  // tidyWindow clears the notifications after each test: this is the only one with these buttons.
  await ui('click', { role: 'button', name, exact: true, within: '.notifications-center' });
}

const markerOf = async (vault: string) => avfs(['--vault', vault, 'cat', '/marker.txt']);

describe('Approvals', () => {
  afterEach(tidyWindow);

  it('a proxy exec that needs approval shows a notification; Approve Once lets the CLI finish with its envelope', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const run = agentRun(vault, markerCommand('once'));
    const text = await notification(new RegExp(`Agent wants to run .*marker.* in vault ${vault}: `), 20_000);
    // What it says, read at a glance: the command, the vault, and in a few words why; the rest is in Review….
    assert.match(text, new RegExp(`in vault ${vault}: reaches the network and runs code the policy does not read\\.`));
    assert.doesNotMatch(text, /builtin|mutating|—/, 'no categories, rule or reason chain in the notification');
    assert.match(text, /Approve Once.*Always Allow….*Deny.*Review…/);
    await clickOnNotification(new RegExp(vault), 'Approve Once');
    const { r, envelope } = await run;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(envelope.result.state, 'completed');
    assert.equal(envelope.result.approval?.outcome, 'approved');
    assert.equal(envelope.result.approval?.scope, 'once');
    // Recorded by the host as this window's connection (its extension host's process), not by a name it sent.
    assert.match(envelope.result.approval?.by ?? '', new RegExp(`^vscode client \\(pid ${process.pid}, `));
    assert.equal((await markerOf(vault)).stdout, 'once');
    assert.deepEqual(api.approvals.pending(), []);
  });

  it('Deny gives the denied envelope and nothing runs', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const run = agentRun(vault, markerCommand('denied'));
    await clickOnNotification(new RegExp(vault), 'Deny');
    const { r, envelope } = await run;
    assert.equal(r.code, 126);
    assert.equal(envelope.result.state, 'denied');
    assert.equal(envelope.result.exit_code, null);
    assert.equal(envelope.result.approval?.outcome, 'denied');
    assert.notEqual((await markerOf(vault)).code, 0, 'marker.txt was never written');
  });

  it('closing the notification is a deny', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const run = agentRun(vault, markerCommand('closed'));
    await notification(new RegExp(`Agent wants to run .* in vault ${vault}`), 20_000);
    await ui('click', { role: 'button', name: 'Clear Notification', within: '.notifications-center' });
    const { envelope } = await run;
    assert.equal(envelope.result.state, 'denied');
    assert.equal(envelope.result.approval?.outcome, 'denied');
    assert.notEqual((await markerOf(vault)).code, 0, 'marker.txt was never written');
  });

  it('Always Allow shows the rule first, adds it, and the same command then runs without asking', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const tag = `always-${Date.now()}`;
    const run = agentRun(vault, markerCommand(tag));
    const modal = answerNextModal('Add Rule and Run');
    await clickOnNotification(new RegExp(vault), 'Always Allow…');
    const asked = await modal;
    assert.match(asked.message, /^Always allow `python3 -c/);
    assert.deepEqual(asked.buttons, ['Add Rule and Run']);
    const home = readyState(api).home;
    assert.ok(asked.detail?.includes(`${home}/policy.json`), asked.detail);
    // The program by its base name, as the policy matches it.
    assert.ok(asked.detail?.includes(`allow exactly: ["python","-c","import socket; open(\\"marker.txt\\", \\"w\\").write(\\"${tag}\\")"]`), asked.detail);
    const { envelope } = await run;
    assert.equal(envelope.result.state, 'completed');
    assert.equal(envelope.result.approval?.scope, 'always');
    const rules = JSON.parse(readFileSync(join(home, 'policy.json'), 'utf8')) as { rules: { exact?: string[]; action: string }[] };
    assert.ok(rules.rules.some((x) => x.action === 'allow' && x.exact?.[0] === 'python' && x.exact[2]?.includes(tag)));
    // Again: no question this time.
    assert.equal((await avfs(['--vault', vault, 'rm', '/marker.txt'])).code, 0);
    const again = await agentRun(vault, markerCommand(tag));
    assert.equal(again.envelope.result.state, 'completed');
    assert.equal(again.envelope.result.approval, null, 'it was not asked');
    assert.equal(again.envelope.result.decision?.action, 'allow');
    assert.equal((await markerOf(vault)).stdout, tag);
  });

  it('requests queue: one notification, the rest counted in the status bar and listed under Pending Approvals; one settled by `avfs approve` leaves', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const first = agentRun(vault, markerCommand('first'));
    await until('the first request', () => api.approvals.pending().length === 1, 20_000);
    const second = agentRun(vault, `${markerCommand('second')}; echo second`);
    await until('the second request', () => api.approvals.pending().length === 2, 20_000);
    assert.match(await ui('visible', { role: 'button', name: 'AVFS vault host: ready, 2 approval requests waiting', exact: true, within: PART.statusBar }), /AVFS\s*2$/);
    // The AVFS icon in the activity bar counts them (TreeView.badge), the view open or not.
    assert.deepEqual(api.tree.view.badge, { value: 2, tooltip: '2 approval requests waiting' });
    await vscode.commands.executeCommand('workbench.view.explorer');
    assert.equal(await ui('visible', { css: `${PART.activityBar} [aria-label^="AVFS"] .badge-content` }), '2');
    await reveal(api, { kind: 'approvals' }, { expand: true });
    await ui('visible', row('Pending Approvals'));
    const [req1, req2] = api.approvals.pending();
    // The second, answered from the view's inline Deny.
    await reveal(api, { kind: 'approval', id: req2!.id });
    await ui('hover', { css: `${PART.sideBar} .monaco-list-row.selected` });
    await ui('click', { role: 'button', name: 'Deny', exact: true, within: `${PART.sideBar} .monaco-list-row.selected` });
    const denied = await second;
    assert.equal(denied.envelope.result.state, 'denied');
    assert.match(denied.envelope.result.approval?.by ?? '', /^vscode client \(pid /);
    // The first, settled elsewhere: `avfs approve` in a terminal.
    const approve = await avfs(['approve', req1!.id]);
    assert.equal(approve.code, 0, approve.stderr);
    const approved = await first;
    assert.equal(approved.envelope.result.state, 'completed');
    assert.match(approved.envelope.result.approval?.by ?? '', /^cli client \(pid /);
    await until('the queue to empty', () => api.approvals.pending().length === 0);
    assert.equal(api.tree.view.badge, undefined);
    await ui('gone', { css: `${PART.activityBar} [aria-label^="AVFS"] .badge-content` });
    assert.equal(await ui('visible', { role: 'button', name: 'AVFS vault host: ready', exact: true, within: PART.statusBar }), 'AVFS');
    await api.tree.settled();
    await vscode.commands.executeCommand('workbench.view.extension.avfs');
    await ui('gone', row('Pending Approvals'));
  });

  it('a request asked again under an id that already waits is denied at once; the first still waits', async () => {
    const api = await hostReady();
    const id = `dup-${Date.now()}`;
    const req: ApprovalRequest = {
      id,
      vault: 'dup',
      command: 'curl -s https://example.com',
      cwd: '/',
      action: 'require_approval',
      categories: ['networked'],
      reason: 'curl talks to the network',
      rule: 'builtin:networked',
      requested_at: new Date().toISOString(),
      surface: 'rpc',
      parts: [],
      timeout_ms: 300_000,
    };
    const tokens = [new vscode.CancellationTokenSource(), new vscode.CancellationTokenSource()];
    const first = api.approvals.ask(req, tokens[0]!.token);
    const second = api.approvals.ask({ ...req, command: 'curl -s https://other.example' }, tokens[1]!.token);
    const answered = await Promise.race([second, new Promise((r) => setTimeout(() => r('never answered'), 5000))]);
    assert.notEqual(answered, 'never answered', 'the second request was left without an answer');
    assert.equal((answered as { answer: string }).answer, 'deny');
    assert.match((answered as { by: string }).by, /^VS Code/);
    assert.deepEqual(api.approvals.pending().map((r) => [r.id, r.command]), [[id, 'curl -s https://example.com']], 'the first still waits, as it was asked');
    assert.equal(await api.approvals.answer(id, 'deny'), true);
    assert.equal((await first).answer, 'deny');
    for (const t of tokens) t.dispose();
  });

  it('after a host restart the next request is shown again', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const before = agentRun(vault, markerCommand('before-restart')).catch(() => undefined);
    await until('the first request', () => api.approvals.pending().length === 1, 20_000);
    await notification(/before-restart/, 20_000);
    const pid = readyState(api).pid;
    await vscode.commands.executeCommand('avfs.restartHost');
    await until('a new host', () => api.host.state.name === 'ready' && readyState(api).pid !== pid, 30_000);
    await before;
    assert.deepEqual(api.approvals.pending(), [], 'what the old host asked left with it');
    await vscode.commands.executeCommand('notifications.clearAll');
    const after = agentRun(vault, markerCommand('after-restart'));
    await clickOnNotification(/Agent wants to run .*after-restart/, 'Deny');
    assert.equal((await after).envelope.result.state, 'denied');
  });

  it('a window that reconnects to a host still running is asked again what waits, and its answer settles the run', async function () {
    requireUi(this);
    // A host of its own that no window started (`avfs host start`, as in a terminal): it outlives
    // this window's connection, as a host shared by several windows does.
    const home = mkdtempSync(join(tmpdir(), 'avfs-reconnect-'));
    const cli = join(extension().extensionPath, 'dist', 'avfs.js');
    const host = spawn('node', [cli, 'host', 'start'], { env: { ...process.env, AVFS_HOME: home }, stdio: 'ignore' });
    const config = vscode.workspace.getConfiguration('avfs');
    try {
      await until('the headless host', async () => (await avfs(['host', 'status'], { home })).code === 0, 30_000);
      await config.update('home', home, vscode.ConfigurationTarget.Global);
      const api = await hostReady();
      await until('the window on that host', () => api.host.state.name === 'ready' && api.host.state.home === home && api.host.state.via === 'socket', 30_000);
      assert.equal((await avfs(['vault', 'create', 'reconnect'], { home })).code, 0);
      const run = agentRun('reconnect', markerCommand('reconnected'), { home });
      await notification(/Agent wants to run .*reconnected.* in vault reconnect/, 20_000);
      const [asked] = api.approvals.pending();
      // The window lets go of the host and connects again (as a reloaded window does): the host
      // is still waiting, and asks it again.
      await vscode.commands.executeCommand('notifications.clearAll');
      const pid = readyState(api).pid;
      await vscode.commands.executeCommand('avfs.restartHost');
      await until('the window connected again', () => api.host.state.name === 'ready' && readyState(api).pid === pid, 30_000);
      await until('the request shown again', () => api.approvals.pending().some((r) => r.id === asked!.id), 20_000);
      await clickOnNotification(/Agent wants to run .*reconnected/, 'Approve Once');
      const { envelope } = await run;
      assert.equal(envelope.result.state, 'completed');
      assert.equal(envelope.result.approval?.outcome, 'approved');
      assert.equal((await avfs(['--vault', 'reconnect', 'cat', '/marker.txt'], { home })).stdout, 'reconnected');
    } finally {
      await config.update('home', undefined, vscode.ConfigurationTarget.Global);
      await avfs(['host', 'stop'], { home });
      host.kill();
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('a command too long to show whole offers Review… (not the approvals); the modal shows all of it and answers', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const tag = `review-${Date.now()}`;
    const command = `${markerCommand(tag)}; echo ${'x'.repeat(150)} hidden-middle ${'y'.repeat(150)} the-end`;
    const run = agentRun(vault, command);
    const text = await notification(new RegExp(`Agent wants to run .* in vault ${vault}`), 20_000);
    assert.match(text, /Review it to see all of it before answering/);
    assert.match(text, /Review….*Deny/);
    assert.doesNotMatch(text, /Approve Once|Always Allow/);
    assert.doesNotMatch(text, /hidden-middle/);
    const modal = answerNextModal('Approve Once');
    await clickOnNotification(new RegExp(vault), 'Review…');
    const asked = await modal;
    assert.deepEqual(asked.buttons, ['Approve Once', 'Always Allow…', 'Deny']);
    assert.ok(asked.detail?.includes(command), asked.detail);
    assert.match(asked.detail ?? '', /The part that asks:\n {2}• python3 -c .* — /);
    const { envelope } = await run;
    assert.equal(envelope.result.state, 'completed');
    assert.equal((await markerOf(vault)).stdout, tag);
  });

  it('while the Always Allow rule is shown, a new request does not put up a second notification for the same one', async function () {
    requireUi(this);
    const api = await hostReady();
    const vault = await newVault(api, 'appr');
    const [tagA, tagB] = [`race-a-${Date.now()}`, `race-b-${Date.now()}`];
    const watch = watchWarnings();
    try {
      const a = agentRun(vault, markerCommand(tagA));
      await clickOnNotification(new RegExp(tagA), 'Always Allow…');
      await until('the rule modal', () => watch.modals.length === 1);
      const b = agentRun(vault, markerCommand(tagB));
      await until('the second request', () => api.approvals.pending().length === 2, 20_000);
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(watch.toasts.filter((t) => t.includes(tagA)).length, 1, watch.toasts.join('\n'));
      assert.equal(watch.toasts.filter((t) => t.includes(tagB)).length, 0, 'the second waits its turn');
      // Cancelled at the rule: the first is asked again (never a silent deny), then the second.
      watch.modals[0]!.answer(undefined);
      await until('the first asked again', () => watch.toasts.filter((t) => t.includes(tagA)).length === 2);
      const [reqA, reqB] = api.approvals.pending();
      await api.approvals.answer(reqA!.id, 'deny');
      await until('the second shown', () => watch.toasts.some((t) => t.includes(tagB)));
      await api.approvals.answer(reqB!.id, 'deny');
      assert.equal((await a).envelope.result.state, 'denied');
      assert.equal((await b).envelope.result.state, 'denied');
    } finally {
      watch.dispose();
    }
  });
});
