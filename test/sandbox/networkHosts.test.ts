/** The hosts a sandboxed run may reach, as the policy reads them from the command (host/policy/networkHosts.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { networkHostsOf } from '../../host/policy/networkHosts';
import { remotesOf } from '../../host/proxy/gitRemotes';
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

test('a git remote the part names (origin when none) is looked up in the repository: its http(s) URL names the host', () => {
  const urls: Record<string, string> = { origin: 'https://git.example.com/team/app.git', mirror: 'git@mirror.example:app.git' };
  const lookup = (name: string) => urls[name] ?? null;
  assert.deepEqual(networkHostsOf([part(['git', 'push'])], lookup), ['git.example.com']);
  assert.deepEqual(networkHostsOf([part(['git', '-C', 'sub', 'fetch', '--prune', 'origin'])], lookup), ['git.example.com']);
  assert.equal(networkHostsOf([part(['git', 'push', 'mirror'])], lookup), null, 'over ssh: not through the proxy');
  assert.equal(networkHostsOf([part(['git', 'fetch', 'nowhere'])], lookup), null, 'an unknown remote');
  assert.equal(networkHostsOf([part(['git', 'push'])]), null, 'nothing to look it up in');
});

test('remotes are read from a git config file', () => {
  const config = '[core]\n\tbare = false\n[remote "origin"]\n\turl = https://a.example/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch "main"]\n\tremote = origin\n[remote "up"]\n\turl = "http://b.example/y"\n';
  assert.deepEqual([...remotesOf(config)], [['origin', 'https://a.example/x.git'], ['up', 'http://b.example/y']]);
});
