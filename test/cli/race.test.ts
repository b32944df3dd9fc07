/**
 * Two commands on one vault at once, as a user meets them: a vault deleted (and re-created) while
 * a write is still reading its standard input. The write must not report bytes stored in a file
 * that is gone, nor touch the new vault of the same name.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { CLI, runJson, tempDir } from '../helpers';

describe('CLI commands racing on one vault', () => {
  const t = tempDir();
  after(t.cleanup);
  const json = (args: string[]) => runJson(args, { home: t.dir, env: { AVFS_NO_HOST: '1' } });
  const file = join(t.dir, 'vaults', 'r.avfs');

  /** Whether process `pid` holds the vault file open. */
  const holds = (pid: number): boolean => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(file);
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  };

  test('a write whose vault is deleted (and re-created) before it commits is VaultNotFound; the new vault is untouched', async () => {
    for (const recreate of [false, true]) {
      await json(['vault', 'create', 'r']);
      const child = spawn(process.execPath, [CLI, '--json', '--vault', 'r', 'write', '/late.txt'], {
        env: { ...process.env, AVFS_HOME: t.dir, AVFS_NO_HOST: '1' },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.write('first part\n');
      for (let i = 0; i < 200 && !holds(child.pid!); i++) await sleep(25);
      assert.ok(holds(child.pid!), 'the writer opened the vault');

      assert.equal((await json(['vault', 'delete', '-y', 'r'])).code, 0);
      if (recreate) {
        await json(['vault', 'create', 'r']);
        await json(['--vault', 'r', 'write', '/new.txt', 'kept']);
      }
      child.stdin.end('second part\n');
      const code = await exited;
      const r = JSON.parse(out) as Record<string, unknown>;
      assert.deepEqual([r.error, code], ['VaultNotFound', ERROR_TABLE.VaultNotFound.exit], `recreate=${recreate}: ${out}`);
      if (recreate) {
        assert.equal((await json(['--vault', 'r', 'cat', '/new.txt'])).json.content, 'kept');
        assert.equal((await json(['--vault', 'r', 'stat', '/late.txt'])).json.error, 'NotFound');
        await json(['vault', 'delete', '-y', 'r']);
      }
    }
  });
});
