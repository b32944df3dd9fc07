/**
 * From a project folder to a vault and back, through the real CLI on real folders and real git
 * repositories: `vault create --from` records the base, `apply` brings the vault's work back
 * three-way and all or nothing, `--git-branch` and `--patch-out` leave the working tree alone,
 * `vault sync` brings the project's work in.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { CLI, runCli, runJson, tempDir } from '../helpers';

const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** Every entry of a folder (.git left out): type, permission bits, bytes or target. */
function snapshot(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const name of fs.readdirSync(join(root, rel)).sort()) {
      if (name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = fs.lstatSync(join(root, r));
      const bits = (st.mode & 0o7777).toString(8);
      if (st.isSymbolicLink()) out[r] = `link -> ${fs.readlinkSync(join(root, r))}`;
      else if (st.isDirectory()) {
        out[r] = `dir ${bits}`;
        walk(r);
      } else out[r] = `file ${bits} ${Math.floor(st.mtimeMs)} ${fs.readFileSync(join(root, r)).toString('base64')}`;
    }
  };
  walk('');
  return out;
}

/** A git repository with a committed tree, a .gitignore'd node_modules, a symlink and an executable. */
function makeProject(dir: string): string {
  fs.mkdirSync(join(dir, 'src'), { recursive: true });
  fs.writeFileSync(join(dir, 'README.md'), '# demo\n');
  fs.writeFileSync(join(dir, 'src', 'app.py'), 'print("hello")\n');
  fs.writeFileSync(join(dir, 'src', 'util.py'), 'def f():\n    return 1\n');
  fs.writeFileSync(join(dir, 'run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 });
  fs.symlinkSync('src/app.py', join(dir, 'main.py'));
  fs.writeFileSync(join(dir, '.gitignore'), 'node_modules/\n*.log\n');
  fs.mkdirSync(join(dir, 'node_modules', 'left-pad'), { recursive: true });
  fs.writeFileSync(join(dir, 'node_modules', 'left-pad', 'index.js'), 'module.exports = 1;\n');
  fs.writeFileSync(join(dir, 'debug.log'), 'noise\n');
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.email', 'dev@example.com');
  git(dir, 'config', 'user.name', 'Dev');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
  return git(dir, 'rev-parse', 'HEAD');
}

describe('avfs vault create --from, apply, vault sync', () => {
  const t = tempDir('avfs-apply-');
  after(t.cleanup);
  let n = 0;
  /** A fresh home, project and vault made from it. */
  async function setup(): Promise<{ home: string; proj: string; commit: string; cli: (args: string[]) => ReturnType<typeof runJson>; avfs: (...args: string[]) => Promise<string> }> {
    const base = join(t.dir, `case${++n}`);
    const home = join(base, 'home');
    const proj = join(base, 'project');
    fs.mkdirSync(proj, { recursive: true });
    const commit = makeProject(proj);
    const cli = (args: string[]) => runJson(args, { home });
    const avfs = async (...args: string[]) => {
      const r = await runCli(args, { home });
      assert.equal(r.code, 0, `avfs ${args.join(' ')}: ${r.stderr}`);
      return r.stdout;
    };
    const c = await cli(['vault', 'create', 'task', '--from', proj, '--exclude', 'README.md']);
    assert.equal(c.code, 0, JSON.stringify(c.json));
    return { home, proj, commit, cli, avfs };
  }

  test('create --from records the base and leaves out .git, .gitignore and --exclude; forks inherit it', async () => {
    const { proj, commit, cli, avfs } = await setup();
    const ls = (await cli(['tree', '/', '-a'])).json;
    const names = JSON.stringify(ls);
    for (const kept of ['app.py', 'util.py', 'run.sh', 'main.py', '.gitignore']) assert.ok(names.includes(kept), `${kept} is in the vault`);
    for (const left of ['.git', 'node_modules', 'debug.log', 'README.md']) assert.ok(!names.includes(`"${left}"`), `${left} is left out`);
    assert.equal((await cli(['stat', '/run.sh'])).json.mode, '0755');
    const base = (await runJson(['vault', 'info'], { home: join(proj, '..', 'home') })).json;
    assert.equal(base.name, 'task');
    await avfs('vault', 'fork', 'task', 'fork1');
    await avfs('--vault', 'fork1', 'write', '/src/app.py', 'print("from the fork")\n');
    const r = await cli(['--vault', 'fork1', 'apply']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("from the fork")\n');
    assert.ok(commit.length === 40);
  });

  test('apply carries edits, additions, deletions, renames, modes and symlinks; the project\'s own edits stay; the base moves', async () => {
    const { proj, cli, avfs } = await setup();
    // The developer edits a file the vault will not touch, and adds one.
    fs.writeFileSync(join(proj, 'src', 'util.py'), 'def f():\n    return 2  # mine\n');
    fs.writeFileSync(join(proj, 'notes.txt'), 'my notes\n');
    await avfs('write', '/src/app.py', 'print("hello, agent")\n');
    await avfs('write', '-p', '/src/new/mod.py', 'x = 1\n');
    await avfs('rm', '/main.py');
    await avfs('mv', '/run.sh', '/build.sh');
    await avfs('chmod', '700', '/src/app.py');
    await avfs('ln', '-s', 'app.py', '/src/alias.py');
    const dry = await cli(['apply', '--dry-run', '--patch']);
    assert.equal(dry.code, 0, JSON.stringify(dry.json));
    const changes = dry.json.changes as Array<{ path: string; action: string; type: string; status: string; from?: string; mode_after?: string }>;
    const by = Object.fromEntries(changes.map((c) => [c.path, c]));
    assert.equal(by['src/app.py']!.action, 'modify');
    assert.equal(by['src/app.py']!.mode_after, '0700');
    assert.equal(by['build.sh']!.action, 'rename');
    assert.equal(by['build.sh']!.from, 'run.sh');
    assert.equal(by['main.py']!.action, 'delete');
    assert.equal(by['src/new/mod.py']!.action, 'add');
    assert.equal(by['src/alias.py']!.type, 'symlink');
    assert.ok(!('src/util.py' in by), 'a file only the project changed is not in the plan');
    assert.match(String(dry.json.patch), /\+print\("hello, agent"\)/);
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("hello")\n', 'a dry run writes nothing');

    const r = await cli(['apply']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("hello, agent")\n');
    assert.equal(fs.statSync(join(proj, 'src', 'app.py')).mode & 0o777, 0o700);
    assert.equal(fs.readFileSync(join(proj, 'src', 'new', 'mod.py'), 'utf8'), 'x = 1\n');
    assert.equal(fs.existsSync(join(proj, 'main.py')), false);
    assert.equal(fs.existsSync(join(proj, 'run.sh')), false);
    assert.equal(fs.statSync(join(proj, 'build.sh')).mode & 0o777, 0o755);
    assert.equal(fs.readlinkSync(join(proj, 'src', 'alias.py')), 'app.py');
    assert.equal(fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8'), 'def f():\n    return 2  # mine\n', "the developer's edit stays");
    assert.equal(fs.readFileSync(join(proj, 'notes.txt'), 'utf8'), 'my notes\n');
    assert.equal(fs.readFileSync(join(proj, 'README.md'), 'utf8'), '# demo\n', 'an excluded file is never touched');
    assert.ok(fs.existsSync(join(proj, 'node_modules', 'left-pad', 'index.js')));
    assert.deepEqual(fs.readdirSync(proj).filter((x) => x.startsWith('.avfs-apply-')), [], 'no staging folder is left');

    // The base moved: nothing is left to apply; newer work alone is carried next time.
    const again = await cli(['apply', '--dry-run']);
    assert.deepEqual(again.json.changes, []);
    await avfs('write', '/src/app.py', 'print("second round")\n');
    const second = await cli(['apply']);
    assert.deepEqual((second.json.changes as Array<{ path: string }>).map((c) => c.path), ['src/app.py']);
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("second round")\n');

    // The base moved twice, the base commit's tree did not: a branch still carries everything since that commit.
    const b = await cli(['apply', '--git-branch', 'agent/after']);
    assert.equal(b.code, 0, JSON.stringify(b.json));
    assert.equal(git(proj, 'show', 'agent/after:src/app.py'), 'print("second round")');
    assert.equal(git(proj, 'ls-tree', 'agent/after', 'main.py'), '', 'the first apply\'s deletion is in the branch');
    assert.equal(git(proj, 'show', 'agent/after:build.sh'), '#!/bin/sh\necho run');
  });

  test('apply PATH carries that change alone; the rest follows in the next apply', async () => {
    const { proj, cli, avfs } = await setup();
    await avfs('write', '/src/app.py', 'print("one")\n');
    await avfs('write', '-p', '/lib/deep/two.py', 'two\n');
    await avfs('rm', '/main.py');
    const one = await cli(['apply', 'lib/deep/two.py']);
    assert.equal(one.code, 0, JSON.stringify(one.json));
    assert.equal(fs.readFileSync(join(proj, 'lib', 'deep', 'two.py'), 'utf8'), 'two\n');
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("hello")\n', 'the other changes wait');
    assert.ok(fs.existsSync(join(proj, 'main.py')));
    const rest = await cli(['apply', '--dry-run']);
    assert.deepEqual((rest.json.changes as Array<{ path: string }>).map((c) => c.path), ['main.py', 'src/app.py'], 'the base moved for that path only');
    assert.equal((await cli(['apply'])).code, 0);
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("one")\n');
    assert.equal(fs.existsSync(join(proj, 'main.py')), false);
  });

  test('a change made through a symlinked directory or a hard link is carried (the journal names another path)', async () => {
    const { proj, cli, avfs } = await setup();
    await avfs('ln', '-s', 'src', '/srclink');
    const first = await cli(['apply']);
    assert.equal(first.code, 0, JSON.stringify(first.json));
    assert.equal(fs.readlinkSync(join(proj, 'srclink')), 'src');
    await avfs('write', '/srclink/app.py', 'print("through the link")\n');
    await avfs('ln', '/src/util.py', '/util-hard.py');
    const second = await cli(['apply']);
    assert.equal(second.code, 0, JSON.stringify(second.json));
    await avfs('write', '/util-hard.py', 'written under the other name\n');
    const third = await cli(['apply']);
    assert.equal(third.code, 0, JSON.stringify(third.json));
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("through the link")\n');
    assert.equal(fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8'), 'written under the other name\n');
    assert.equal(fs.readFileSync(join(proj, 'util-hard.py'), 'utf8'), 'written under the other name\n');
  });

  test('a conflict is a typed error listing every path, and nothing is written', async () => {
    const { proj, cli, avfs } = await setup();
    await avfs('write', '/src/app.py', 'print("agent")\n');
    await avfs('write', '/src/util.py', 'agent\n');
    await avfs('rm', '/main.py');
    await avfs('write', '/fresh.txt', 'agent\n');
    await avfs('write', '/clean.txt', 'only the vault\n');
    fs.writeFileSync(join(proj, 'src', 'app.py'), 'print("developer")\n');
    fs.rmSync(join(proj, 'src', 'util.py'));
    fs.rmSync(join(proj, 'main.py'));
    fs.symlinkSync('README.md', join(proj, 'main.py'));
    fs.writeFileSync(join(proj, 'fresh.txt'), 'developer\n');
    const before = snapshot(proj);
    const r = await cli(['apply']);
    assert.equal(r.json.error, 'Conflict');
    assert.equal(r.code, ERROR_TABLE.Conflict.exit);
    assert.deepEqual(
      (r.json.conflicts as Array<{ path: string; kind: string; reason: string }>).map((c) => [c.path, c.kind, c.reason]),
      [
        ['fresh.txt', 'added', 'added in the project too'],
        ['main.py', 'deleted', 'changed in the project'],
        ['src/app.py', 'content', 'changed in the project'],
        ['src/util.py', 'deleted', 'deleted in the project'],
      ],
    );
    assert.deepEqual(snapshot(proj), before, 'nothing at all was written (clean.txt neither)');
    // The same change on both sides is no conflict.
    fs.writeFileSync(join(proj, 'src', 'app.py'), 'print("agent")\n');
    const dry = (await cli(['apply', '--dry-run'])).json;
    assert.equal((dry.changes as Array<{ path: string; status: string }>).find((c) => c.path === 'src/app.py')!.status, 'same');
  });

  test('symlink, mode, rename and content conflicts are typed; --keep vault|project settles each, then the rest applies', async () => {
    const { proj, home, cli, avfs } = await setup();
    // A symlink both sides repointed, an executable both re-moded, a file the vault renamed and the project edited, a file both edited.
    await avfs('rm', '/main.py');
    await avfs('ln', '-s', 'src/util.py', '/main.py');
    await avfs('chmod', '700', '/run.sh');
    await avfs('mv', '/src/util.py', '/src/helpers.py');
    await avfs('write', '/src/app.py', 'print("agent")\n');
    await avfs('write', '/clean.txt', 'no conflict\n');
    fs.rmSync(join(proj, 'main.py'));
    fs.symlinkSync('README.md', join(proj, 'main.py'));
    fs.chmodSync(join(proj, 'run.sh'), 0o750);
    fs.writeFileSync(join(proj, 'src', 'util.py'), 'def f():\n    return 2  # the developer\n');
    fs.writeFileSync(join(proj, 'src', 'app.py'), 'print("developer")\n');
    const before = snapshot(proj);
    const r = await cli(['apply']);
    assert.equal(r.json.error, 'Conflict');
    assert.deepEqual(
      (r.json.conflicts as Array<{ path: string; kind: string }>).map((c) => [c.path, c.kind]),
      [
        ['main.py', 'symlink'],
        ['run.sh', 'mode'],
        ['src/app.py', 'content'],
        ['src/util.py', 'rename'],
      ],
    );
    assert.deepEqual(snapshot(proj), before, 'nothing was written');
    const plan = await cli(['apply', '--dry-run']);
    const rename = (plan.json.changes as Array<{ path: string; from?: string; action: string; status: string; conflict?: string }>).find((c) => c.action === 'rename')!;
    assert.deepEqual([rename.from, rename.path, rename.status, rename.conflict], ['src/util.py', 'src/helpers.py', 'conflict', 'rename']);
    assert.match((await runCli(['apply', '--dry-run'], { home })).stdout, /!M main\.py {2}\[conflict \(symlink\): changed in the project\]/);

    // The vault's symlink wins: written into the project, alone.
    let k = await cli(['apply', '--keep', 'vault', 'main.py']);
    assert.equal(k.code, 0, JSON.stringify(k.json));
    assert.equal(fs.readlinkSync(join(proj, 'main.py')), 'src/util.py');
    assert.equal(fs.statSync(join(proj, 'run.sh')).mode & 0o777, 0o750, 'the other conflicts are not touched');
    // The project's mode and the project's side of the rename (its edited util.py, no helpers.py) go into the vault.
    k = await cli(['apply', '--keep', 'project', 'run.sh', 'src/helpers.py']);
    assert.equal(k.code, 0, JSON.stringify(k.json));
    assert.equal((await cli(['stat', '/run.sh'])).json.mode, '0750');
    assert.equal(await avfs('cat', '/src/util.py'), 'def f():\n    return 2  # the developer\n');
    assert.equal((await cli(['stat', '/src/helpers.py'])).json.error, 'NotFound', 'the vault\'s rename is undone');
    assert.equal(fs.existsSync(join(proj, 'src', 'helpers.py')), false);
    assert.equal(fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8'), 'def f():\n    return 2  # the developer\n');
    // What is left conflicting blocks a plain apply still; --keep vault with no paths settles every one.
    const left = await cli(['apply']);
    assert.deepEqual((left.json.conflicts as Array<{ path: string }>).map((c) => c.path), ['src/app.py']);
    k = await cli(['apply', '--keep', 'vault']);
    assert.equal(k.code, 0, JSON.stringify(k.json));
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("agent")\n');
    assert.equal(fs.readFileSync(join(proj, 'clean.txt'), 'utf8'), 'no conflict\n');
    assert.deepEqual((await cli(['apply', '--dry-run'])).json.changes, [], 'both sides agree: the base moved');
    const bad = await cli(['apply', '--keep', 'vault', '--dry-run']);
    assert.equal(bad.json.error, 'InvalidInput');
  });

  test('type and directory conflicts are typed too, and --keep settles them: a folder for a file, a removed folder the project added to', async () => {
    const first = await setup();
    // The vault made src/util.py a folder; the project edited the file.
    await first.avfs('rm', '/src/util.py');
    await first.avfs('mkdir', '/src/util.py');
    await first.avfs('write', '/src/util.py/x.py', 'x = 1\n');
    fs.writeFileSync(join(first.proj, 'src', 'util.py'), 'edited\n');
    let r = await first.cli(['apply']);
    assert.deepEqual((r.json.conflicts as Array<{ path: string; kind: string }>).map((c) => [c.path, c.kind]), [['src/util.py', 'type']]);
    r = await first.cli(['apply', '--keep', 'vault', 'src/util.py']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.equal(fs.readFileSync(join(first.proj, 'src', 'util.py', 'x.py'), 'utf8'), 'x = 1\n', "the vault's folder replaced the file");
    assert.deepEqual((await first.cli(['apply', '--dry-run'])).json.changes, []);

    const second = await setup();
    // The vault removed src/; the project added a file in it.
    await second.avfs('rm', '-r', '/src');
    fs.writeFileSync(join(second.proj, 'src', 'new.py'), 'new = 1\n');
    const before = snapshot(second.proj);
    r = await second.cli(['apply']);
    assert.deepEqual((r.json.conflicts as Array<{ path: string; kind: string }>).map((c) => [c.path, c.kind]), [['src', 'directory']]);
    r = await second.cli(['apply', '--keep', 'project', 'src']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.deepEqual(snapshot(second.proj), before, 'the project keeps its folder');
    assert.equal(await second.avfs('cat', '/src/new.py'), 'new = 1\n', 'the vault took the folder as the project has it');
    assert.equal(await second.avfs('cat', '/src/app.py'), 'print("hello")\n');
    assert.deepEqual((await second.cli(['apply', '--dry-run'])).json.changes, [], 'both agree: the base moved');
  });

  test('--git-branch commits onto a new branch from the base commit; HEAD, index and working tree untouched', async () => {
    const { proj, commit, cli, avfs } = await setup();
    fs.writeFileSync(join(proj, 'src', 'util.py'), 'work in progress\n');
    git(proj, 'add', 'src/util.py');
    fs.writeFileSync(join(proj, 'notes.txt'), 'untracked\n');
    await avfs('write', '/src/app.py', 'print("branch")\n');
    await avfs('rm', '/main.py');
    await avfs('chmod', '755', '/src/app.py');
    const head = fs.readFileSync(join(proj, '.git', 'HEAD'), 'utf8');
    const index = fs.readFileSync(join(proj, '.git', 'index'));
    const tree = snapshot(proj);
    const status = git(proj, 'status', '--porcelain');
    const r = await cli(['apply', '--git-branch', 'agent/task', '-m', 'the agent did it']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    const b = r.json.git_branch as { name: string; commit: string; parent: string };
    assert.equal(b.parent, commit);
    assert.equal(git(proj, 'rev-parse', 'agent/task'), b.commit);
    assert.equal(git(proj, 'rev-parse', 'agent/task^'), commit);
    assert.equal(git(proj, 'log', '-1', '--format=%s', 'agent/task'), 'the agent did it');
    assert.equal(git(proj, 'show', 'agent/task:src/app.py'), 'print("branch")');
    assert.match(git(proj, 'ls-tree', 'agent/task', 'src/app.py'), /^100755 /);
    assert.equal(git(proj, 'ls-tree', 'agent/task', 'main.py'), '', 'the deletion is committed');
    assert.equal(git(proj, 'show', 'agent/task:src/util.py'), 'def f():\n    return 1', 'the staged edit is not in the branch');
    assert.equal(git(proj, 'show', 'agent/task:README.md'), '# demo', 'excluded files keep the commit\'s version');
    assert.equal(fs.readFileSync(join(proj, '.git', 'HEAD'), 'utf8'), head);
    assert.ok(fs.readFileSync(join(proj, '.git', 'index')).equals(index), 'the index is untouched');
    assert.deepEqual(snapshot(proj), tree, 'the working tree is untouched');
    assert.equal(git(proj, 'status', '--porcelain'), status);
    const again = await cli(['apply', '--git-branch', 'agent/task']);
    assert.equal(again.json.error, 'AlreadyExists');
  });

  test('checkpoint retention and prune never take the base or the base commit\'s tree: apply, a branch and a second apply work after', async () => {
    const { proj, cli, avfs, commit } = await setup();
    await avfs('write', '/src/app.py', 'print("one")\n');
    assert.equal((await cli(['apply'])).code, 0);
    // Automatic checkpoints for the retention to prune: each restore saves one.
    await avfs('checkpoint', 'save', 'mine');
    for (let i = 0; i < 3; i++) await avfs('checkpoint', 'restore', 'mine');
    const set = await cli(['checkpoint', 'retention', '--keep-last', '1', '--hold-recent', '0']);
    assert.equal(set.code, 0, JSON.stringify(set.json));
    const pruned = await cli(['checkpoint', 'prune', '--gc']);
    assert.equal(pruned.code, 0, JSON.stringify(pruned.json));
    const left = (await cli(['checkpoint', 'list'])).json.checkpoints as Array<{ name: string; auto: boolean }>;
    assert.deepEqual(left.filter((c) => c.auto).length, 1, `the retention pruned all but the last automatic checkpoint: ${JSON.stringify(left)}`);
    await avfs('write', '/src/app.py', 'print("two")\n');
    const second = await cli(['apply']);
    assert.equal(second.code, 0, JSON.stringify(second.json));
    assert.deepEqual((second.json.changes as Array<{ path: string }>).map((c) => c.path), ['src/app.py'], 'the base is still there: only the newer work');
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("two")\n');
    const b = await cli(['apply', '--git-branch', 'agent/kept']);
    assert.equal(b.code, 0, JSON.stringify(b.json));
    assert.equal(git(proj, 'rev-parse', 'agent/kept^'), commit);
    assert.equal(git(proj, 'show', 'agent/kept:src/app.py'), 'print("two")');
  });

  test('--patch-out writes a patch git apply takes', async () => {
    const { proj, home, cli, avfs } = await setup();
    await avfs('write', '/src/app.py', 'print("patched")\n');
    await avfs('write', '-p', '/docs/new.md', 'new doc\n');
    await avfs('rm', '/src/util.py');
    await avfs('chmod', '755', '/src/app.py');
    await avfs('ln', '-s', '../src/app.py', '/docs/link.py');
    const patch = join(proj, '..', 'changes.patch');
    const r = await cli(['apply', '--patch-out', patch]);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.equal(r.json.new_base, null, 'the base does not move');
    // A clean clone of the base commit takes the patch.
    const clone = join(proj, '..', 'clone');
    execFileSync('git', ['clone', '-q', proj, clone]);
    execFileSync('git', ['apply', '--check', patch], { cwd: clone });
    execFileSync('git', ['apply', patch], { cwd: clone });
    assert.equal(fs.readFileSync(join(clone, 'src', 'app.py'), 'utf8'), 'print("patched")\n');
    assert.equal(fs.statSync(join(clone, 'src', 'app.py')).mode & 0o777, 0o755);
    assert.equal(fs.readFileSync(join(clone, 'docs', 'new.md'), 'utf8'), 'new doc\n');
    assert.equal(fs.existsSync(join(clone, 'src', 'util.py')), false);
    assert.equal(fs.readlinkSync(join(clone, 'docs', 'link.py')), '../src/app.py');
    assert.ok(home);
  });

  test('sync brings the project\'s work into the vault; apply then carries only the vault\'s', async () => {
    const { proj, cli, avfs } = await setup();
    await avfs('write', '/src/app.py', 'print("agent")\n');
    fs.writeFileSync(join(proj, 'src', 'util.py'), 'developer\n');
    fs.writeFileSync(join(proj, 'added.txt'), 'developer added\n', { mode: 0o600 });
    fs.rmSync(join(proj, 'main.py'));
    fs.writeFileSync(join(proj, 'debug.log'), 'still ignored\n');
    const s = await cli(['vault', 'sync']);
    assert.equal(s.code, 0, JSON.stringify(s.json));
    assert.deepEqual((s.json.changes as Array<{ path: string }>).map((c) => c.path).sort(), ['added.txt', 'main.py', 'src/util.py']);
    assert.equal(await avfs('cat', '/src/util.py'), 'developer\n');
    assert.equal((await cli(['stat', '/added.txt'])).json.mode, '0600');
    assert.equal((await cli(['stat', '/main.py'])).json.error, 'NotFound');
    assert.equal((await cli(['stat', '/debug.log'])).json.error, 'NotFound', 'ignored files stay out');
    assert.equal(await avfs('cat', '/src/app.py'), 'print("agent")\n', "the vault's own work stays");
    const again = await cli(['vault', 'sync', '--dry-run']);
    assert.deepEqual(again.json.changes, [], 'nothing is left to sync');
    const a = await cli(['apply']);
    assert.deepEqual((a.json.changes as Array<{ path: string }>).map((c) => c.path), ['src/app.py'], "apply carries only the vault's work");
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("agent")\n');
    assert.equal(fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8'), 'developer\n');

    // Both sides change one file: sync refuses it, typed, and writes nothing into the vault.
    await avfs('write', '/src/util.py', 'agent again\n');
    fs.writeFileSync(join(proj, 'src', 'util.py'), 'developer again\n');
    fs.writeFileSync(join(proj, 'other.txt'), 'would sync\n');
    const c = await cli(['vault', 'sync']);
    assert.equal(c.json.error, 'Conflict');
    assert.equal(c.code, ERROR_TABLE.Conflict.exit);
    assert.deepEqual(c.json.conflicts, [{ path: 'src/util.py', kind: 'content', reason: 'changed in the vault' }]);
    assert.equal((await cli(['stat', '/other.txt'])).json.error, 'NotFound', 'nothing was synced');
  });

  // 8: every step made, the commit not yet marked whole (nor the vault's base moved).
  for (const hold of [0, 2, 5, 8]) {
    test(`kill -9 in the middle of an apply (after ${hold} steps) leaves the project as it was`, async () => {
      const { proj, home, cli, avfs } = await setup();
      await avfs('write', '/src/app.py', 'print("agent")\n');
      await avfs('rm', '/src/util.py');
      await avfs('mv', '/run.sh', '/run2.sh');
      await avfs('write', '-p', '/a/b/c.txt', 'deep\n');
      await avfs('chmod', '600', '/.gitignore');
      // Times well away from a millisecond's edge: a file rewritten in place gets its mtime back to
      // the microsecond (what Node's utimes carries), and the snapshot shows it to the millisecond.
      for (const f of ['src/app.py', '.gitignore', 'README.md']) fs.utimesSync(join(proj, f), 1_600_000_000.123456, 1_600_000_000.123456);
      const before = snapshot(proj);
      const planned = await cli(['apply', '--dry-run']);
      const child = spawn(process.execPath, [CLI, 'apply'], { env: { ...process.env, AVFS_HOME: home, AVFS_TEST_APPLY_HOLD: String(hold) }, stdio: ['ignore', 'pipe', 'pipe'] });
      await new Promise<void>((resolve, reject) => {
        let err = '';
        child.stderr.on('data', (d: Buffer) => {
          err += d.toString();
          if (err.includes('holding the apply')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`apply ended (${code}) before the hold: ${err}`)));
      });
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      const staging = fs.readdirSync(proj).filter((x) => x.startsWith('.avfs-apply-'));
      assert.equal(staging.length, 1, 'the interrupted apply left its staging folder');
      // The next apply rolls it back first: the project is as it was, then the apply runs whole.
      const dry = await cli(['apply', '--dry-run']);
      assert.deepEqual(dry.json.recovered, staging);
      assert.deepEqual(snapshot(proj), before, 'rolled back to exactly what it was');
      assert.deepEqual(dry.json.changes, planned.json.changes, 'the base did not move: every change is still to apply');
      const r = await cli(['apply']);
      assert.equal(r.code, 0, JSON.stringify(r.json));
      assert.equal(fs.readFileSync(join(proj, 'a', 'b', 'c.txt'), 'utf8'), 'deep\n');
      assert.equal(fs.existsSync(join(proj, 'src', 'util.py')), false);
    });
  }

  test('a write refused half-way through an apply rolls back what it had rewritten in place: bytes, bits and mtime', async (tc) => {
    const { proj, cli, avfs } = await setup();
    await avfs('write', '/src/app.py', 'print("agent")\n');
    await avfs('chmod', '700', '/src/app.py');
    await avfs('write', '/src/util.py', 'agent\n');
    await avfs('write', '/zz.txt', 'new\n');
    for (const f of ['src/app.py', 'src/util.py']) fs.utimesSync(join(proj, f), 1_600_000_000.123456, 1_600_000_000.123456);
    // An immutable file: even root's write to it fails (EPERM), after app.py was rewritten.
    const locked = join(proj, 'src', 'util.py');
    try {
      execFileSync('chattr', ['+i', locked], { stdio: 'pipe' });
    } catch (e) {
      tc.skip(`chattr +i is not possible here: ${(e as Error).message}`);
      return;
    }
    tc.after(() => execFileSync('chattr', ['-i', locked]));
    const before = snapshot(proj);
    const ino = fs.statSync(join(proj, 'src', 'app.py')).ino;
    const r = await cli(['apply']);
    assert.equal(r.json.error, 'PermissionDenied', JSON.stringify(r.json));
    assert.equal(r.code, ERROR_TABLE.PermissionDenied.exit);
    assert.deepEqual(snapshot(proj), before, 'app.py has its old bytes, bits and mtime; zz.txt is gone');
    assert.equal(fs.statSync(join(proj, 'src', 'app.py')).ino, ino, 'the same file, rewritten in place');
    assert.deepEqual(fs.readdirSync(proj).filter((x) => x.startsWith('.avfs-apply-')), [], 'no staging folder left');
    execFileSync('chattr', ['-i', locked]);
    const again = await cli(['apply']);
    assert.equal(again.code, 0, JSON.stringify(again.json));
    assert.equal(fs.readFileSync(join(proj, 'src', 'util.py'), 'utf8'), 'agent\n');
    assert.equal(fs.statSync(join(proj, 'src', 'app.py')).mode & 0o777, 0o700);
  });

  test('a project file with a second name elsewhere is replaced, not rewritten: the other name keeps its bytes', async () => {
    const { proj, cli, avfs } = await setup();
    fs.linkSync(join(proj, 'src', 'app.py'), join(proj, '..', 'app-elsewhere.py'));
    await avfs('write', '/src/app.py', 'print("agent")\n');
    const r = await cli(['apply']);
    assert.equal(r.code, 0, JSON.stringify(r.json));
    assert.equal(fs.readFileSync(join(proj, 'src', 'app.py'), 'utf8'), 'print("agent")\n');
    assert.equal(fs.readFileSync(join(proj, '..', 'app-elsewhere.py'), 'utf8'), 'print("hello")\n');
  });

  test('paths that would leave the project are refused, with nothing written', async () => {
    const { proj, cli, avfs } = await setup();
    const outside = join(proj, '..', 'outside');
    fs.mkdirSync(outside);
    await avfs('write', '/ok.txt', 'fine\n');
    await avfs('ln', '-s', '/etc/passwd', '/abs-link');
    let before = snapshot(proj);
    let r = await cli(['apply']);
    assert.deepEqual([r.json.error, r.json.path], ['UnsafeSymlink', 'abs-link']);
    assert.deepEqual(snapshot(proj), before);
    await avfs('rm', '/abs-link');
    await avfs('ln', '-s', '../../outside', '/src/up');
    r = await cli(['apply']);
    assert.deepEqual([r.json.error, r.json.path], ['UnsafeSymlink', 'src/up']);
    assert.deepEqual(snapshot(proj), before);
    await avfs('rm', '/src/up');
    // The developer replaced a folder with a symlink out of the project: nothing is written through it.
    fs.rmSync(join(proj, 'src'), { recursive: true });
    fs.symlinkSync(outside, join(proj, 'src'));
    await avfs('write', '/src/app.py', 'through the link?\n');
    before = snapshot(proj);
    r = await cli(['apply']);
    assert.equal(r.json.error, 'UnsafeSymlink');
    assert.deepEqual(fs.readdirSync(outside), [], 'nothing was written outside the project');
    assert.deepEqual(snapshot(proj), before);
  });
});
