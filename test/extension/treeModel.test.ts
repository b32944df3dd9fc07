import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CheckpointInfo } from '../../host/protocol/changes';
import type { VaultInfo, VaultSummary } from '../../host/protocol/vault';
import {
  checkpointDescription,
  checkpointTooltip,
  checkpointsNewestFirst,
  contextValue,
  nodeId,
  sortEntries,
  vaultDescription,
  viewChanges,
  vaultForest,
  vaultTooltip,
} from '../../extension/views/treeModel';

const summary = (name: string, parent: string | null = null): Extract<VaultSummary, { status: 'ok' }> => ({
  name,
  status: 'ok',
  current: false,
  size: 2048,
  size_on_disk: 65536,
  files: 3,
  backend: 'sqlite',
  location: `/home/u/.avfs/vaults/${name}.avfs`,
  parent,
});

test('forks are nested under their parent, at any depth; a fork whose parent is gone stays visible at the top', () => {
  const damaged: VaultSummary = { name: 'damaged', status: 'unreadable', reason: 'file is not a database', current: false, size_on_disk: 10, backend: 'sqlite', location: '/home/u/.avfs/vaults/damaged.avfs' };
  const forest = vaultForest([summary('web'), summary('app'), summary('app-fix', 'app'), summary('app-fix-2', 'app-fix'), summary('app-alt', 'app'), summary('lost', 'deleted'), damaged]);
  assert.deepEqual(forest.roots.map((v) => v.name), ['app', 'damaged', 'lost', 'web']);
  assert.deepEqual(forest.forksOf('app').map((v) => v.name), ['app-alt', 'app-fix']);
  assert.deepEqual(forest.forksOf('app-fix').map((v) => v.name), ['app-fix-2']);
  assert.deepEqual(forest.forksOf('web'), []);
  const deepest = forest.get('app-fix-2');
  assert.equal(deepest?.status === 'ok' && deepest.parent, 'app-fix');
});

const info = (quotas: Partial<VaultInfo['quotas']> = {}): VaultInfo => ({
  ...summary('demo'),
  size: 1.5 * 1024 * 1024,
  files: 14,
  path: '/home/u/.avfs/vaults/demo.avfs',
  created_at: '2026-01-01T00:00:00Z',
  schema_version: 1,
  chunk_size: 65536,
  chunks: 20,
  quotas: { max_size_mb: null, max_files: null, max_file_size_mb: null, ...quotas },
  forks: [],
  checkpoints: ['a', 'b'],
  damaged: null,
});
const mount = { vault: 'demo', mountpoint: '/home/u/.avfs/mnt/demo', readonly: false, allow_other: false, pid: 1, started: '', state: 'ready', live: true };

test("a vault's description shows its size against the size quota, its files, and whether it is mounted", () => {
  assert.equal(vaultDescription(info(), undefined), '1.5 MiB · 14 files');
  assert.equal(vaultDescription(info({ max_size_mb: 256 }), undefined), '1.5 MiB of 256 MiB · 14 files');
  assert.equal(vaultDescription(info(), mount), '1.5 MiB · 14 files · mounted');
  const tip = vaultTooltip(info({ max_size_mb: 2, max_files: 100 }), mount);
  assert.match(tip, /size 2 MiB \(75% used\), files 100 \(14% used\), file size none/);
  assert.match(tip, /Mounted at `\/home\/u\/\.avfs\/mnt\/demo`/);
  assert.match(tip, /2 checkpoints/);
  assert.doesNotMatch(tip, /Damaged/);
});

test('a vault a read found damaged says so in its description, and its tooltip says how to recover', () => {
  const recovery = '1 file and 0 checkpoints hold it and cannot be read (everything else can); to recover: avfs rm /a.txt, then avfs gc, then write the files again from a good copy';
  const damaged = { ...info(), damaged: { found_at: '2026-01-02T03:04:05.000Z', chunk: 'ab'.repeat(32), files: ['/a.txt'], checkpoints: [], recovery } };
  assert.equal(vaultDescription(damaged, undefined), '1.5 MiB · 14 files · damaged');
  const tip = vaultTooltip(damaged, undefined);
  // Markdown-escaped: the text is the host's, shown as text.
  assert.ok(tip.includes('**Damaged** since 2026\\-01\\-02T03\\:04\\:05\\.000Z: 1 file and 0 checkpoints hold it'), tip);
  assert.ok(tip.includes('avfs rm /a\\.txt, then avfs gc'), tip);
});

