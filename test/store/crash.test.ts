import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { AvfsHome } from '../../host/store/home';
import { Vfs } from '../../host/vfs/vfs';
import { versionContent } from '../fixtures/versions';
import { ROOT, tempDir } from '../helpers';

const WRITER = join(ROOT, 'test/fixtures/storeWriter.ts');

/** Starts the versions writer and SIGKILLs it after it has committed `atLeast` versions plus a random delay. */
function killMidWrite(home: string, atLeast: number, extraMs: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', WRITER, home, 'victim', 'versions'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let last = 0;
    let armed = false;
    c.stdout.setEncoding('utf8');
    c.stdout.on('data', (d: string) => {
      const nums = d.trim().split('\n').map(Number).filter(Number.isFinite);
      if (nums.length) last = Math.max(last, ...nums);
      if (!armed && last >= atLeast) {
        armed = true;
        setTimeout(() => c.kill('SIGKILL'), extraMs);
      }
    });
    c.on('error', reject);
    c.on('close', () => resolve(last));
  });
}

test('a writer killed with SIGKILL mid-transaction leaves an old or new file, never a torn one', async () => {
  const t = tempDir();
  after(t.cleanup);
  const home = new AvfsHome(t.dir);
  home.create('victim').close();
  for (let round = 0; round < 5; round++) {
    const lastCommitted = await killMidWrite(t.dir, 2, 5 + round * 17);
    const vault = home.open('victim');
    try {
      assert.equal(vault.store.check(), 'ok');
      const data = new Vfs(vault).readFile('/victim');
      const m = /^version-(\d+);/.exec(data.subarray(0, 32).toString());
      assert.ok(m, 'content starts with a version marker');
      const k = Number(m[1]);
      assert.ok(k >= lastCommitted, `version ${k} is at least the last one reported committed (${lastCommitted})`);
      assert.ok(data.equals(versionContent(k)), `the file is exactly version ${k}, not a mix`);
    } finally {
      vault.close();
    }
  }
});
