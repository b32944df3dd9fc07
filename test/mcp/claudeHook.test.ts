/**
 * `avfs hook claude-code` and `avfs hook install claude-code`, through the real CLI, fed Claude
 * Code's documented PreToolUse input (test/fixtures/claude-code/*.json, the shapes of its hooks
 * reference) and checked against its documented output shape.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { ROOT, runCli, runJson, tempDir } from '../helpers';
import { sh } from '../fuse/helpers';

/** The hook output Claude Code reads, as its reference documents it (strict: nothing else). */
const HookOutput = z.strictObject({
  hookSpecificOutput: z.strictObject({
    hookEventName: z.literal('PreToolUse'),
    permissionDecision: z.enum(['allow', 'deny', 'ask']),
    permissionDecisionReason: z.string().min(1),
    updatedInput: z.record(z.string(), z.unknown()).optional(),
  }),
});
type HookOutput = z.infer<typeof HookOutput>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests set fields of any type, and remove them, to make input malformed
type Fixture = { tool_input: any; [field: string]: unknown };

describe('avfs hook claude-code', () => {
  const t = tempDir('avfs-hook-');
  const home = join(t.dir, 'home');
  const project = join(t.dir, 'project');
  /** A fixture with $PROJECT filled in, changed by `change` (a test breaks its fields on purpose). */
  const fixture = (name: string, change: (f: Fixture) => void = () => undefined): string => {
    const f = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'claude-code', `${name}.json`), 'utf8').replaceAll('$PROJECT', project)) as Fixture;
    change(f);
    return JSON.stringify(f);
  };
  async function hook(input: string, args: string[] = [], env: Record<string, string> = {}): Promise<HookOutput['hookSpecificOutput']> {
    const r = await runCli(['hook', 'claude-code', ...args], { home, input, env: { CLAUDE_PROJECT_DIR: project, ...env } });
    assert.equal(r.code, 0, `a hook always exits 0 (stderr: ${r.stderr})`);
    return HookOutput.parse(JSON.parse(r.stdout)).hookSpecificOutput;
  }

  before(() => mkdirSync(join(project, 'src'), { recursive: true }));
  after(async () => {
    await sh('bash', ['-c', `for m in $(grep -o "${home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    t.cleanup();
  });

  test('Bash: the policy decides (deny → deny, require_approval → ask, else allow), with the rule and reason', async () => {
    const allow = await hook(fixture('bash'));
    assert.equal(allow.permissionDecision, 'allow');
    assert.match(allow.permissionDecisionReason, /rule builtin:/);
    assert.equal(allow.updatedInput, undefined);
    const deny = await hook(fixture('bash', (f) => (f.tool_input.command = 'rm -rf / --no-preserve-root')));
    assert.equal(deny.permissionDecision, 'deny');
    assert.match(deny.permissionDecisionReason, /rule builtin:host_escape/);
    const ask = await hook(fixture('bash', (f) => (f.tool_input.command = 'npm install left-pad')));
    assert.equal(ask.permissionDecision, 'ask');
    assert.match(ask.permissionDecisionReason, /require_approval \(rule builtin:package_install\)/);
    // Outside the project is outside the workspace.
    const escape = await hook(fixture('bash', (f) => (f.tool_input.command = `echo x > ${t.dir}/outside.txt`)));
    assert.equal(escape.permissionDecision, 'deny');
  });

  test('file tools: inside the project allowed; a write outside denied, a read outside asked; a secret asked', async () => {
    for (const name of ['write', 'edit', 'multiedit', 'read']) assert.equal((await hook(fixture(name))).permissionDecision, 'allow', name);
    const outside = (name: string) => fixture(name, (f) => (f.tool_input.file_path = '/etc/hosts'));
    for (const name of ['write', 'edit', 'multiedit']) {
      const d = await hook(outside(name));
      assert.equal(d.permissionDecision, 'deny', name);
      assert.match(d.permissionDecisionReason, /\/etc\/hosts/);
    }
    const read = await hook(outside('read'));
    assert.equal(read.permissionDecision, 'ask');
    assert.match(read.permissionDecisionReason, /outside the (project|workspace)/);
    const plainRead = await hook(fixture('read', (f) => (f.tool_input.file_path = '/etc/hostname')));
    assert.equal(plainRead.permissionDecision, 'ask', 'a read the policy allows is still asked outside the project');
    assert.match(plainRead.permissionDecisionReason, /outside the project/);
    const secret = await hook(fixture('read', (f) => (f.tool_input.file_path = `${process.env.HOME ?? '/root'}/.ssh/id_rsa`)));
    assert.equal(secret.permissionDecision, 'ask');
    // A relative path is taken from the input's cwd; `..` out of the project is outside.
    assert.equal((await hook(fixture('write', (f) => (f.tool_input.file_path = 'src/x.ts')))).permissionDecision, 'allow');
    assert.equal((await hook(fixture('write', (f) => (f.tool_input.file_path = '../escape.ts')))).permissionDecision, 'deny');
  });

  test('malformed input: exit 0 with "ask" and the reason, never a silent allow', async () => {
    const cases = [
      '',
      'not json',
      '[]',
      '{}',
      JSON.stringify({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: {}, cwd: project }),
      fixture('bash', (f) => delete f.tool_input.command),
      fixture('bash', (f) => (f.tool_input.command = 42)),
      fixture('bash', (f) => (f.tool_input = 'rm -rf /')),
      fixture('write', (f) => delete f.tool_input.file_path),
      fixture('write', (f) => (f.tool_input.file_path = '/a\u0000b')),
      fixture('bash', (f) => delete f.cwd),
      'x'.repeat(17 * 1024 * 1024),
    ];
    for (const input of cases) {
      const d = await hook(input);
      assert.equal(d.permissionDecision, 'ask', input.slice(0, 80));
      assert.match(d.permissionDecisionReason, /^avfs: /);
    }
    // A tool the adapter does not judge gets no decision (Claude Code's own rules apply).
    const r = await runCli(['hook', 'claude-code'], { home, input: fixture('bash', (f) => (f.tool_name = 'WebSearch')) });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), {});
  });

  test('--route VAULT: the command is rewritten to run through avfs proxy exec in the vault, and that command works', async () => {
    assert.equal((await runJson(['vault', 'create', 'routed'], { home })).code, 0);
    const d = await hook(fixture('bash', (f) => (f.tool_input.command = `echo "it's routed" > note.txt`)), ['--route', 'routed']);
    assert.equal(d.permissionDecision, 'allow');
    const input = d.updatedInput as { command: string; description: string; timeout: number };
    assert.equal(input.description, 'Run the test suite', 'the other fields of tool_input are kept');
    assert.equal(input.timeout, 120000);
    assert.match(input.command, /proxy exec --cwd '\/' --shell /);
    // Run it as Claude Code would (bash -c), from the project.
    const ran = await sh('bash', ['-c', input.command], { cwd: project, env: { AVFS_HOME: home } });
    assert.equal(ran.code, 0, ran.stderr);
    const cat = await runJson(['--vault', 'routed', 'cat', '/note.txt'], { home });
    assert.equal(cat.json.content, "it's routed\n");
    assert.equal(existsSync(join(project, 'note.txt')), false, 'the command ran in the vault, not on the disk');
    const denied = await hook(fixture('bash', (f) => (f.tool_input.command = 'rm -rf /')), ['--route', 'routed']);
    assert.equal(denied.permissionDecision, 'deny');
    assert.equal(denied.updatedInput, undefined);
    const missing = await hook(fixture('bash'), ['--route', 'no-such-vault']);
    assert.equal(missing.permissionDecision, 'ask');
    assert.match(missing.permissionDecisionReason, /VaultNotFound/);
  });
});

describe('avfs hook install claude-code', () => {
  const t = tempDir('avfs-hook-install-');
  const home = join(t.dir, 'home');
  const project = join(t.dir, 'project');
  const user = join(t.dir, 'user');
  const settingsFile = join(project, '.claude', 'settings.json');
  const install = (args: string[]) => runCli(['hook', 'install', 'claude-code', ...args], { home, env: { HOME: user } });
  const inProject = async (args: string[]) => {
    const r = await sh(process.execPath, [join(ROOT, 'dist', 'avfs.js'), 'hook', 'install', 'claude-code', ...args], { cwd: project, env: { AVFS_HOME: home, HOME: user } });
    return r;
  };
  before(() => {
    mkdirSync(join(project, '.claude'), { recursive: true });
    mkdirSync(user, { recursive: true });
  });
  after(() => t.cleanup());

  test('--project merges into an existing settings.json: other settings and hooks kept; twice adds nothing', async () => {
    const existing = readFileSync(join(ROOT, 'test', 'fixtures', 'claude-code', 'settings.json'), 'utf8');
    writeFileSync(settingsFile, existing);
    const r = await inProject(['--project']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added the avfs hook to .*\.claude\/settings\.json/);
    const after1 = JSON.parse(readFileSync(settingsFile, 'utf8'));
    const before = JSON.parse(existing);
    assert.deepEqual(after1.permissions, before.permissions);
    assert.deepEqual(after1.env, before.env);
    assert.deepEqual(after1.hooks.PostToolUse, before.hooks.PostToolUse);
    assert.deepEqual(after1.hooks.PreToolUse[0], before.hooks.PreToolUse[0], 'the other PreToolUse hook is kept as it was');
    const ours = after1.hooks.PreToolUse[1];
    assert.equal(ours.matcher, 'Bash|Read|Write|Edit|MultiEdit|NotebookEdit');
    assert.equal(ours.hooks[0].type, 'command');
    assert.match(ours.hooks[0].command, /avfs\.js' hook claude-code$/);

    // The installed command is a working hook: Claude Code runs it with the input on stdin.
    const input = JSON.stringify({ cwd: project, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'rm -rf /' } });
    const ran = await sh('bash', ['-c', ours.hooks[0].command], { cwd: project, input, env: { AVFS_HOME: home } });
    assert.equal(HookOutput.parse(JSON.parse(ran.stdout)).hookSpecificOutput.permissionDecision, 'deny');

    const again = await inProject([]);
    assert.match(again.stdout, /already installed/);
    assert.deepEqual(JSON.parse(readFileSync(settingsFile, 'utf8')), after1);
    // With --route the entry is updated in place, not added twice.
    const routed = await inProject(['--route', 'task-1', '--json']);
    const doc = JSON.parse(routed.stdout);
    assert.equal(doc.action, 'updated');
    const now = JSON.parse(readFileSync(settingsFile, 'utf8'));
    assert.equal(now.hooks.PreToolUse.length, 2);
    assert.match(now.hooks.PreToolUse[1].hooks[0].command, /hook claude-code --route 'task-1'$/);
  });

  test('--user writes ~/.claude/settings.json; --print shows it and writes nothing', async () => {
    const printed = await install(['--user', '--print']);
    assert.equal(printed.code, 0, printed.stderr);
    assert.equal(JSON.parse(printed.stdout).hooks.PreToolUse.length, 1);
    assert.equal(existsSync(join(user, '.claude', 'settings.json')), false);
    const r = await install(['--user']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(readFileSync(join(user, '.claude', 'settings.json'), 'utf8')).hooks.PreToolUse[0].hooks[0].timeout, 30);
  });

  test('a settings file that is not JSON, or hooks of the wrong shape, are refused and left as they are', async () => {
    for (const text of ['{ "hooks": ', '[1, 2]', '{"hooks": {"PreToolUse": {"matcher": "x"}}}']) {
      writeFileSync(settingsFile, text);
      const r = await inProject(['--json']);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.equal(JSON.parse(r.stdout).error, 'InvalidInput');
      assert.equal(readFileSync(settingsFile, 'utf8'), text);
    }
    const other = await install(['--project', '--user']);
    assert.notEqual(other.code, 0);
    const codex = await runCli(['hook', 'install', 'codex'], { home });
    assert.match(codex.stderr, /InvalidInput: .*knows claude-code/);
  });
});
