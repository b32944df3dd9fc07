/** What the CLI prints and how it ends: a reader that leaves early, help as JSON, one exit code per error kind. */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ERROR_TABLE, type ErrorKind } from '../../host/protocol/errors';
import { CliHelp } from '../../host/protocol/help';
import { CLI, runCli, runJson, tempDir } from '../helpers';

describe('CLI output', () => {
  const t = tempDir();
  after(t.cleanup);
  const home = join(t.dir, 'home');
  const json = (args: string[], input?: string | Buffer) => runJson(args, { home, ...(input !== undefined ? { input } : {}) });

  before(async () => {
    await json(['vault', 'create', 'o']);
    await json(['write', '/big'], Buffer.alloc(5 * 1024 * 1024, 0x61));
    const many = join(t.dir, 'many');
    fs.mkdirSync(many);
    // About 450 KB of names: far more than a pipe holds, so the CLI is still writing when the reader leaves.
    for (let i = 0; i < 3000; i++) fs.writeFileSync(join(many, `${String(i).padStart(4, '0')}-${'a-long-name-'.repeat(12)}.txt`), '');
    await json(['import', many, '/many']);
  });

  /** Runs the CLI, reads a few bytes of its stdout, then closes the pipe, as `| head -c 10` does. */
  function readFewAndClose(args: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; got: number }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, AVFS_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
      let got = 0;
      child.stdout.once('data', (d: Buffer) => {
        got = d.length;
        child.stdout.destroy();
      });
      const err: Buffer[] = [];
      child.stderr.on('data', (d: Buffer) => err.push(d));
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, stderr: Buffer.concat(err).toString('utf8'), got }));
    });
  }

  test('a reader that stops early ends the CLI quietly, as coreutils end (SIGPIPE)', async () => {
    for (const args of [['cat', '/big'], ['--json', 'cat', '/big'], ['ls', '/many'], ['--json', 'ls', '/many'], ['tree', '/many'], ['--json', 'tree', '/many']]) {
      const r = await readFewAndClose(args);
      assert.ok(r.got > 0, `${args.join(' ')} printed something first`);
      assert.equal(r.stderr, '', `${args.join(' ')} printed nothing on stderr`);
      assert.ok(r.signal === 'SIGPIPE' || r.code === 141, `${args.join(' ')} ended by SIGPIPE (code ${r.code}, signal ${r.signal})`);
    }
  });

  test('with --json, help and a missing command are one JSON document', async () => {
    const cases: Array<[string[], string]> = [
      [[], 'avfs'],
      [['help'], 'avfs'],
      [['--help'], 'avfs'],
      [['-h'], 'avfs'],
      [['vault'], 'avfs vault'],
      [['help', 'vault'], 'avfs vault'],
      [['vault', '--help'], 'avfs vault'],
      [['checkpoint'], 'avfs checkpoint'],
      [['vault', 'create', '--help'], 'avfs vault create'],
    ];
    for (const [args, command] of cases) {
      const r = await json(args);
      assert.equal(r.code, 0, args.join(' '));
      const help = CliHelp.parse(r.json);
      assert.equal(help.command, command, args.join(' '));
    }
    const root = CliHelp.parse((await json([])).json);
    assert.ok(root.commands.some((c) => c.name === 'vault') && root.options.some((o) => o.flags === '--json'));
    const create = CliHelp.parse((await json(['vault', 'create', '--help'])).json);
    assert.deepEqual(create.arguments.map((a) => [a.name, a.required]), [['name', true]]);
    assert.ok(create.examples.length > 0);
    for (const args of [['bogus'], ['vault', 'bogus'], ['ls', '--bogus']]) {
      const r = await json(args);
      assert.deepEqual([r.json.error, r.code], ['InvalidInput', ERROR_TABLE.InvalidInput.exit], args.join(' '));
    }
    const human = await runCli(['vault', '--help'], { home });
    assert.match(human.stdout, /^Usage: avfs vault/, 'without --json help stays text');
  });

  test('kinds that used to share an exit code are told apart by it', async () => {
    await json(['mkdir', '/full']);
    await json(['write', '/full/x', 'x']);
    await json(['ln', '-s', '/loop-b', '/loop-a']);
    await json(['ln', '-s', '/loop-a', '/loop-b']);
    const cases: Array<[string[], ErrorKind]> = [
      [['rmdir', '/full'], 'NotEmpty'],
      [['cat', '/loop-a'], 'SymlinkLoop'],
      [['write', '/../up', 'z'], 'InvalidPath'],
      [['write', '/' + 'n'.repeat(300), 'z'], 'NameTooLong'],
      [['mkdir', '/m', '--mode', '999'], 'InvalidInput'],
    ];
    const codes = new Set<number>();
    for (const [args, kind] of cases) {
      const r = await json(args);
      assert.deepEqual([r.json.error, r.code], [kind, ERROR_TABLE[kind].exit], args.join(' '));
      codes.add(r.code);
    }
    assert.equal(codes.size, cases.length);
  });
});
