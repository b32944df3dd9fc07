/**
 * A vault on PostgreSQL shared by several homes (machines): each home is a separate AVFS_HOME that
 * attached the vault, every command a real CLI process, the server a throwaway cluster on a Unix
 * socket (scripts/pgcluster.mjs), stopped mid-run for the failure tests.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ERROR_TABLE } from '../../host/protocol/errors';
import { LIVE } from '../../host/store/backend';
import { AvfsHome } from '../../host/store/home';
import { Vfs } from '../../host/vfs/vfs';
import { bash, forceUnmount, fuseMissing, waitFor } from '../fuse/helpers';
import { ROOT, runCli, runJson, tempDir } from '../helpers';
import { startCluster } from '../../scripts/pgcluster.mjs';

// Homes here share vault names on one server on purpose: no per-home namespace.
delete process.env.AVFS_PG_NAMESPACE;
const ENV = { AVFS_PG_NAMESPACE: '', AVFS_BACKEND: 'sqlite' };
const SECRET = 'hunter2-do-not-print';

const WRITER = join(ROOT, 'test/fixtures/storeWriter.ts');
function runWriter(args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, ['--import', 'tsx', WRITER, ...args], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...ENV } });
    c.on('error', reject);
    c.on('close', (code) => resolve(code ?? -1));
  });
}

describe('a PostgreSQL vault shared by several homes', () => {
  const t = tempDir('avfs-pg-test-');
  let cluster: ReturnType<typeof startCluster>;
  /** The server's URL with a password in it (trust auth ignores it): it must never be printed. */
  let url: string;
  const homeA = join(t.dir, 'a');
  const homeB = join(t.dir, 'b');
  const homeC = join(t.dir, 'c');
  const a = (args: string[]) => runJson(args, { home: homeA, env: ENV });
  const b = (args: string[]) => runJson(args, { home: homeB, env: ENV });
  const c = (args: string[]) => runJson(args, { home: homeC, env: ENV });

  before(async () => {
    cluster = startCluster();
    url = cluster.url.replace('postgres@', `postgres:${SECRET}@`);
    const made = await a(['vault', 'create', 'shared', '--backend', 'postgres', '--url', url]);
    assert.equal(made.code, 0, JSON.stringify(made.json));
    for (const h of [b, c]) {
      const r = await h(['vault', 'attach', 'shared', '--backend', 'postgres', '--url', url]);
      assert.equal(r.code, 0, JSON.stringify(r.json));
      assert.equal(r.json.backend, 'postgres');
    }
  });
  after(() => {
    cluster?.destroy();
    t.cleanup();
  });

  test('two homes writing one vault at once lose nothing', async () => {
    const WRITERS = 4;
    const FILES = 60;
    const codes = await Promise.all(Array.from({ length: WRITERS }, (_, id) => runWriter([id % 2 ? homeB : homeA, 'shared', 'files', String(id), String(FILES)])));
    assert.deepEqual(codes, Array(WRITERS).fill(0));
    for (const home of [homeA, homeB]) {
      const v = new AvfsHome(home).open('shared');
      const vfs = new Vfs(v);
      try {
        for (let id = 0; id < WRITERS; id++) assert.equal(vfs.readdir(`/w${id}`).length, FILES, `writer ${id}'s files, seen from ${home}`);
        const lines = vfs.readFile('/shared.log').toString().trim().split('\n');
        assert.equal(lines.length, WRITERS * FILES, 'every append to the one shared file is there');
        assert.equal(new Set(lines).size, WRITERS * FILES);
        assert.equal(v.store.check(), 'ok');
        assert.equal(vfs.inodes.counters().liveInodes, v.store.dumpTree(LIVE).inodes.length - 1, 'counters agree with the rows');
      } finally {
        v.close();
      }
    }
  });

  test('a checkpoint made on one home restores on another; a fork made on one opens from another', async () => {
    assert.equal((await a(['write', '/doc.txt', 'version one'])).code, 0);
    assert.equal((await a(['checkpoint', 'save', 'v1'])).code, 0);
    assert.equal((await b(['write', '/doc.txt', 'version two'])).code, 0);
    assert.equal((await a(['cat', '/doc.txt'])).json.content, 'version two', 'A sees what B wrote');
    const listed = await b(['checkpoint', 'list']);
    assert.ok((listed.json.checkpoints as Array<{ name: string }>).some((cp) => cp.name === 'v1'), 'B lists the checkpoint A made');
    const restored = await b(['checkpoint', 'restore', 'v1', '--force']);
    assert.equal(restored.code, 0, JSON.stringify(restored.json));
    assert.equal((await a(['cat', '/doc.txt'])).json.content, 'version one', 'A sees the restore B made');

    // A fork made in A, holding a chunk only it references once A's live tree drops it.
    const blob = randomBytes(300_000);
    writeFileSync(join(t.dir, 'blob'), blob);
    assert.equal((await a(['import', join(t.dir, 'blob'), '/blob'])).code, 0);
    const fork = await a(['vault', 'fork', 'shared', 'task']);
    assert.equal(fork.code, 0, JSON.stringify(fork.json));
    assert.equal(fork.json.backend, 'postgres');
    assert.equal((await a(['rm', '/blob'])).code, 0);
    assert.equal((await b(['vault', 'attach', 'task', '--backend', 'postgres', '--url', url, '--no-use'])).code, 0);
    const out = join(t.dir, 'out-b');
    assert.equal((await b(['export', '/blob', out, '--vault', 'task'])).code, 0);
    assert.deepEqual(readFileSync(out), blob, 'B reads the fork through its parent');

    // GC of the parent from a home that never heard of the fork keeps the fork's chunks.
    const gc = await c(['gc']);
    assert.equal(gc.code, 0, JSON.stringify(gc.json));
    const out2 = join(t.dir, 'out-b2');
    assert.equal((await b(['export', '/blob', out2, '--vault', 'task'])).code, 0);
    assert.deepEqual(readFileSync(out2), blob);
    // Deleting the parent while a fork on the server reads it is refused, from any home.
    assert.equal((await c(['vault', 'delete', 'shared', '--yes'])).json.error, 'VaultInUse');
  });

  test('vault list shows where each vault lives; the password is never printed or journaled', async () => {
    assert.equal((await b(['vault', 'create', 'local'])).code, 0);
    assert.equal((await b(['vault', 'use', 'shared'])).code, 0);
    const list = await b(['vault', 'list']);
    const byName = new Map((list.json.vaults as Array<{ name: string; backend: string; location: string }>).map((v) => [v.name, v]));
    assert.equal(byName.get('shared')?.backend, 'postgres');
    assert.equal(byName.get('shared')?.location, url.replace(SECRET, '***'));
    assert.equal(byName.get('local')?.backend, 'sqlite');
    assert.equal(byName.get('local')?.location, join(homeB, 'vaults', 'local.avfs'));
    const human = await runCli(['vault', 'list'], { home: homeB, env: ENV });
    assert.match(human.stdout, /postgres\s+postgresql:\/\/postgres:\*\*\*@/);
    // The link file holds the URL as given, readable by its owner only.
    assert.equal(statSync(join(homeB, 'vaults', 'shared.avfs')).mode & 0o777, 0o600);
    const outputs = [
      JSON.stringify(list.json),
      human.stdout,
      JSON.stringify((await b(['vault', 'info', 'shared'])).json),
      JSON.stringify((await b(['checkpoint', 'audit'])).json),
      (await runCli(['vault', 'info', 'shared'], { home: homeB, env: ENV })).stdout,
    ];
    for (const o of outputs) assert.ok(!o.includes(SECRET), `no password in: ${o.slice(0, 200)}`);
  });

  test('a password from PGPASSWORD or ~/.pgpass, as libpq reads them', async () => {
    cluster.psql("CREATE ROLE avfs_pw LOGIN PASSWORD 'pw-from-env'; GRANT ALL ON DATABASE avfs TO avfs_pw; GRANT ALL ON SCHEMA avfs TO avfs_pw; GRANT ALL ON ALL TABLES IN SCHEMA avfs TO avfs_pw; GRANT ALL ON ALL SEQUENCES IN SCHEMA avfs TO avfs_pw");
    const hba = join(cluster.dir, 'data', 'pg_hba.conf');
    writeFileSync(hba, `local all avfs_pw scram-sha-256\n${readFileSync(hba, 'utf8')}`);
    cluster.psql('SELECT pg_reload_conf()');
    const pwUrl = cluster.url.replace('postgres@', 'avfs_pw@');
    const home = join(t.dir, 'pw');
    const userHome = join(t.dir, 'pw-user');
    mkdirSync(userHome);
    const run = (args: string[], env: Record<string, string>) => runJson(args, { home, env: { ...ENV, HOME: userHome, ...env } });
    const refused = await run(['vault', 'attach', 'shared', '--backend', 'postgres', '--url', pwUrl], { PGPASSWORD: '' });
    assert.equal(refused.json.error, 'StorageError', JSON.stringify(refused.json));
    assert.match(String(refused.json.message), /password/);
    const viaEnv = await run(['vault', 'attach', 'shared', '--backend', 'postgres', '--url', pwUrl], { PGPASSWORD: 'pw-from-env' });
    assert.equal(viaEnv.code, 0, JSON.stringify(viaEnv.json));
    assert.equal((await run(['cat', '/doc.txt'], { PGPASSWORD: 'pw-from-env' })).json.content, 'version one');
    writeFileSync(join(userHome, '.pgpass'), `*:*:avfs:avfs_pw:pw-from-env\n`, { mode: 0o600 });
    assert.equal((await run(['cat', '/doc.txt'], { PGPASSWORD: '' })).json.content, 'version one', 'from ~/.pgpass');
  });

  test('a mount on one home runs git while another home reads the vault', { skip: fuseMissing }, async () => {
    const mnt = join(t.dir, 'mnt');
    mkdirSync(mnt);
    const m = await a(['mount', 'shared', mnt]);
    assert.equal(m.code, 0, JSON.stringify(m.json));
    try {
      const work = join(mnt, 'repo');
      const git = bash(
        `mkdir -p ${work} && cd ${work} && git init -q -b main . && git config user.email t@example.com && git config user.name T &&
         for i in $(seq 15); do echo "line $i" > f$i.txt; git add f$i.txt; git commit -qm "c$i"; done && git fsck --strict && git log --oneline | wc -l`,
        mnt,
        { GIT_CONFIG_NOSYSTEM: '1', HOME: t.dir },
      );
      // Meanwhile B reads the same vault through the server, again and again.
      let reads = 0;
      let done = false;
      const reader = (async () => {
        while (!done) {
          const r = await b(['ls', '/']);
          assert.equal(r.code, 0, JSON.stringify(r.json));
          reads++;
        }
      })();
      const commits = await git.finally(() => (done = true));
      await reader;
      assert.equal(commits.trim(), '15');
      assert.ok(reads > 0);
      const seen = await b(['cat', '/repo/f15.txt']);
      assert.equal(seen.json.content, 'line 15\n', 'B reads what git wrote through A\'s mount');
      const branch = await b(['cat', '/repo/.git/HEAD']);
      assert.equal(branch.json.content, 'ref: refs/heads/main\n');
    } finally {
      await forceUnmount(homeA, mnt);
    }
  });

  test('a server stopped mid-run: StorageError on that vault only, nothing half-written, back when the server is', async () => {
    const v = new AvfsHome(homeA).open('shared');
    const before = v.store.dumpTree(LIVE).inodes.length;
    v.close();
    // A writer in flight when the server goes down.
    const writer = runWriter([homeA, 'shared', 'files', '9', '100000']);
    const started = await waitFor(async () => {
      const r = await b(['ls', '/w9', '--vault', 'shared']);
      return r.code === 0 && (r.json.entries as unknown[]).length >= 3;
    }, 60_000, 100);
    assert.ok(started, 'the writer commits files');
    cluster.stop();
    const code = await writer;
    assert.notEqual(code, 0, 'the writer fails once the server is gone');

    const down = await b(['cat', '/doc.txt', '--vault', 'shared']);
    assert.equal(down.json.error, 'StorageError');
    assert.equal(down.code, ERROR_TABLE.StorageError.exit);
    assert.match(String(down.json.message), /PostgreSQL at postgresql:\/\/postgres:\*\*\*@/);
    assert.ok(!JSON.stringify(down.json).includes(SECRET));
    assert.ok(!down.stderr.includes(SECRET));
    const write = await b(['write', '/while-down.txt', 'x', '--vault', 'shared']);
    assert.equal(write.json.error, 'StorageError');
    // Other vaults keep working; the list flags the unreachable one with the reason.
    assert.equal((await b(['write', '/ok.txt', 'fine', '--vault', 'local'])).code, 0);
    const list = await b(['vault', 'list']);
    assert.equal(list.code, 0);
    const shared = (list.json.vaults as Array<{ name: string; status: string; reason?: string }>).find((x) => x.name === 'shared')!;
    assert.equal(shared.status, 'unreadable');
    assert.ok(!String(shared.reason).includes(SECRET));

    cluster.start();
    assert.equal((await b(['cat', '/doc.txt', '--vault', 'shared'])).json.content, 'version one', 'back with the server');
    assert.equal((await b(['stat', '/while-down.txt', '--vault', 'shared'])).json.error, 'NotFound', 'the refused write left nothing');
    const after = new AvfsHome(homeA).open('shared');
    const vfs = new Vfs(after);
    try {
      assert.equal(after.store.check(), 'ok');
      const rows = after.store.dumpTree(LIVE).inodes.length;
      assert.ok(rows > before, 'the writer committed some files before the server stopped');
      assert.equal(vfs.inodes.counters().liveInodes, rows - 1, 'counters agree with the rows: no half-written transaction');
      const names = vfs.readdir('/w9').map((e) => e.name);
      const log = vfs.readFile('/shared.log').toString().trim().split('\n').filter((l) => l.startsWith('w9:'));
      // A file and its log line are two transactions: the server may have stopped between them.
      assert.ok(names.length - log.length === 0 || names.length - log.length === 1, `${names.length} files, ${log.length} log lines`);
    } finally {
      after.close();
    }
  });
});
