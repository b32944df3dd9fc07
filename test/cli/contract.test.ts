/**
 * The CLI's `--json` output is the result of the operation it runs, as host/protocol/methods.ts
 * defines it (nothing more, nothing less): every command, run for real, validated against its
 * method's result schema. An agent can read the CLI and the host with one set of types.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { z } from 'zod';
import { buildProgram } from '../../host/cli/main';
import { ErrorJson } from '../../host/protocol/errors';
import { METHODS, type MethodName } from '../../host/protocol/methods';
import { fuseMissing, sh } from '../fuse/helpers';
import { runJson, tempDir } from '../helpers';
import { startCluster } from '../../scripts/pgcluster.mjs';

/** Fails unless `value` is exactly a value of `schema`: valid, and with no field the schema does not name. */
function assertExactly(schema: z.ZodType, value: unknown, what: string): void {
  const parsed = schema.safeParse(value);
  assert.ok(parsed.success, `${what}: ${parsed.success ? '' : JSON.stringify(parsed.error.issues)}\n${JSON.stringify(value)}`);
  assert.deepEqual(parsed.data, value, `${what}: fields the result schema does not name`);
}

/** Commands that run no operation of the contract, and why. */
const NOT_OPERATIONS: Record<string, string> = {
  pwd: 'answers "/" without opening a vault',
  'host start': 'runs the host itself',
  'host status': 'a host method (host/status)',
  'host stop': 'a host method (host/shutdown)',
  approvals: 'a host method (approval/list)',
  approve: 'a host method (approval/answer)',
  deny: 'a host method (approval/answer)',
  mcp: 'serves MCP on stdio (test/mcp)',
  doctor: 'probes this machine, no vault (test/sandbox checks its JSON)',
  'hook claude-code': 'prints Claude Code\'s hook output, not an operation\'s result (test/mcp/claudeHook.test.ts)',
  'hook cline': 'prints Cline\'s hook output, not an operation\'s result (test/mcp/clineHook.test.ts)',
  'hook install': 'writes an agent\'s settings file or hook script (test/mcp/claudeHook.test.ts, test/mcp/clineHook.test.ts)',
};

