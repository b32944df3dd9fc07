// Builds the installable VSIX: the extension, the CLI/host bundle and the
// host's native modules, for this machine's platform (native binaries are built per OS and arch).
//
//   npm run package [-- --out <dir>]     →  <dir>/agentvfs-vscode-<version>-linux-x64.vsix (default dir: the checkout)
//
// How: the bundles are built minified and without source maps into a staging folder (dist/ keeps
// its development build with maps, and tests running dist/avfs.js meanwhile are not disturbed),
// beside copies of package.json, README.md, LICENSE, media/ and .vscodeignore, and a link to
// node_modules; then `vsce package --target <platform>` packs what .vscodeignore (an allow-list)
// names. Dependency detection stays on (no --no-dependencies): vsce 3 then takes the production
// tree from `npm list` and the allow-list keeps the native modules and exactly what they load; with
// --no-dependencies it leaves out node_modules/ altogether, and the native modules must ship there
// (each loader finds its .node file from its own package folder). Everything else is bundled.
import { spawn } from 'node:child_process';
import { closeSync, copyFileSync, cpSync, fstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, readSync, realpathSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import picomatch from 'picomatch';
import { buildProduct } from './build.mjs';

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
 * Builds the VSIX into `outDir`. Returns its path, size, what `vsce ls` listed, the files it holds
 * (paths inside its extension/ folder, with sizes), the Node its native modules were built for,
 * and the time taken.
 * @param {{ outDir?: string, log?: (line: string) => void }} [opts]
 */
export async function packageVsix({ outDir = root, log = () => {} } = {}) {
  const started = Date.now();
  const target = currentTarget();
  if (!SUPPORTED_TARGETS.includes(target)) {
    throw new Error(`this machine is ${target}; the VSIX ships the native modules built here and only ${SUPPORTED_TARGETS.join(', ')} is built and tested (FUSE mounts need Linux)`);
  }
  const node = nativeModulesNode();
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  mkdirSync(outDir, { recursive: true });
  const out = resolve(outDir, `${pkg.name}-${pkg.version}-${target}.vsix`);

  const stage = mkdtempSync(join(tmpdir(), 'avfs-vsix-'));
  try {
    // A link, not a copy: vsce reads the production tree through it and copies only what the
    // allow-list keeps. realpath: the checkout's node_modules may itself be a link (git worktrees).
    // Made first: the build runs the bundled CLI there to make its code caches, and the policy
    // core's call loads the parser's native modules from it.
    symlinkSync(realpathSync(join(root, 'node_modules')), join(stage, 'node_modules'), 'dir');
    log(`building the bundles (production) in ${stage}`);
    await buildProduct({ outdir: join(stage, 'dist'), production: true });
    for (const file of ['package.json', 'README.md', 'LICENSE', '.vscodeignore']) copyFileSync(join(root, file), join(stage, file));
    cpSync(join(root, 'media'), join(stage, 'media'), { recursive: true });

    // `vsce ls` is what vsce will pack (paths as in the checkout; the VSIX renames README.md and
    // LICENSE): every line of the allow-list must match something there, or a binary is missing.
    const listed = (await vsce(['ls'], stage, () => {})).split('\n').filter(Boolean);
    const unmatched = unmatchedAllowLines(readFileSync(join(stage, '.vscodeignore'), 'utf8'), listed);
    if (unmatched.length) {
      throw new Error(`.vscodeignore names files that are not there (not built, or not in node_modules?):\n  ${unmatched.join('\n  ')}`);
    }
    const args = ['package', '--target', target, '--out', out];
    // Without a repository URL vsce would ask (and there is no one to answer) and could not turn
    // the README's relative links into absolute ones: they stay relative.
    if (!pkg.repository) args.push('--allow-missing-repository', '--no-rewrite-relative-links');
    log(`vsce ${args.join(' ')}`);
    await vsce(args, stage, log);
    const files = listZip(out)
      .filter((e) => e.path.startsWith('extension/'))
      .map((e) => ({ path: e.path.slice('extension/'.length), size: e.size }));
    return { file: out, bytes: statSync(out).size, listed, files, target, node, ms: Date.now() - started };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

/**
 * The Node the native modules in node_modules were built for (the one running this script, or the
 * build fails here rather than in the user's editor): better-sqlite3 must open a database.
 */
function nativeModulesNode() {
  try {
    const Database = requireHere('better-sqlite3');
    new Database(':memory:').close();
  } catch (e) {
    throw new Error(`better-sqlite3 does not load on this Node (${process.version}): run \`npm install\` (or \`npm rebuild better-sqlite3\`) with the Node the VSIX is for, then package with that Node. ${e instanceof Error ? e.message.split('\n')[0] : e}`);
  }
  return { version: process.version, abi: process.versions.modules };
}

function vsce(args, cwd, log) {
  const pkgDir = dirname(requireHere.resolve('@vscode/vsce/package.json'));
  const bin = join(pkgDir, JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).bin.vsce);
  return new Promise((resolvePromise, reject) => {
    // No standard input: a question from vsce fails the build instead of waiting for an answer.
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
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
    child.on('close', (code) => (code === 0 ? resolvePromise(stdout) : reject(new Error(`vsce ${args[0]} exited with ${code}:\n${output.trim()}`))));
  });
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
  say(`its native modules are built for Node ${r.node.version} (NODE_MODULE_VERSION ${r.node.abi}): the vault host must run on Node ${r.node.version.split('.')[0].slice(1)} (setting avfs.nodePath)`);
}

// No top-level await: the TypeScript test imports this module (tsx loads it as CommonJS).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`[package] failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
