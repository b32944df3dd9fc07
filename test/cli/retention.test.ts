/**
 * Checkpoint retention through the real CLI: real `proxy exec` runs on real mounts take the
 * automatic checkpoints, the retention prunes them, gc gives the bytes back, and a run's restore
 * point is held while the run is pending (a second CLI process prunes meanwhile) or recent.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { AvfsHome } from '../../host/store/home';
import { sh } from '../fuse/helpers';
import { CLI, runCli, runJson, tempDir } from '../helpers';
import { backendOfFile } from '../../host/store/engine';

interface Cp {
  name: string;
  auto: boolean;
  alone_size: number | null;
}

function freshHome() {
  const t = tempDir('avfs-retention-');
  after(async () => {
    await sh('bash', ['-c', `for m in $(grep -o "${t.dir}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    t.cleanup();
  });
  const json = (args: string[]) => runJson(args, { home: t.dir });
  const cli = (args: string[]) => runCli(args, { home: t.dir });
  const list = async () => ((await json(['checkpoint', 'list'])).json.checkpoints as Cp[]);
  /** One proxy exec that takes a checkpoint; its envelope's restore point. */
  const run = async (script: string): Promise<string> => {
    const r = await json(['proxy', 'exec', '--checkpoint', 'always', '--', 'sh', '-c', script]);
    const result = r.json.result as { checkpoint: string | null; state: string; stderr: string };
    assert.equal(result.state, 'completed', result.stderr);
    assert.ok(result.checkpoint);
    return result.checkpoint;
  };
  return { dir: t.dir, json, cli, list, run };
}

