/**
 * `avfs hook cline` and `avfs hook install cline`, through the real CLI, fed Cline's documented
 * PreToolUse input (test/fixtures/cline/*.json, the shapes of its hook reference) and checked
 * against its documented output shape; the installed script is run as Cline runs it.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { z } from 'zod';
import { ROOT, runCli, tempDir } from '../helpers';
import { sh } from '../fuse/helpers';

/** The hook output Cline reads, as its reference documents it (strict: nothing else). */
const ClineOutput = z.strictObject({ cancel: z.boolean(), errorMessage: z.string().min(1).optional(), contextModification: z.string().optional() });
type ClineOutput = z.infer<typeof ClineOutput>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the tests set fields of any type, and remove them, to make input malformed
type Fixture = { preToolUse: { toolName: string; parameters: any }; [field: string]: unknown };

describe('avfs hook cline', () => {
  const t = tempDir('avfs-cline-');
  const home = join(t.dir, 'home');
  const project = join(t.dir, 'project');
  const fixture = (name: string, change: (f: Fixture) => void = () => undefined): string => {
    const f = JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'cline', `${name}.json`), 'utf8').replaceAll('$PROJECT', project)) as Fixture;
    change(f);
    return JSON.stringify(f);
  };
  async function hook(input: string): Promise<ClineOutput> {
    const r = await runCli(['hook', 'cline'], { home, input });
    assert.equal(r.code, 0, `a hook always exits 0 (stderr: ${r.stderr})`);
    return ClineOutput.parse(JSON.parse(r.stdout));
  }

  before(() => mkdirSync(join(project, 'src'), { recursive: true }));
  after(() => t.cleanup());

  test('execute_command: allowed runs; denied and needing approval are cancelled, saying why', async () => {
    assert.deepEqual(await hook(fixture('execute_command')), { cancel: false });
    const deny = await hook(fixture('execute_command', (f) => (f.preToolUse.parameters.command = 'rm -rf / --no-preserve-root')));
    assert.equal(deny.cancel, true);
    assert.match(deny.errorMessage!, /avfs policy: deny \(rule builtin:host_escape\)/);
    const ask = await hook(fixture('execute_command', (f) => (f.preToolUse.parameters.command = 'npm install left-pad')));
    assert.equal(ask.cancel, true, 'Cline cannot ask: a command needing approval does not run');
    assert.match(ask.errorMessage!, /require_approval \(rule builtin:package_install\).*exec tool/);
    const escape = await hook(fixture('execute_command', (f) => (f.preToolUse.parameters.command = `echo x > ${t.dir}/outside.txt`)));
    assert.equal(escape.cancel, true);
  });

  test('file tools: inside the workspace root allowed; outside it cancelled; other tools not judged', async () => {
    for (const name of ['write_to_file', 'replace_in_file', 'read_file']) assert.deepEqual(await hook(fixture(name)), { cancel: false }, name);
    for (const name of ['write_to_file', 'replace_in_file', 'read_file']) {
      const d = await hook(fixture(name, (f) => (f.preToolUse.parameters.path = '/etc/hosts')));
      assert.equal(d.cancel, true, name);
      assert.match(d.errorMessage!, /\/etc\/hosts/);
    }
    assert.equal((await hook(fixture('write_to_file', (f) => (f.preToolUse.parameters.path = '../escape.ts')))).cancel, true);
    assert.equal((await hook(fixture('read_file', (f) => (f.preToolUse.parameters.path = `${process.env.HOME ?? '/root'}/.ssh/id_rsa`)))).cancel, true);
    assert.deepEqual(await hook(fixture('read_file', (f) => (f.preToolUse.toolName = 'list_files'))), { cancel: false });
  });

  test('malformed input: exit 0, cancelled with the reason, never a silent allow', async () => {
    const cases = [
      '',
      'not json',
      '[]',
      '{}',
      fixture('execute_command', (f) => (f.hookName = 'PostToolUse')),
      fixture('execute_command', (f) => delete f.workspaceRoots),
      fixture('execute_command', (f) => (f.workspaceRoots = [])),
      fixture('execute_command', (f) => delete f.preToolUse.parameters.command),
      fixture('execute_command', (f) => (f.preToolUse.parameters.command = 42)),
      fixture('execute_command', (f) => (f.preToolUse.parameters = 'rm -rf /')),
      fixture('write_to_file', (f) => delete f.preToolUse.parameters.path),
      fixture('write_to_file', (f) => (f.preToolUse.parameters.path = '/a\u0000b')),
      'x'.repeat(17 * 1024 * 1024),
    ];
    for (const input of cases) {
      const d = await hook(input);
      assert.equal(d.cancel, true, input.slice(0, 80));
      assert.match(d.errorMessage!, /^avfs: /, input.slice(0, 80));
    }
  });
});

