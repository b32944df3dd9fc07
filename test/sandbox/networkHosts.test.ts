/** The hosts a sandboxed run may reach, as the policy reads them from the command (host/policy/networkHosts.ts). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { networkHostsOf } from '../../host/policy/networkHosts';
import { GitRemoteConfig, parseGitConfig } from '../../host/policy/gitConfig';
import type { DecisionPart } from '../../host/protocol/policy';

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
