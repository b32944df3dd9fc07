// Approvals in the editor: an agent's `avfs proxy exec` (the real CLI, handing its run to the
// extension's vault host) needs approval, the window shows a notification, and a click on its
// buttons decides what the waiting CLI prints. Requests that queue are counted in the status bar
// and listed under Pending Approvals, where they are answered too; one settled elsewhere leaves.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { agentRun, answerNextModal, avfs, hostReady, markerCommand, newVault, readyState, reveal, tidyWindow, until } from './helpers';
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
    const text = await notification(new RegExp(`An agent wants to run .*marker.* in vault ${vault}`), 20_000);
    // What it says: the command, the vault, and why (categories and reason).
    assert.match(text, /It needs approval: mutating, code execution, networked — .*network/);
    assert.match(text, /Approve Once.*Always Allow….*Deny/);
    await clickOnNotification(new RegExp(vault), 'Approve Once');
    const { r, envelope } = await run;
    assert.equal(r.code, 0, r.stderr);
    assert.equal(envelope.result.state, 'completed');
    assert.equal(envelope.result.approval?.outcome, 'approved');
    assert.equal(envelope.result.approval?.scope, 'once');
    assert.match(envelope.result.approval?.by ?? '', /^VS Code \(/);
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
    await notification(new RegExp(`An agent wants to run .* in vault ${vault}`), 20_000);
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
    await reveal(api, { kind: 'approvals' }, { expand: true });
    await ui('visible', row('Pending Approvals'));
    const [req1, req2] = api.approvals.pending();
    // The second, answered from the view's inline Deny.
    await reveal(api, { kind: 'approval', id: req2!.id });
    await ui('hover', { css: `${PART.sideBar} .monaco-list-row.selected` });
    await ui('click', { role: 'button', name: 'Deny', exact: true, within: `${PART.sideBar} .monaco-list-row.selected` });
    const denied = await second;
    assert.equal(denied.envelope.result.state, 'denied');
    assert.match(denied.envelope.result.approval?.by ?? '', /^VS Code/);
    // The first, settled elsewhere: `avfs approve` in a terminal.
    const approve = await avfs(['approve', req1!.id]);
    assert.equal(approve.code, 0, approve.stderr);
    const approved = await first;
    assert.equal(approved.envelope.result.state, 'completed');
    assert.match(approved.envelope.result.approval?.by ?? '', /^avfs approve/);
    await until('the queue to empty', () => api.approvals.pending().length === 0);
    assert.equal(await ui('visible', { role: 'button', name: 'AVFS vault host: ready', exact: true, within: PART.statusBar }), 'AVFS');
    await api.tree.settled();
    await vscode.commands.executeCommand('workbench.view.extension.avfs');
    await ui('gone', row('Pending Approvals'));
  });
});
