// Bundles the avfs CLI/host and the VS Code extension (and, once it exists, the webview) with esbuild,
// and compiles avfs's FUSE binding beside the bundle (scripts/native.mjs).
//   node scripts/build.mjs                 (npm run build): dist/, with source maps, for development and tests
//   node scripts/build.mjs --production    minified, no source maps (what scripts/package.mjs ships)
// buildVscodeTests() bundles the tests that run inside VS Code; the VS Code test runners call it.
import { build } from 'esbuild';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFuseAddon } from './native.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  // Native modules load their own binaries; vscode is provided by the editor.
  external: ['better-sqlite3', 'vscode'],
};

/**
 * Builds the product into `outdir` (default dist/). `production`: minified and without source maps,
 * for the VSIX (scripts/package.mjs builds into a staging folder, so dist/ keeps its maps).
 * @param {{ outdir?: string, production?: boolean }} [opts]
 */
export async function buildProduct({ outdir = dist, production = false } = {}) {
  mkdirSync(outdir, { recursive: true });
  // lineLimit: a stack trace or a crash report from the minified bundle shows a short source line
  // (Node prints the whole line of the throw site), for 0.2 % more bytes.
  const options = production ? { ...common, minify: true, lineLimit: 500, sourcemap: false } : common;
  await build({
    ...options,
    entryPoints: [join(root, 'host/avfs.ts')],
    outfile: join(outdir, 'avfs.js'),
    banner: { js: '#!/usr/bin/env node' },
  });
  chmodSync(join(outdir, 'avfs.js'), 0o755);
  // The FUSE binding ships beside the bundle, which loads it from its own directory.
  const addon = buildFuseAddon();
  if (outdir !== dist) copyFileSync(addon, join(outdir, 'avfs_fuse.node'));

  const extensionEntry = join(root, 'extension/extension.ts');
  if (existsSync(extensionEntry)) {
    await build({ ...options, entryPoints: [extensionEntry], outfile: join(outdir, 'extension.js') });
  }

  // The policy parser's grammars ship beside the bundle.
  for (const [pkg, file] of [
    ['web-tree-sitter', 'web-tree-sitter.wasm'],
    ['tree-sitter-bash', 'tree-sitter-bash.wasm'],
  ]) {
    const src = join(root, 'node_modules', pkg, file);
    if (existsSync(src)) copyFileSync(src, join(outdir, file));
  }
}

export const VSCODE_TESTS_OUT = join(dist, 'test', 'vscode');

/**
 * Bundles test/vscode/index.ts (the `extensionTestsPath` entry) and each test/vscode/*.test.ts beside
 * it into dist/test/vscode/, so mocha can load them one file at a time inside the extension host.
 * Mocha stays external: it is loaded from node_modules by the entry. Returns the entry's path.
 */
export async function buildVscodeTests() {
  const src = join(root, 'test', 'vscode');
  const tests = readdirSync(src).filter((f) => f.endsWith('.test.ts'));
  rmSync(VSCODE_TESTS_OUT, { recursive: true, force: true });
  await build({
    ...common,
    external: [...common.external, 'mocha'],
    entryPoints: [join(src, 'index.ts'), ...tests.map((f) => join(src, f))],
    outdir: VSCODE_TESTS_OUT,
  });
  return join(VSCODE_TESTS_OUT, 'index.js');
}

// No top-level await: TypeScript tests import this module through package.mjs (tsx loads it as CommonJS).
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildProduct({ production: process.argv.includes('--production') }).catch((e) => {
    // esbuild has printed its errors already.
    process.stderr.write(`build failed: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
    process.exit(1);
  });
}