describe('avfs hook install cline', () => {
  const t = tempDir('avfs-cline-install-');
  const home = join(t.dir, 'home');
  const project = join(t.dir, 'project');
  const script = join(project, '.clinerules', 'hooks', 'PreToolUse');
  /** `avfs --json hook install cline …` run in `cwd`, as a person in that folder runs it. */
  const install = async (args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number; json: Record<string, unknown> }> => {
    const r = await sh(process.execPath, [join(ROOT, 'dist', 'avfs.js'), '--json', 'hook', 'install', 'cline', ...args], { cwd, env: { AVFS_HOME: home, ...env } });
    return { code: r.code, json: JSON.parse(r.stdout || r.stderr) as Record<string, unknown> };
  };
  before(() => mkdirSync(project, { recursive: true }));
  after(() => t.cleanup());

  test('--project writes an executable PreToolUse script that Cline runs; twice changes nothing; --print writes nothing', async () => {
    const printed = await install(['--print'], project);
    assert.equal(printed.json.action, 'printed');
    assert.equal(existsSync(script), false);
    const r = await install([], project);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.equal(r.json.action, 'added');
    assert.equal(r.json.file, script);
    assert.equal(statSync(script).mode & 0o111, 0o111, 'executable');
    // Run it as Cline does: the script with the call on stdin, in the workspace.
    const input = readFileSync(join(ROOT, 'test', 'fixtures', 'cline', 'execute_command.json'), 'utf8').replaceAll('$PROJECT', project).replace('npm test', 'rm -rf /');
    const ran = await sh(script, [], { cwd: project, env: { AVFS_HOME: home }, input });
    assert.equal(ran.code, 0, ran.stderr);
    const out = ClineOutput.parse(JSON.parse(ran.stdout));
    assert.equal(out.cancel, true);
    assert.match(out.errorMessage!, /builtin:host_escape/);
    assert.equal((await install([], project)).json.action, 'unchanged');
  });

  test('another PreToolUse script is refused and left as it is; --route is refused; --user writes ~/Documents/Cline/Hooks', async () => {
    const other = join(t.dir, 'other');
    mkdirSync(join(other, '.clinerules', 'hooks'), { recursive: true });
    const theirs = '#!/bin/sh\necho \'{"cancel": false}\'\n';
    writeFileSync(join(other, '.clinerules', 'hooks', 'PreToolUse'), theirs);
    const r = await install([], other);
    assert.notEqual(r.code, 0);
    assert.equal((r.json as { error: string }).error, 'InvalidInput');
    assert.equal(readFileSync(join(other, '.clinerules', 'hooks', 'PreToolUse'), 'utf8'), theirs);
    const route = await install(['--route', 'v'], project);
    assert.equal((route.json as { error: string }).error, 'InvalidInput');
    const user = join(t.dir, 'user');
    const u = await install(['--user'], project, { HOME: user });
    assert.equal(u.json.file, join(user, 'Documents', 'Cline', 'Hooks', 'PreToolUse'));
    assert.ok(existsSync(join(user, 'Documents', 'Cline', 'Hooks', 'PreToolUse')));
  });
});
