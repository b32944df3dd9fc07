/**
 * The host follows a vault that another machine changes: two homes attached to one vault on a
 * PostgreSQL server (a throwaway cluster), the host running on home A, writes made by the CLI of
 * home B. The host hears of them by LISTEN/NOTIFY (nothing touches A's files) and sends
 * `vault/changed` with what B did, also after the server restarted under it.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { VaultChangeNotice } from '../../host/daemon/events';
import { startCluster } from '../../scripts/pgcluster.mjs';
import { runJson, tempDir } from '../helpers';
import type { HostConnection } from '../../host/daemon/client';
import { waitFor } from '../fuse/helpers';
import { client, type HostProcess, startHost } from './helpers';

delete process.env.AVFS_PG_NAMESPACE; // the two homes name one vault on the server
const t = tempDir('avfs-pg-changes-');
const homeA = join(t.dir, 'a');
const homeB = join(t.dir, 'b');
let cluster: ReturnType<typeof startCluster>;
let host: HostProcess;
let conn: HostConnection;
const notices: VaultChangeNotice[] = [];

before(async () => {
  cluster = startCluster();
  assert.equal((await runJson(['vault', 'create', 'shared', '--backend', 'postgres', '--url', cluster.url], { home: homeA })).code, 0);
  assert.equal((await runJson(['vault', 'attach', 'shared', '--backend', 'postgres', '--url', cluster.url], { home: homeB })).code, 0);
  host = await startHost(homeA);
  conn = await client(homeA, { name: 'tree', setup: (c) => c.onNotification('vault/changed', (n: VaultChangeNotice) => void notices.push(n)) });
});
after(async () => {
  conn?.close();
  await host?.stop();
  cluster?.destroy();
  t.cleanup();
});

const told = (path: string) => notices.some((n) => n.vault === 'shared' && n.kind === 'files' && n.changes.some((c) => c.path === path));

test("another home's writes reach this home's host as vault/changed, with what was done", async () => {
  assert.equal((await runJson(['write', '/from-b.txt', 'hello'], { home: homeB })).code, 0);
  assert.ok(await waitFor(() => told('/from-b.txt'), 20_000), `told: ${JSON.stringify(notices)}`);
  const n = notices.find((x) => x.changes.some((c) => c.path === '/from-b.txt'))!;
  assert.equal(n.changes.find((c) => c.path === '/from-b.txt')!.surface, 'cli');
  // What the host's own file system calls read is the other home's write.
  assert.equal(((await conn.call('fs/readText', { vault: 'shared', path: '/from-b.txt' })) as { content: string }).content, 'hello');
});

test('after the server restarts, the host listens again and tells what was written meanwhile', async () => {
  cluster.stop();
  cluster.start();
  assert.equal((await runJson(['mkdir', '/after-restart'], { home: homeB })).code, 0);
  assert.ok(await waitFor(() => told('/after-restart'), 30_000), `told: ${JSON.stringify(notices.map((n) => n.changes.map((c) => c.path)))}`);
});
