// The test suites. With no arguments: every node:test file under test/ (TypeScript through tsx), then
// the VS Code suite (the extension's tests inside a real VS Code: scripts/vscode/test.mjs).
// Usage: node scripts/test.mjs [filter...]   (only the node:test files whose path contains a filter)
// AVFS_TEST_BACKEND=lmdb node scripts/test.mjs [filter...]: the same, with every vault on LMDB
// (AVFS_TEST_BACKEND=postgres: on a throwaway PostgreSQL cluster, scripts/pgcluster.mjs).
// With no filter, the store's tests run a second time on LMDB and a third on PostgreSQL (the
// conformance matrix, below).
// The VS Code suite alone: npm run test:vscode
// The CLI tests run the built dist/avfs.js, so it is rebuilt first whenever a source is newer.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster } from './pgcluster.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// test/vscode runs inside VS Code's extension host (mocha), not under node:test.
const VSCODE_TESTS = join(root, 'test', 'vscode');
const filters = process.argv.slice(2);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (p === VSCODE_TESTS) continue;
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(relative(root, p));
  }
})(join(root, 'test'));
const selected = filters.length ? files.filter((f) => filters.some((x) => f.includes(x))) : files;
if (selected.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
/** The newest modification time under `p` (a file or a directory tree). */
function newest(p) {
  if (!existsSync(p)) return 0;
  const st = statSync(p);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(p).map((n) => newest(join(p, n))));
}
const bundle = join(root, 'dist', 'avfs.js');
const inputs = ['host', 'extension', 'scripts/build.mjs', 'package.json', 'package-lock.json'].map((p) => join(root, p));
if (!existsSync(bundle) || Math.max(...inputs.map(newest)) > statSync(bundle).mtimeMs) {
  console.error('dist/avfs.js is older than its sources: building it first');
  const b = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { cwd: root, stdio: 'inherit' });
  if (b.status !== 0) process.exit(b.status ?? 1);
}

const header = (title) => process.stdout.write(`\n\x1b[1m== ${title}\x1b[0m\n\n`);
const run = (args, env = process.env) => spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit', env }).status ?? 1;

// AVFS_TEST_BACKEND=lmdb: every vault the tests make without naming a backend is on that backend
// (AVFS_BACKEND, the default of `vault create` and of the store: host/store/backend.ts).
// postgres: one throwaway cluster (scripts/pgcluster.mjs) serves the whole run; vaults of different
// tests' homes get distinct names there (AVFS_PG_NAMESPACE=home, host/store/engine.ts).
let cluster;
const backendEnv = (backend) => {
  if (backend !== 'postgres') return { ...process.env, AVFS_BACKEND: backend };
  cluster ??= startCluster();
  return { ...process.env, AVFS_BACKEND: backend, AVFS_PG_URL: cluster.url, AVFS_PG_NAMESPACE: 'home' };
};
const testEnv = process.env.AVFS_TEST_BACKEND ? backendEnv(process.env.AVFS_TEST_BACKEND) : process.env;

if (!filters.length) header(`node:test: ${selected.length} files under test/`);
const unit = run(['--import', 'tsx', '--test', '--test-reporter=spec', ...selected], testEnv);
if (filters.length) process.exit(unit);

// The conformance matrix: the tests that exercise the store run again with LMDB vaults (the
// store itself, the operations, the CLI's vault, file, transfer and checkpoint commands, mounts
// with git, npm and python on them); the rest of the suite does not depend on the backend.
const CONFORMANCE = ['test/store/', 'test/ops/', 'test/cli/cli.test.ts', 'test/cli/checkpoint.test.ts', 'test/cli/transfer.test.ts', 'test/fuse/lifecycle.test.ts', 'test/fuse/tools.test.ts'];
// (Retention's "the vault file shrinks" holds on SQLite only: LMDB's compaction after gc is off, host/store/lmdb.ts.)
const LMDB_ALSO = [];
// (test/store/postgres.test.ts names its backend: homes sharing a vault on a server of its own.)
const conformance = files.filter((f) => CONFORMANCE.some((c) => f.startsWith(c)) && f !== 'test/store/postgres.test.ts');
let lmdb = 0;
let postgres = 0;
if (!process.env.AVFS_TEST_BACKEND) {
  header(`node:test on LMDB vaults (AVFS_TEST_BACKEND=lmdb): ${conformance.length + LMDB_ALSO.length} files`);
  lmdb = run(['--import', 'tsx', '--test', '--test-reporter=spec', ...conformance, ...files.filter((f) => LMDB_ALSO.includes(f))], backendEnv('lmdb'));
  header(`node:test on PostgreSQL vaults (AVFS_TEST_BACKEND=postgres, a throwaway cluster): ${conformance.length} files`);
  postgres = run(['--import', 'tsx', '--test', '--test-reporter=spec', ...conformance], backendEnv('postgres'));
}

header('VS Code: the extension inside code-server (test/vscode, npm run test:vscode)');
const vscode = run(['--import', 'tsx', join('scripts', 'vscode', 'test.mjs')]);
const verdict = (code) => (code === 0 ? 'passed' : `FAILED (exit ${code})`);
header(`node:test ${verdict(unit)}; on LMDB ${verdict(lmdb)}; on PostgreSQL ${verdict(postgres)}; VS Code ${verdict(vscode)}`);
process.exit(unit || lmdb || postgres || vscode);
