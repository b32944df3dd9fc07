// The Node that runs the host, checked for real: the probe runs in actual Node binaries.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BUNDLED_NODE, checkRuntime, describeAbi, hostNode, judgeProbe, parseAbiMismatch } from '../../extension/client/runtime';
import { ROOT, tempDir } from '../helpers';

const DIST = join(ROOT, 'dist');

test('the Node that ran `npm install` passes: better-sqlite3 loads and opens a database there', async () => {
  const check = await checkRuntime(process.execPath, DIST, process.env);
  assert.deepEqual(check, { ok: true, node: process.version, abi: process.versions.modules });
});

test('a node path that does not exist, or is not Node, is refused with the setting named', async () => {
  const missing = await checkRuntime('/nonexistent/node', DIST, process.env);
  assert.equal(missing.ok, false);
  assert.match(!missing.ok ? missing.reason : '', /"avfs\.nodePath" \("\/nonexistent\/node"\) cannot be run \(ENOENT\)/);
  const t = tempDir();
  try {
    const fake = join(t.dir, 'node');
    writeFileSync(fake, '#!/bin/sh\necho "hello, I am not node"\n');
    chmodSync(fake, 0o755);
    const notNode = await checkRuntime(fake, DIST, process.env);
    assert.equal(notNode.ok, false);
    assert.match(!notNode.ok ? notNode.reason : '', /is not Node\.js/);
  } finally {
    t.cleanup();
  }
});

// Node's own message when a native module was built for another ABI (as Node 24 prints it for a module built on Node 20).
const MISMATCH =
  "The module '/x/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\nwas compiled against a different Node.js version using\n" +
  'NODE_MODULE_VERSION 115. This version of Node.js requires\nNODE_MODULE_VERSION 137. Please try re-compiling or re-installing\nthe module.';

test('an ABI mismatch names both Node versions and the fix', () => {
  assert.deepEqual(parseAbiMismatch(MISMATCH), { built: '115', running: '137' });
  // In a checkout the module's sources are there: rebuild it there.
  const check = judgeProbe({ node: 'v24.22.3', abi: '137', sqliteError: MISMATCH, rebuildIn: '/src/avfs/node_modules/better-sqlite3' }, '/opt/node24/bin/node');
  assert.equal(check.ok, false);
  if (check.ok) return;
  assert.equal(
    check.reason,
    'The vault host\'s native module better-sqlite3 was built for Node 20 (NODE_MODULE_VERSION 115), but "avfs.nodePath" ("/opt/node24/bin/node") runs Node v24.22.3 (NODE_MODULE_VERSION 137).',
  );
  assert.equal(check.fix, 'Set "avfs.nodePath" to a Node 20 binary, or rebuild the module for Node v24.22.3: run `npm rebuild better-sqlite3` with that Node in /src/avfs.');
  // An installed VSIX ships the binary only: a build made with that Node is the other way.
  const installed = judgeProbe({ node: 'v24.22.3', abi: '137', sqliteError: MISMATCH, rebuildIn: null }, 'node');
  assert.match(!installed.ok ? installed.fix : '', /^Clear "avfs\.nodePath" to run the host on the extension's own Node, or set it to a Node 20 binary\.$/);
  assert.equal(describeAbi('999'), 'the Node.js release with NODE_MODULE_VERSION 999');
});

test('a Node older than 20, or a module that fails another way, is refused with what it said', () => {
  const old = judgeProbe({ node: 'v18.20.0', abi: '108', sqliteError: null, rebuildIn: null }, 'node');
  assert.equal(old.ok, false);
  assert.match(!old.ok ? old.reason : '', /runs Node v18\.20\.0; the vault host needs Node 20 or later/);
  const other = judgeProbe({ node: 'v20.1.0', abi: '115', sqliteError: "Cannot find module 'better-sqlite3'\nRequire stack: ...", rebuildIn: null }, 'node');
  assert.equal(other.ok, false);
  assert.match(!other.ok ? other.reason : '', /does not load on Node v20\.1\.0 \("avfs\.nodePath" \("node"\)\): Cannot find module 'better-sqlite3'$/);
});

test('the host runs on avfs.nodePath when set, else on the Node shipped in the extension, else on `node` from PATH', () => {
  const t = tempDir('avfs-runtime-choice-');
  try {
    // A checkout: no runtime/.
    assert.deepEqual(hostNode('', t.dir), { nodePath: 'node', label: '"avfs.nodePath" ("node")', source: 'path' });
    const bundled = join(t.dir, BUNDLED_NODE);
    mkdirSync(join(t.dir, 'runtime', 'bin'), { recursive: true });
    // Not executable (an extraction that lost the mode): not used.
    writeFileSync(bundled, '');
    assert.equal(hostNode('', t.dir).source, 'path');
    chmodSync(bundled, 0o755);
    assert.deepEqual(hostNode('  ', t.dir), { nodePath: bundled, label: `the extension's own Node (${JSON.stringify(bundled)})`, source: 'bundled' });
    // The setting overrides the shipped Node.
    assert.deepEqual(hostNode(' /opt/node22/bin/node ', t.dir), { nodePath: '/opt/node22/bin/node', label: '"avfs.nodePath" ("/opt/node22/bin/node")', source: 'setting' });
  } finally {
    t.cleanup();
  }
});
