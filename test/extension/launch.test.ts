import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeExit, hostEnv, runningHostSocket } from '../../extension/client/launch';

test("a refused `host --stdio` names the running host's socket, as JSON or as text", () => {
  const json = JSON.stringify({ error: 'Busy', message: 'a host is already running for /h: pid 7, socket /h/host.sock', pid: 7, socket: '/h/host.sock', home: '/h' });
  assert.equal(runningHostSocket(`some log line\n${json}\n`), '/h/host.sock');
  assert.equal(runningHostSocket(`avfs: error: ${json}`), '/h/host.sock');
  assert.equal(runningHostSocket('Busy: a host is already running for /h: pid 7, socket /tmp/avfs-0/ab12.sock (started 2026-01-01)'), '/tmp/avfs-0/ab12.sock');
  assert.equal(runningHostSocket(JSON.stringify({ error: 'StorageError', message: 'disk full' })), undefined);
  assert.equal(runningHostSocket('TypeError: x is not a function'), undefined);
});

test("the host's environment drops the editor's own runtime variables and sets AVFS_HOME when configured", () => {
  const env = hostEnv({ PATH: '/bin', HOME: '/root', VSCODE_ESM_ENTRYPOINT: 'x', ELECTRON_RUN_AS_NODE: '1', NODE_OPTIONS: '--inspect', AVFS_HOME: '/env-home' }, undefined);
  assert.deepEqual(env, { PATH: '/bin', HOME: '/root', AVFS_HOME: '/env-home' });
  assert.equal(hostEnv({ AVFS_HOME: '/env-home' }, '/setting-home').AVFS_HOME, '/setting-home');
});

test('exits are described by signal or code', () => {
  assert.equal(describeExit(null, 'SIGKILL'), 'killed by SIGKILL');
  assert.equal(describeExit(3, null), 'exit code 3');
});