test('checkpoints are listed newest first and described by age, size and description', () => {
  const cp = (name: string, created_at: string, description: string | null = null): CheckpointInfo => ({
    name,
    created_at,
    description,
    auto: false,
    file_count: 3,
    total_size: 10,
    total_size_human: '10 B',
    alone_size: null,
    alone_size_human: null,
  });
  const list = [cp('first', '2026-01-10T10:00:00Z'), cp('third', '2026-01-10T11:30:00Z'), cp('second', '2026-01-10T11:00:00Z', 'clean tree')];
  assert.deepEqual(checkpointsNewestFirst(list).map((c) => c.name), ['third', 'second', 'first']);
  assert.equal(checkpointDescription(list[2]!, Date.parse('2026-01-10T12:00:00Z')), '1 h ago · 10 B — clean tree');
  const alone = { ...list[2]!, alone_size: 2048, alone_size_human: '2.0 KiB' };
  assert.equal(checkpointDescription(alone, Date.parse('2026-01-10T12:00:00Z')), '1 h ago · 10 B · 2.0 KiB alone — clean tree');
  assert.match(checkpointTooltip(alone), /Holds 2\.0 KiB no other checkpoint, fork or the current tree holds/);
});

test('a checkpoint description or a vault path from the host is shown as text in the Markdown tooltips, never as a link', () => {
  const link = '[Open](command:workbench.action.terminal.sendSequence?x)';
  const tip = checkpointTooltip({ name: 'x', created_at: '2026-01-10T10:00:00Z', description: `see ${link} **now**`, auto: false, file_count: 1, total_size: 1, total_size_human: '1 B', alone_size: null, alone_size_human: null });
  assert.ok(tip.includes('see \\[Open\\]\\(command\\:workbench\\.action\\.terminal\\.sendSequence?x\\) \\*\\*now\\*\\*'), tip);
  const vault = vaultTooltip({ ...info(), path: '/tmp/`` [x](https://e.example) `.avfs' }, { ...mount, mountpoint: '/mnt/`a`' });
  // Inline code whose delimiters are longer than any backtick run in it: the path cannot end it.
  assert.ok(vault.includes('``` /tmp/`` [x](https://e.example) `.avfs ```'), vault);
  assert.ok(vault.includes('Mounted at `` /mnt/`a` ``'), vault);
});

test('directory entries: directories first, then names in natural order', () => {
  const e = (name: string, type: 'file' | 'directory') => ({ name, type, size: 0, modified: '' });
  const sorted = sortEntries([e('b.txt', 'file'), e('src', 'directory'), e('file10', 'file'), e('A.md', 'file'), e('file9', 'file'), e('docs', 'directory')]);
  assert.deepEqual(sorted.map((x) => x.name), ['docs', 'src', 'A.md', 'b.txt', 'file9', 'file10']);
});

test('node ids are distinct across kinds and vaults; context values are what the menus match', () => {
  const nodes = [
    { kind: 'vault', vault: 'a' },
    { kind: 'files', vault: 'a' },
    { kind: 'checkpoints', vault: 'a' },
    { kind: 'checkpoint', vault: 'a', name: 'x' },
    { kind: 'entry', vault: 'a', path: '/x', type: 'file' },
    { kind: 'entry', vault: 'b', path: '/x', type: 'file' },
    { kind: 'vault', vault: 'b' },
  ] as const;
  assert.equal(new Set(nodes.map(nodeId)).size, nodes.length);
  assert.equal(contextValue({ kind: 'vault', vault: 'a' }), 'vault');
  assert.equal(contextValue({ kind: 'vault', vault: 'a' }, 'mounted'), 'vault.mounted');
  assert.equal(contextValue({ kind: 'vault', vault: 'a' }, 'unreadable'), 'vault.unreadable');
  assert.equal(contextValue({ kind: 'entry', vault: 'a', path: '/d', type: 'directory' }), 'directory');
  assert.equal(contextValue({ kind: 'checkpoint', vault: 'a', name: 'x' }), 'checkpoint');
});

test('a re-read redraws the whole view only when vaults came, went or moved; otherwise only the rows that read differently', () => {
  const data = (vaults: VaultSummary[], mounted: string[] = []) => ({
    vaults,
    infos: new Map(vaults.filter((v) => v.status === 'ok').map((v) => [v.name, { ...info(), ...v } as VaultInfo])),
    mounts: new Map(mounted.map((name) => [name, { ...mount, vault: name }])),
  });
  const a = summary('a');
  const b = summary('b');
  const before = data([a, b]);
  assert.deepEqual(viewChanges(before, data([a, b])), { list: false, vaults: [] });
  assert.deepEqual(viewChanges(before, data([a, { ...b, size: 9999 }])), { list: false, vaults: ['b'] });
  assert.deepEqual(viewChanges(before, data([a, b], ['a'])), { list: false, vaults: ['a'] });
  assert.deepEqual(viewChanges(before, data([a])), { list: true, vaults: [] });
  assert.deepEqual(viewChanges(before, data([a, b, summary('c')])), { list: true, vaults: [] });
  assert.deepEqual(viewChanges(before, data([a, { ...b, parent: 'a' }])), { list: true, vaults: [] });
});
