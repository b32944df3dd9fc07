/** The hosts a sandboxed run may reach, as the policy reads them from the command (host/policy/networkHosts.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { networkHostsOf } from '../../host/policy/networkHosts';
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