describe('checkpoint retention', () => {
  test('N automatic runs leave the last K checkpoints, named ones stay, and gc gives back the bytes the pruned ones held', async () => {
    const h = freshHome();
    await h.json(['vault', 'create', 'work']);
    await h.json(['write', '/keep.txt', 'named\n']);
    await h.json(['checkpoint', 'save', 'green']);
    const set = await h.json(['checkpoint', 'retention', '--keep-last', '2', '--hold-recent', '0']);
    assert.deepEqual([set.code, set.json.keep_last, set.json.max_age, set.json.hold_recent_ms], [0, 2, null, 0]);

    // Each run replaces /big.bin with 256 KiB nobody else has: each restore point holds the previous one alone.
    const points: string[] = [];
    for (let i = 0; i < 5; i++) points.push(await h.run('head -c 262144 /dev/urandom > big.bin'));
    const cps = await h.list();
    assert.deepEqual(
      cps.map((c) => c.name),
      ['green', ...points.slice(3)],
      'the named checkpoint and the last 2 automatic ones are left',
    );
    // The 4th run's restore point has the 3rd run's big.bin, the 5th's the 4th's: 256 KiB each, alone.
    assert.deepEqual(cps.map((c) => c.alone_size), [0, 262144, 262144]);
    await h.json(['write', '/big.bin', 'small now']);
    assert.deepEqual((await h.list()).map((c) => c.alone_size), [0, 262144, 262144], "the 5th run's big.bin was never in a checkpoint");
    const human = (await h.cli(['checkpoint', 'list'])).stdout;
    assert.match(human, new RegExp(`^${points[3]} .* auto .* 256\\.0 KiB `, 'm'));

    const before = (await h.json(['stats'])).json;
    assert.ok(before.content_chunks as number > 0);
    const file = new AvfsHome(h.dir).vaultFile('work');
    const sizeBefore = statSync(file).size;
    const gc = await h.json(['gc']);
    assert.equal(gc.code, 0);
    // The pruned 1st, 2nd and 3rd restore points held the 1st and 2nd big.bin (the 3rd is the 4th's),
    // and the 5th big.bin, overwritten above, was in no checkpoint.
    assert.equal(gc.json.bytes_freed, 3 * 262144);
    const afterStats = (await h.json(['stats'])).json;
    assert.ok((afterStats.content_chunks as number) < (before.content_chunks as number), `chunks ${before.content_chunks} → ${afterStats.content_chunks}`);
    // (A vault on PostgreSQL has no file of its own here: its link file stays the same size.)
    if (backendOfFile(file) !== 'postgres') assert.ok(statSync(file).size < sizeBefore, 'the vault file shrinks');
    assert.equal((await h.cli(['cat', '/keep.txt'])).stdout, 'named\n');
    assert.equal((await h.json(['checkpoint', 'restore', 'green'])).code, 0, 'the named checkpoint restores');
  });

  test('prune --dry-run says what goes and what it gives back; prune --gc deletes and reclaims it', async () => {
    const h = freshHome();
    await h.json(['vault', 'create', 'work']);
    await h.json(['checkpoint', 'retention', '--off']);
    const points: string[] = [];
    for (let i = 0; i < 4; i++) points.push(await h.run(`head -c 131072 /dev/urandom > f.bin`));
    assert.equal((await h.list()).length, 4, 'off: every automatic checkpoint is kept');
    assert.deepEqual([(await h.json(['checkpoint', 'prune', '--dry-run'])).json.pruned], [[]], 'off prunes nothing');

    // Setting the retention deletes nothing; the next prune applies it.
    await h.json(['checkpoint', 'retention', '--max-age', '1h', '--hold-recent', '0']);
    assert.equal((await h.json(['checkpoint', 'prune'])).json.kept, 4, 'all are younger than an hour');
    await h.json(['checkpoint', 'retention', '--keep-last', '1', '--max-age', 'none', '--hold-recent', '10m']);
    assert.equal((await h.list()).length, 4);
    // Three are past the retention; 10 minutes hold them: their runs just ended.
    const held = await h.json(['checkpoint', 'prune', '--dry-run']);
    assert.deepEqual((held.json.held as Array<{ name: string }>).map((x) => x.name), points.slice(0, 3));
    assert.match((held.json.held as Array<{ reason: string }>)[0]!.reason, /ended less than 10m ago/);

    await h.json(['checkpoint', 'retention', '--hold-recent', '0']);
    const dry = await h.json(['checkpoint', 'prune', '--dry-run', '--gc']);
    assert.deepEqual((dry.json.pruned as Cp[]).map((c) => c.name), points.slice(0, 3));
    // The 2nd and 3rd hold the 1st and 2nd f.bin; the 4th the 3rd's, which stays.
    assert.equal(dry.json.freed_size, 2 * 131072);
    assert.deepEqual((dry.json.pruned as Cp[]).map((c) => c.alone_size), [0, 131072, 131072]);
    assert.equal((await h.list()).length, 4, 'a dry run deletes nothing');
    const human = (await h.cli(['checkpoint', 'prune', '--dry-run'])).stdout;
    assert.match(human, new RegExp(`^would delete ${points[1]} .*alone 128\\.0 KiB\\)$`, 'm'));
    assert.match(human, /^would prune 3 automatic checkpoints, kept 1, held 0; they held 256\.0 KiB alone$/m);

    const done = await h.json(['checkpoint', 'prune', '--gc']);
    assert.equal(done.code, 0);
    assert.deepEqual((done.json.pruned as Cp[]).map((c) => c.name), points.slice(0, 3));
    assert.equal((done.json.gc as { bytes_freed: number }).bytes_freed, 2 * 131072, 'gc gives back what the dry run said');
    assert.deepEqual((await h.list()).map((c) => c.name), [points[3]]);
  });

  test('a pending run keeps its restore point while other runs and a prune go on; a recent one is held after it ends', async () => {
    const h = freshHome();
    await h.json(['vault', 'create', 'work']);
    await h.json(['checkpoint', 'retention', '--keep-last', '1', '--hold-recent', '0']);
    await h.json(['write', '/state.txt', 'before\n']);
    const slow = spawn(process.execPath, [CLI, '--json', 'proxy', 'exec', '--checkpoint', 'always', '--', 'sh', '-c', 'i=0; while [ ! -e go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done; echo after > state.txt'], {
      env: { ...process.env, AVFS_HOME: h.dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    slow.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const ended = new Promise<number>((resolve) => slow.on('close', (code) => resolve(code ?? -1)));
    let pending: string | undefined;
    for (let i = 0; i < 300 && !pending; i++) {
      pending = (await h.list()).find((c) => c.auto)?.name;
      if (!pending) await new Promise((r) => setTimeout(r, 100));
    }
    assert.ok(pending, 'the slow run took its checkpoint');
    // Other runs take theirs (each applies the retention), and a prune runs, while the slow one waits.
    const other = [await h.run('echo 1 > a.txt'), await h.run('echo 2 > a.txt')];
    const dry = await h.json(['checkpoint', 'prune', '--dry-run']);
    const holds = dry.json.held as Array<{ name: string; reason: string }>;
    assert.deepEqual(holds.map((x) => x.name), [pending]);
    assert.match(holds[0]!.reason, /has not ended/);
    await h.json(['checkpoint', 'prune']);
    assert.deepEqual((await h.list()).map((c) => c.name), [pending, other[1]]);

    // Recent: with the hold at an hour, the slow run's point outlives its end.
    await h.json(['checkpoint', 'retention', '--hold-recent', '1h']);
    await h.cli(['write', '/go', '']);
    assert.equal(await ended, 0, out);
    const env = JSON.parse(out) as { result: { checkpoint: string } };
    assert.equal(env.result.checkpoint, pending);
    await h.run('echo 3 > a.txt');
    const names = (await h.list()).map((c) => c.name);
    assert.ok(names.includes(pending), `the run that just ended keeps its restore point: ${names.join(', ')}`);
    assert.equal((await h.cli(['cat', '/state.txt'])).stdout, 'after\n');
    assert.equal((await h.json(['checkpoint', 'restore', pending])).code, 0, 'the envelope\'s restore point restores');
    assert.equal((await h.cli(['cat', '/state.txt'])).stdout, 'before\n');
    // Once the hold is gone the next prune takes it (the restore just now held it, and its undo point, for an hour).
    await h.json(['checkpoint', 'retention', '--hold-recent', '0']);
    await h.json(['checkpoint', 'prune']);
    assert.ok(!(await h.list()).some((c) => c.name === pending));
  });

  test('bad retention values are typed errors and change nothing', async () => {
    const h = freshHome();
    await h.json(['vault', 'create', 'work']);
    await h.json(['checkpoint', 'retention', '--keep-last', '7']);
    for (const args of [
      ['--keep-last', '0'],
      ['--keep-last', '-3'],
      ['--keep-last', 'many'],
      ['--keep-last', '2000000'],
      ['--max-age', '7'],
      ['--max-age', '0d'],
      ['--max-age', '1y'],
      ['--max-age', '30s'],
      ['--hold-recent', '-1m'],
      ['--off', '--keep-last', '3'],
    ]) {
      const r = await h.json(['checkpoint', 'retention', ...args]);
      assert.deepEqual([r.json.error, r.code], ['InvalidInput', ERROR_TABLE.InvalidInput.exit], args.join(' '));
    }
    const shown = await h.json(['checkpoint', 'retention']);
    assert.deepEqual([shown.json.keep_last, shown.json.max_age, shown.json.hold_recent], [7, null, '10m']);
    assert.match((await h.cli(['checkpoint', 'retention'])).stdout, /^retention: keeps the last 7; a run holds its restore point until 10m after it ended$/m);
  });

  test('a restore point of a pruned run is gone with a typed error; internal and base checkpoints are never pruned', async () => {
    const h = freshHome();
    await h.json(['vault', 'create', 'work']);
    await h.json(['checkpoint', 'retention', '--keep-last', '1', '--hold-recent', '0']);
    const first = await h.run('echo 1 > a.txt');
    // A base checkpoint the vault's settings name (as a vault made from a project has), and an internal one.
    const home = new AvfsHome(h.dir);
    const v = home.open('work');
    const base = v.checkpoints.save({ auto: true, name: 'base-of-apply' });
    v.setMeta('base.checkpoint', base.name);
    const internal = v.checkpoints.save({ internal: true, prefix: 'base' });
    v.close();
    await h.run('echo 2 > a.txt');
    await h.run('echo 3 > a.txt');
    const names = (await h.list()).map((c) => c.name);
    assert.ok(names.includes('base-of-apply'), names.join(', '));
    assert.ok(!names.includes(first));
    const again = home.open('work');
    assert.ok(again.checkpoints.internal().some((c) => c.name === internal.name));
    again.close();
    const gone = await h.json(['checkpoint', 'restore', first]);
    assert.deepEqual([gone.json.error, gone.code], ['NotFound', ERROR_TABLE.NotFound.exit]);
  });
});
