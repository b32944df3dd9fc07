/**
 * Standard input that gives no data to read (a directory, a file opened write-only) is bad input:
 * `avfs write PATH` refuses it with a typed error and leaves the target as it was, rather than
 * replacing it with nothing or failing as a bug.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { CLI, runJson, tempDir } from '../helpers';

describe('CLI standard input', () => {
  const t = tempDir();
  after(t.cleanup);
  const json = (args: string[]) => runJson(args, { home: t.dir });

  before(async () => {
    await json(['vault', 'create', 'in']);
    await json(['write', '/keep.txt', 'precious']);
  });

  /** `avfs --json write …` with this fd as its standard input. */
  function writeWithStdin(fd: number, ...args: string[]): { code: number | null; json: Record<string, unknown> } {
    const r = spawnSync(process.execPath, [CLI, '--json', 'write', ...args], {
      env: { ...process.env, AVFS_HOME: t.dir, AVFS_NO_HOST: '1' },
      stdio: [fd, 'pipe', 'pipe'],
      encoding: 'utf8',
    });
    return { code: r.status, json: JSON.parse(r.stdout) as Record<string, unknown> };
  }

  test('a directory or a write-only file on standard input is InvalidInput, and the file keeps its bytes', async () => {
    const inputs = [() => openSync(t.dir, 'r'), () => openSync(join(t.dir, 'write-only'), 'w')];
    for (const open of inputs) {
      for (const args of [['/keep.txt'], ['-a', '/keep.txt'], ['/new.txt']]) {
        const fd = open();
        try {
          const r = writeWithStdin(fd, ...args);
          assert.deepEqual([r.json.error, r.code], ['InvalidInput', ERROR_TABLE.InvalidInput.exit], `${args.join(' ')}: ${JSON.stringify(r.json)}`);
          assert.equal(r.json.field, 'stdin');
        } finally {
          closeSync(fd);
        }
      }
    }
    assert.equal((await json(['cat', '/keep.txt'])).json.content, 'precious');
    assert.equal((await json(['stat', '/new.txt'])).json.error, 'NotFound');
  });
});
