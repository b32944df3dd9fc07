/** The hosts a sandboxed run may reach, as the policy reads them from the command (host/policy/networkHosts.ts). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { networkHostsOf } from '../../host/policy/networkHosts';
import { GitRemoteConfig, parseGitConfig } from '../../host/policy/gitConfig';
import type { DecisionPart } from '../../host/protocol/policy';
import { gitRemotesIn } from '../../host/proxy/gitRemotes';
import { AvfsHome } from '../../host/store/home';
import { importTree } from '../../host/vfs/transfer';
import { Vfs } from '../../host/vfs/vfs';

const part = (argv: string[], networked = true): DecisionPart => ({
  command: argv.join(' '),
  argv,
  action: networked ? 'require_approval' : 'allow',
  categories: networked ? ['networked'] : [],
  reason: '',
  rule: 'test',
});

test('http(s) URLs and package registries name the hosts; parts without network use add none', () => {
  assert.deepEqual(networkHostsOf([part(['curl', '-s', 'https://Example.COM./x?y']), part(['ls', 'http://not.networked/'], false)]), ['example.com']);
  assert.deepEqual(networkHostsOf([part(['git', 'clone', 'https://github.com/org/repo.git'])]), ['github.com']);
  assert.deepEqual(networkHostsOf([part(['npm', 'install', '--registry=https://npm.internal:8443/', 'left-pad'])]), ['npm.internal', 'registry.npmjs.org']);
  assert.deepEqual(networkHostsOf([part(['python3', '-m', 'pip', 'install', 'requests'])]), ['files.pythonhosted.org', 'pypi.org']);
  assert.deepEqual(networkHostsOf([part(['curl', 'http://[::1]:8080/'])]), ['::1']);
});

test('a networked part that names no host the policy can see makes the hosts unknown (null): the run gets the whole network', () => {
  assert.equal(networkHostsOf([part(['curl', 'https://a.example/']), part(['git', 'fetch', 'origin'])]), null);
  assert.equal(networkHostsOf([part(['ssh', 'build-box'])]), null);
  // The proxy carries HTTP(S) only: a remote over ssh, git:// or ftp:// keeps the whole network.
  assert.equal(networkHostsOf([part(['git', 'clone', 'git@github.com:org/repo.git'])]), null);
  assert.equal(networkHostsOf([part(['git', 'clone', 'ssh://git@github.com/org/repo.git'])]), null);
  assert.equal(networkHostsOf([part(['curl', 'https://a.example/', 'ftp://b.example/x'])]), null);
  assert.equal(networkHostsOf([part(['ls'], false)]), null);
});

/** The repository configuration `config` (with the branch checked out) as the lookup networkHostsOf is given. */
const repo = (config: string, branch: string | null = 'main') => () => new GitRemoteConfig(parseGitConfig(config), branch);

test('a git remote the part names (the one git picks when none) is looked up in the repository: its http(s) URL names the host', () => {
  const lookup = repo('[remote "origin"]\n\turl = https://git.example.com/team/app.git\n[remote "mirror"]\n\turl = git@mirror.example:app.git\n');
  assert.deepEqual(networkHostsOf([part(['git', 'push'])], lookup), ['git.example.com']);
  assert.deepEqual(networkHostsOf([part(['git', '-C', 'sub', 'fetch', '--prune', 'origin'])], lookup), ['git.example.com']);
  assert.deepEqual(networkHostsOf([part(['git', 'fetch', '--depth', '1', 'origin', 'main'])], lookup), ['git.example.com'], 'an option\'s value is no remote');
  assert.equal(networkHostsOf([part(['git', 'push', 'mirror'])], lookup), null, 'over ssh: not through the proxy');
  assert.equal(networkHostsOf([part(['git', 'fetch', 'nowhere'])], lookup), null, 'an unknown remote');
  assert.equal(networkHostsOf([part(['git', 'push'])]), null, 'nothing to look it up in');
  assert.equal(networkHostsOf([part(['git', 'push'])], () => null), null, 'no repository');
  assert.deepEqual(networkHostsOf([part(['git', 'push', 'https://other.example/x.git'])], () => null), ['other.example'], 'a URL operand needs no repository');
});

