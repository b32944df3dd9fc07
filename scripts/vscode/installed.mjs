// The extension installed into a code-server's extensions folder from its VSIX, as a person installs
// it: what `npm start` runs. A window of an installed extension needs no smoke-test driver (which
// loading a development extension does), and only without that driver does the workbench show
// notifications as toasts. The VSIX (scripts/package.mjs, about a minute) is cached by a hash of
// everything it is built from, so a second start with the same sources builds nothing and installs
// nothing.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageVsix } from '../package.mjs';
import { cacheRoot, codeServerStateEnv, ensureCodeServer } from './install.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What a VSIX is built from (paths in the checkout): the sources, the manifest, the build scripts. */
const INPUTS = ['host', 'extension', 'webview', 'media', 'package.json', 'package-lock.json', 'README.md', 'LICENSE', '.vscodeignore', 'tsconfig.json', 'scripts/build.mjs', 'scripts/package.mjs', 'scripts/native.mjs'];

/**
 * A hash of the VSIX's inputs: every tracked or not-ignored file among INPUTS (its path and its
 * bytes, as they are now: edits not yet committed count), and the Node that builds the native modules.
 */
export function inputHash() {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...INPUTS], { cwd: root, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  const hash = createHash('sha256').update(`${process.version}\0`);
  for (const path of [...new Set(listed.stdout.split('\0').filter(Boolean))].sort()) {
    // A file deleted but still in the index is not an input.
    if (!existsSync(join(root, path))) continue;
    hash.update(`${path}\0`).update(readFileSync(join(root, path))).update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

/**
 * Makes sure the code-server whose state is in `stateDir` (startCodeServer's) has this checkout's
 * extension installed from its VSIX: builds the VSIX unless the cache holds one of the same inputs,
 * installs it unless that very VSIX is installed already. Returns what it did.
 * @param {{ stateDir: string, log?: (line: string) => void }} opts
 * @returns {Promise<{ hash: string, vsix: string, built: boolean, installed: boolean }>}
 */
export async function ensureInstalled({ stateDir, log = () => {} }) {
  const hash = inputHash();
  const cacheDir = join(cacheRoot(), 'vsix');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const vsix = join(cacheDir, `${pkg.name}-${pkg.version}-${hash}.vsix`);
  let built = false;
  if (!existsSync(vsix)) {
    log(`building the VSIX (its inputs changed, or none is cached: ${hash})`);
    // Built into a folder of its own, renamed into place: a half-built VSIX is never taken for one.
    const out = join(cacheDir, `.staging-${process.pid}`);
    rmSync(out, { recursive: true, force: true });
    const made = await packageVsix({ outDir: out, log: (line) => log(`  ${line}`) });
    mkdirSync(cacheDir, { recursive: true });
    // Older VSIXs of this checkout are of no more use.
    for (const f of readdirSync(cacheDir)) if (f.endsWith('.vsix')) rmSync(join(cacheDir, f), { force: true });
    renameSync(made.file, vsix);
    rmSync(out, { recursive: true, force: true });
    built = true;
  }
  const stamp = join(stateDir, 'installed-vsix.txt');
  const extensionsDir = join(stateDir, 'extensions');
  const current = existsSync(stamp) && readFileSync(stamp, 'utf8').trim() === hash && existsSync(join(extensionsDir, 'extensions.json'));
  if (current) return { hash, vsix, built, installed: false };
  log(`installing the extension from ${vsix}`);
  const { node, entry } = await ensureCodeServer({ log });
  mkdirSync(extensionsDir, { recursive: true });
  await run(node, [entry, '--install-extension', vsix, '--force', '--extensions-dir', extensionsDir, '--user-data-dir', join(stateDir, 'user-data')], {
    ...process.env,
    ...codeServerStateEnv(join(stateDir, 'code-server')),
  });
  writeFileSync(stamp, `${hash}\n`);
  return { hash, vsix, built, installed: true };
}

function run(cmd, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 && /was successfully installed/.test(output) ? resolve(output) : reject(new Error(`code-server --install-extension failed (exit ${code}):\n${output}`))));
  });
}
