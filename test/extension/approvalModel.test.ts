// What an approval notification and the "Always Allow" confirmation say, and the queue behind
// them, from a request as the host sends it (its decision made by the real policy engine).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createPolicyEngine } from '../../host/policy/engine';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { alwaysAllowConfirmation, ApprovalQueue, approvalMessage, settledText, shortCommand } from '../../extension/approvals/model';

async function request(command: string, id = 'r1'): Promise<ApprovalRequest> {
  const engine = await createPolicyEngine();
  const d = engine.decide({ shell: command }, { mountpoint: '/tmp/avfs-approvals-mnt', cwd: '/tmp/avfs-approvals-mnt', rules: [] });
  return { id, vault: 'demo', command, cwd: '/', action: d.action, categories: d.categories, reason: d.reason, rule: d.rule, requested_at: new Date().toISOString(), surface: 'rpc', parts: d.parts, timeout_ms: 300_000 };
}

describe('approval texts', () => {
  test('the notification names the command, the vault and why, and counts the others', async () => {
    const req = await request('curl -s https://example.com');
    assert.equal(req.action, 'require_approval');
    const text = approvalMessage(req, 2);
    assert.match(text, /^An agent wants to run `curl -s https:\/\/example\.com` in vault demo\. It needs approval: networked — /);
    assert.match(text, / 2 more requests waiting\.$/);
    assert.equal(text.split('curl -s https://example.com').length, 2, `the command is named once: ${text}`);
    assert.doesNotMatch(approvalMessage(req, 0), /waiting/);
    // A long command is cut in its part's reason: it is still named once.
    const long = await request(`python3 -c 'import socket; ${'x = 1; '.repeat(30)}print(1)'`);
    const longText = approvalMessage(long, 0);
    assert.match(longText, /It needs approval: code execution, networked — python -c runs inline code; python -c code uses the network/);
  });

  test('"Always Allow" shows the exact rules it adds for the parts that asked, in the home\'s policy.json', async () => {
    const req = await request('ls && curl -s https://example.com');
    const c = alwaysAllowConfirmation(req, '/home/me/.avfs');
    assert.match(c.message, /^Always allow `ls && curl -s https:\/\/example\.com` in every vault\?$/);
    assert.match(c.detail, /^Adds 1 rule to \/home\/me\/\.avfs\/policy\.json, so that this exact command runs without asking from now on:/);
    assert.match(c.detail, /allow exactly: \["curl","-s","https:\/\/example\.com"\]/);
    assert.doesNotMatch(c.detail, /"ls"/, 'ls did not ask: no rule for it');
  });

  test('long commands are cut in the middle; a settled request says how', () => {
    const long = `echo ${'x'.repeat(300)} end`;
    const short = shortCommand(long, 40);
    assert.equal(short.length, 39);
    assert.ok(short.startsWith('echo x') && short.endsWith('x end') && short.includes('…'));
    assert.equal(shortCommand('a\nb'), 'a ⏎ b');
    const at = new Date().toISOString();
    assert.equal(settledText({ command: 'npm ci' }, { id: 'r', outcome: 'approved', answer: 'approve_once', by: 'avfs approve (pid 7)', at, scope: 'once', rule: null, waited_ms: 5 }), '`npm ci` was approved by avfs approve (pid 7).');
    assert.equal(settledText({ command: 'npm ci' }, { id: 'r', outcome: 'timed_out', answer: null, by: null, at, scope: null, rule: null, waited_ms: 5 }), 'The approval for `npm ci` timed out: it was denied.');
  });
});

describe('ApprovalQueue', () => {
  test('oldest first; a request asked twice is queued once; removing the head shows the next', async () => {
    const q = new ApprovalQueue();
    const [a, b] = [await request('curl a.io', 'a'), await request('curl b.io', 'b')];
    assert.equal(q.add(a), true);
    assert.equal(q.add(b), true);
    assert.equal(q.add(a), false);
    assert.equal(q.size, 2);
    assert.equal(q.head()?.id, 'a');
    assert.equal(q.remove('a'), true);
    assert.equal(q.remove('a'), false);
    assert.equal(q.head()?.id, 'b');
    assert.deepEqual(q.clear().map((r) => r.id), ['b']);
    assert.equal(q.head(), undefined);
  });
});