/** insteadOf (two, one longer), pushInsteadOf, and remotes with and without pushurls. */
const REWRITES = [
  '[url "https://mirror.example/"]\n\tinsteadOf = https://github.com/\n\tinsteadOf = gh:',
  '[url "https://longer.example/team/"]\n\tinsteadOf = https://github.com/team/',
  '[url "https://push.example/"]\n\tpushInsteadOf = https://github.com/',
  '[remote "origin"]\n\turl = https://github.com/team/app.git',
  '[remote "fork"]\n\turl = https://github.com/me/app.git\n\tpushurl = https://github.com/me/push.git\n\tpushurl = https://second.example/app.git',
].join('\n');

test('insteadOf, pushInsteadOf and pushurl are followed as git follows them; a push reaches every push URL', () => {
  const config = REWRITES + '\n[remote "two"]\n\turl = https://a.example/x\n\turl = https://b.example/x';
  const lookup = repo(config);
  // Fetching: insteadOf, the longest prefix winning.
  assert.deepEqual(networkHostsOf([part(['git', 'fetch'])], lookup), ['longer.example']);
  // Pushing: pushInsteadOf over insteadOf, for a remote with no pushurl.
  assert.deepEqual(networkHostsOf([part(['git', 'push'])], lookup), ['push.example']);
  // An explicit pushurl: no pushInsteadOf, insteadOf still applies; every one is pushed to.
  assert.deepEqual(networkHostsOf([part(['git', 'push', 'fork'])], lookup), ['mirror.example', 'second.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'fetch', 'fork'])], lookup), ['mirror.example']);
  // Several urls: a fetch uses the first, a push all of them.
  assert.deepEqual(networkHostsOf([part(['git', 'fetch', 'two'])], lookup), ['a.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'push', 'two'])], lookup), ['a.example', 'b.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'fetch', '--all'])], lookup), ['a.example', 'longer.example', 'mirror.example']);
  // A URL operand and an alias: rewritten too (clone of `gh:` names no host without the rewrite).
  assert.deepEqual(networkHostsOf([part(['git', 'clone', 'gh:org/lib'])], lookup), ['mirror.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'ls-remote', 'https://github.com/x/y'])], lookup), ['mirror.example']);
  // A rewrite to ssh is not carried by the proxy: the hosts are unknown.
  assert.equal(networkHostsOf([part(['git', 'fetch'])], repo('[url "git@github.com:"]\n\tinsteadOf = https://github.com/\n[remote "origin"]\n\turl = https://github.com/a/b')), null);
  // The command's own -c options count (after every file).
  assert.deepEqual(networkHostsOf([part(['git', '-c', 'url.https://cli.example/.insteadOf=https://github.com/team/app', 'fetch'])], lookup), ['cli.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'clone', '-c', 'url.https://c.example/.insteadOf=x:', 'x:repo'])], () => null), ['c.example']);
});

test('the remote a bare command goes to: branch.<name>.pushRemote, remote.pushDefault, branch.<name>.remote, origin', () => {
  const remotes = '[remote "origin"]\n\turl = https://o.example/r\n[remote "up"]\n\turl = https://up.example/r\n[remote "pub"]\n\turl = https://pub.example/r\n';
  const branch = '[branch "main"]\n\tremote = up\n';
  assert.deepEqual(networkHostsOf([part(['git', 'fetch'])], repo(remotes + branch)), ['up.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'pull'])], repo(remotes + branch)), ['up.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'push'])], repo(remotes + branch)), ['up.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'push'])], repo(`${remotes + branch}[remote]\n\tpushDefault = pub\n`)), ['pub.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'push'])], repo(`${remotes + branch}[remote]\n\tpushDefault = pub\n[branch "main"]\n\tpushRemote = origin\n`)), ['o.example']);
  assert.deepEqual(networkHostsOf([part(['git', 'fetch'])], repo(remotes + branch, 'other')), ['o.example'], 'another branch: origin');
  assert.deepEqual(networkHostsOf([part(['git', 'fetch'])], repo(remotes + branch, null)), ['o.example'], 'a detached HEAD: origin');
});