describe('CLI --json output is the operation\'s result', () => {
  const t = tempDir('avfs-contract-');
  const home = join(t.dir, 'home');
  const json = (args: string[], input?: string) => runJson(args, { home, ...(input !== undefined ? { input } : {}) });
  const covered = new Set<string>();

  /** Runs `args` with --json and checks its document against the result of `method`. */
  async function check(args: string[], method: MethodName, input?: string): Promise<Record<string, unknown>> {
    const r = await json(args, input);
    assert.equal(r.code, 0, `${args.join(' ')}: ${JSON.stringify(r.json)} ${r.stderr}`);
    assertExactly(METHODS[method].result, r.json, `avfs ${args.join(' ')} → ${method}`);
    covered.add(commandOf(args));
    return r.json;
  }

  before(async () => {
    await json(['vault', 'create', 'c']);
  });
  after(async () => {
    await sh('bash', ['-c', `for m in $(grep -o "${t.dir}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    t.cleanup();
  });

  test('vault commands', async () => {
    await check(['vault', 'create', 'v2', '--no-use', '--max-files', '100'], 'vault/create');
    await check(['vault', 'list'], 'vault/list');
    await check(['vault', 'info'], 'vault/info');
    await check(['vault', 'use', 'c'], 'vault/use');
    await check(['vault', 'fork', 'c', 'f1'], 'vault/fork');
    await check(['vault', 'upgrade', 'c'], 'vault/upgrade');
    await check(['vault', 'convert', 'v2', '--backend', process.env.AVFS_TEST_BACKEND === 'lmdb' ? 'sqlite' : 'lmdb'], 'vault/convert');
    await check(['vault', 'delete', 'f1', '--yes'], 'vault/delete');
  });

  test('vault commands of a vault on a server', async () => {
    const cluster = startCluster();
    try {
      delete process.env.AVFS_PG_NAMESPACE; // the two homes name one vault on the server
      const other = join(t.dir, 'other-home');
      const made = await runJson(['vault', 'create', 'pg', '--backend', 'postgres', '--url', cluster.url], { home: other });
      assertExactly(METHODS['vault/create'].result, made.json, 'vault create --backend postgres');
      await check(['vault', 'attach', 'pg', '--backend', 'postgres', '--url', cluster.url, '--no-use'], 'vault/attach');
      await check(['vault', 'delete', 'pg', '--yes'], 'vault/delete');
    } finally {
      cluster.destroy();
    }
  });

  test('file commands', async () => {
    await check(['write', '/a.txt', 'hello'], 'fs/writeFile');
    await check(['write', '/d/from-stdin.txt', '-p'], 'fs/writeFile', 'piped');
    await check(['ls', '/'], 'fs/readDirectory');
    await check(['stat', '/a.txt'], 'fs/stat');
    await check(['cat', '/a.txt'], 'fs/readText');
    await check(['mkdir', '-p', '/x/y'], 'fs/createDirectory');
    await check(['cp', '/a.txt', '/b.txt'], 'fs/copy');
    await check(['mv', '/b.txt', '/x'], 'fs/rename');
    await check(['ln', '-s', 'a.txt', '/sym'], 'fs/link');
    await check(['ln', '/a.txt', '/hard'], 'fs/link');
    await check(['chmod', '600', '/a.txt'], 'fs/chmod');
    await check(['touch', '/t'], 'fs/touch');
    await check(['tree', '/'], 'fs/tree');
    await check(['rm', '/t'], 'fs/delete');
    await check(['rmdir', '/x/y'], 'fs/delete');
  });

  test('import and export', async () => {
    const src = join(t.dir, 'src');
    mkdirSync(join(src, 'sub'), { recursive: true });
    writeFileSync(join(src, 'sub', 'f.txt'), 'f');
    await check(['import', src, '/imported'], 'fs/import');
    await check(['export', '/imported', join(t.dir, 'out')], 'fs/export');
  });

  test('a vault made from a project, and the way back', async () => {
    const proj = join(t.dir, 'project');
    mkdirSync(join(proj, 'src'), { recursive: true });
    writeFileSync(join(proj, 'src', 'a.txt'), 'a');
    await check(['vault', 'create', 'p', '--from', proj, '--no-use'], 'project/create');
    await check(['--vault', 'p', 'write', '/src/a.txt', 'from the vault'], 'fs/writeFile');
    await check(['apply', '--dry-run', '--patch', '--vault', 'p'], 'project/apply');
    await check(['apply', '--vault', 'p'], 'project/apply');
    writeFileSync(join(proj, 'b.txt'), 'b');
    await check(['vault', 'sync', '--vault', 'p'], 'project/sync');
  });

  test('quotas, stats, gc, checkpoints, audit', async () => {
    await check(['quota'], 'quota/get');
    await check(['quota', 'show'], 'quota/get');
    await check(['quota', 'set', 'max_files', '1000'], 'quota/set');
    await check(['quota', 'clear', 'max_files'], 'quota/clear');
    await check(['stats'], 'vault/stats');
    await check(['gc', '--dry-run'], 'vault/gc');
    await check(['checkpoint', 'save', 'one', '-m', 'first'], 'checkpoint/save');
    await check(['write', '/a.txt', 'changed'], 'fs/writeFile');
    await check(['checkpoint', 'list'], 'checkpoint/list');
    await check(['checkpoint', 'info', 'one'], 'checkpoint/info');
    await check(['checkpoint', 'diff', 'one', '--patch'], 'checkpoint/diff');
    await check(['checkpoint', 'restore', 'one'], 'checkpoint/restore');
    await check(['checkpoint', 'delete', 'one'], 'checkpoint/delete');
    await check(['checkpoint', 'retention'], 'checkpoint/retention');
    await check(['checkpoint', 'retention', '--keep-last', '3'], 'checkpoint/retention');
    await check(['checkpoint', 'prune', '--dry-run'], 'checkpoint/prune');
    await check(['checkpoint', 'prune', '--gc'], 'checkpoint/prune');
    await check(['audit', '-n', '5'], 'audit/list');
  });

  test('policy commands', async () => {
    await check(['policy', 'check', '--shell', 'git push origin main'], 'policy/check');
    await check(['policy', 'rules'], 'policy/rules');
    const rules = join(t.dir, 'rules.json');
    writeFileSync(rules, JSON.stringify({ version: 1, rules: [{ exact: ['make', 'deploy'], action: 'deny', reason: 'no deploys' }] }));
    await check(['policy', 'set-vault-rules', rules], 'policy/setVaultRules');
    await check(['policy', 'set-vault-rules', '--clear'], 'policy/setVaultRules');
    await check(['policy', 'set-user-rules', rules], 'policy/setUserRules');
    await check(['policy', 'set-user-rules', '--clear'], 'policy/setUserRules');
  });

  test('mount commands', { skip: fuseMissing }, async () => {
    const mp = join(t.dir, 'mnt');
    mkdirSync(mp);
    await check(['mount', 'c', mp], 'mount/mount');
    await check(['mounts'], 'mount/list');
    await check(['unmount', mp], 'mount/unmount');
  });

  test('proxy exec prints the envelope of exec/run', { skip: fuseMissing }, async () => {
    await check(['proxy', 'exec', '--', 'true'], 'exec/run');
  });

  test('an error is one error document, whatever the command', async () => {
    for (const args of [['stat', '/missing'], ['checkpoint', 'info', 'nope'], ['vault', 'info', 'nope'], ['quota', 'set', 'max_files', 'x']]) {
      const r = await json(args);
      assert.notEqual(r.code, 0);
      assert.ok(ErrorJson.safeParse(r.json).success, JSON.stringify(r.json));
    }
  });

  test('every command is checked above, or runs no operation for a stated reason', () => {
    const leaves: string[] = [];
    (function walk(c: ReturnType<typeof buildProgram>, prefix: string[]) {
      const subs = c.commands.filter((s) => s.name() !== 'help');
      if (subs.length === 0 && prefix.length > 0) leaves.push(prefix.join(' '));
      for (const s of subs) walk(s, [...prefix, s.name()]);
    })(buildProgram(() => async () => undefined), []);
    const skipped = fuseMissing ? ['mount', 'unmount', 'mounts', 'proxy exec'] : [];
    const missing = leaves.filter((l) => !covered.has(l) && !(l in NOT_OPERATIONS) && !skipped.includes(l));
    assert.deepEqual(missing, [], 'commands whose --json output is not checked against a result schema');
  });
});

/** The command a CLI argv runs (`quota` alone is `quota show`). */
function commandOf(args: string[]): string {
  const words = args.filter((a) => !a.startsWith('-') && !a.startsWith('/'));
  if (['vault', 'checkpoint', 'policy', 'proxy', 'host'].includes(words[0]!)) return words.slice(0, 2).join(' ');
  if (words[0] === 'quota') return `quota ${['show', 'set', 'clear'].includes(words[1] ?? '') ? words[1] : 'show'}`;
  return words[0]!;
}