test('git config text is read as git reads it: sections, subsections, quotes, comments, escapes, includes', () => {
  const text = [
    '# a comment',
    '[core]\n\tbare = false',
    '[remote "or\\"ig"] url = "https://a.example/x.git" ; trailing comment',
    '[Remote "Up"]\n\tURL = http://b.example/y # another',
    '[remote.old]\n\turl = https://c.example/z',
    '[include]\n\tpath = extra.inc',
    '[url "https://d.example/"]\n\tinsteadOf = \\\n d:',
  ].join('\n');
  const entries = parseGitConfig(text, (p) => (p === 'extra.inc' ? { text: '[remote "inc"]\n\turl = https://inc.example/', include: () => null } : null));
  assert.deepEqual(
    entries.filter((e) => e.key !== 'core.bare').map((e) => [e.key, e.value]),
    [
      ['remote.or"ig.url', 'https://a.example/x.git'],
      ['remote.Up.url', 'http://b.example/y'],
      ['remote.old.url', 'https://c.example/z'],
      ['include.path', 'extra.inc'],
      ['remote.inc.url', 'https://inc.example/'],
      ['url.https://d.example/.insteadof', 'd:'],
    ],
  );
});

test('the resolution agrees with real git: `git remote get-url` and `git ls-remote --get-url` on the same configuration', () => {
  const dir = mkdtempSync(join(tmpdir(), 'avfs-gitcfg-'));
  try {
    const config = REWRITES + '\n[remote "two"]\n\turl = https://a.example/x\n\turl = gh:b/x';
    const git = (...a: string[]) => {
      const r = spawnSync('git', a, { cwd: dir, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim().split('\n');
    };
    git('init', '-q', '.');
    appendFileSync(join(dir, '.git', 'config'), config);
    const ours = new GitRemoteConfig(parseGitConfig(readFileSync(join(dir, '.git', 'config'), 'utf8')), 'main');
    for (const remote of ['origin', 'fork', 'two']) {
      assert.deepEqual(ours.remoteUrls(remote, false), git('remote', 'get-url', remote), `fetch ${remote}`);
      assert.deepEqual(ours.remoteUrls(remote, true), git('remote', 'get-url', '--push', '--all', remote), `push ${remote}`);
    }
    for (const url of ['gh:org/lib', 'https://github.com/team/x', 'https://elsewhere.example/y']) assert.deepEqual(ours.urlsOfOperand(url, false), git('ls-remote', '--get-url', url), url);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('includeIf (gitdir, gitdir/i, onbranch, hasconfig), GIT_CONFIG_* and GIT_CONFIG_PARAMETERS are read as real git reads them', () => {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'avfs-gitif-')));
  const home = join(base, 'home');
  const dir = join(home, 'work', 'proj');
  const avfsHome = new AvfsHome(join(base, 'avfs'));
  try {
    mkdirSync(dir, { recursive: true });
    const put = (f: string, text: string) => writeFileSync(f, text);
    put(join(home, '.gitconfig'), [
      '[includeIf "gitdir:~/work/"]', '\tpath = work.inc',
      '[includeIf "gitdir:elsewhere/"]', '\tpath = other.inc',
      '[includeIf "gitdir/i:~/WORK/PROJ/"]', '\tpath = nocase.inc',
      '[includeIf "gitdir:~/WORK/"]', '\tpath = other.inc',
      '[includeIf "onbranch:feat/"]', '\tpath = feat.inc',
      '[includeIf "hasconfig:remote.*.url:https://github.com/**"]', '\tpath = gh.inc',
      '',
    ].join('\n'));
    put(join(home, 'work.inc'), '[url "https://work.example/"]\n\tinsteadOf = w:\n');
    put(join(home, 'other.inc'), '[url "https://other.example/"]\n\tinsteadOf = w:\n\tinsteadOf = o:\n');
    put(join(home, 'nocase.inc'), '[url "https://nocase.example/"]\n\tinsteadOf = n:\n');
    put(join(home, 'feat.inc'), '[remote "origin"]\n\tpushurl = https://feat.example/p.git\n');
    put(join(home, 'gh.inc'), '[url "https://mirror.example/"]\n\tinsteadOf = https://github.com/\n');
    const env = {
      ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
      GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'url.https://env.example/.insteadOf', GIT_CONFIG_VALUE_0: 'e:',
      GIT_CONFIG_PARAMETERS: "'url.https://param.example/.insteadof'='p:' 'remote.q.url=https://it'\\''s.example/q'",
    };
    const git = (...a: string[]) => {
      const r = spawnSync('git', a, { cwd: dir, encoding: 'utf8', env });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.trim().split('\n');
    };
    spawnSync('git', ['init', '-q', '-b', 'feat/x', '.'], { cwd: dir, env });
    const remotes: Record<string, string> = { origin: 'w:org/app', up: 'https://github.com/a/b', o: 'o:x', n: 'n:y', e: 'e:z', p: 'p:w' };
    for (const [name, url] of Object.entries(remotes)) git('remote', 'add', name, url);
    const vault = avfsHome.create('gitif');
    const vfs = new Vfs(vault);
    try {
      importTree(vfs, join(dir, '.git'), '/.git');
      const ours = (branch: string) => {
        vfs.writeFile('/.git/HEAD', Buffer.from(`ref: refs/heads/${branch}\n`));
        return gitRemotesIn(vfs, '/', [], { root: dir, env, visible: () => true })()!;
      };
      for (const branch of ['feat/x', 'main']) {
        spawnSync('git', ['symbolic-ref', 'HEAD', `refs/heads/${branch}`], { cwd: dir, env });
        const config = ours(branch);
        for (const name of Object.keys(remotes)) {
          assert.deepEqual(config.remoteUrls(name, false), git('remote', 'get-url', name), `fetch ${name} on ${branch}`);
          assert.deepEqual(config.remoteUrls(name, true), git('remote', 'get-url', '--push', '--all', name), `push ${name} on ${branch}`);
        }
        // A remote the environment alone configures (`remote get-url` knows only the repository's own).
        assert.deepEqual(config.remoteUrls('q', false), git('ls-remote', '--get-url', 'q'), `fetch q on ${branch}`);
      }
      // What the includes decided, spelled out (so a git that changes its mind is noticed here too).
      assert.deepEqual(ours('feat/x').remoteUrls('origin', true), ['https://feat.example/p.git']);
      assert.deepEqual(ours('main').remoteUrls('origin', true), ['https://work.example/org/app']);
      assert.deepEqual(ours('main').remoteUrls('up', false), ['https://mirror.example/a/b']);
      assert.deepEqual(ours('main').remoteUrls('n', false), ['https://nocase.example/y']);
      assert.deepEqual(ours('main').remoteUrls('q', false), ["https://it's.example/q"]);
      // A device, a FIFO or a file the run could not read named as a config file is not read (no hang, no huge read); an empty GIT_CONFIG_GLOBAL reads none.
      spawnSync('mkfifo', [join(base, 'fifo')]);
      for (const f of ['/dev/zero', join(base, 'fifo'), '']) {
        const c = gitRemotesIn(vfs, '/', [], { root: dir, env: { ...env, GIT_CONFIG_GLOBAL: f }, visible: () => true })()!;
        assert.deepEqual(c.remoteUrls('origin', false), ['w:org/app'], f);
      }
      const hidden = gitRemotesIn(vfs, '/', [], { root: dir, env, visible: (f) => !f.startsWith(home) })()!;
      assert.deepEqual(hidden.remoteUrls('origin', false), ['w:org/app'], 'a global file the run cannot read is not read');
      // GIT_DIR outside the vault, or a GIT_CONFIG_COUNT git refuses: the hosts cannot be known.
      assert.equal(gitRemotesIn(vfs, '/', [], { root: dir, env: { ...env, GIT_DIR: '/elsewhere/.git' }, visible: () => true })(), null);
      assert.equal(gitRemotesIn(vfs, '/', [], { root: dir, env: { ...env, GIT_CONFIG_COUNT: 'two' }, visible: () => true })(), null);
    } finally {
      vault.close();
    }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
