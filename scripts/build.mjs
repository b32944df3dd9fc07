// Bundles the avfs CLI/host, the VS Code extension and its executions webview with esbuild,
// and compiles avfs's FUSE binding beside the bundle (scripts/native.mjs).
//   node scripts/build.mjs                 (npm run build): dist/, with source maps, for development and tests
//   node scripts/build.mjs --production    minified, no source maps (what scripts/package.mjs ships)
// buildVscodeTests() bundles the tests that run inside VS Code; the VS Code test runners call it.
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import { buildFuseAddon } from './native.mjs';

const requireHere = createRequire(import.meta.url);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  // The policy's shell parser (tree-sitter's runtime and the bash grammar) loads its binaries from
  // its package folders; vscode is provided by the editor. better-sqlite3's JavaScript is bundled
  // (so the CLI's code cache covers it) and given its binary's path (host/store/db.ts), so its
  // `bindings` helper, which would look for the binary beside the bundle, is never loaded. Its
  // package.json stays outside: it is how the binary's folder is found at run time. lmdb (the LMDB
  // backend, loaded on the first LMDB vault) finds its prebuilt binary from its package folder.
  external: ['better-sqlite3/package.json', 'bindings', 'lmdb', 'pg', 'tree-sitter', 'tree-sitter-bash', 'tree-sitter-bash/package.json', 'vscode'],
  // import() becomes require(): the CLI's core is compiled with V8's code cache through a
  // vm.Script (host/cli/bundleLoader.ts), which has no loader for import().
  supported: { 'dynamic-import': false },
};

/**
 * The CLI is two files: dist/avfs.js holds only what every start needs (commander and the command
 * definitions), and requires dist/avfs-core.js (the handlers, operations, store, zod…) when a
 * command runs. Reading and compiling the whole 2 MB at every start costs more than a bare Node
 * start does, so `avfs --version` could not be cheap otherwise.
 */
/**
 * `avfs mcp`'s server (host/mcp/, with the MCP SDK) is dist/avfs-mcp.js, required by its handler
 * when it runs: the SDK would otherwise weigh on every command's load of the core.
 */
const mcpOutside = {
  name: 'avfs-mcp-outside',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/\.\.\/mcp\/server$/ }, (args) =>
      args.importer.endsWith(join('host', 'cli', 'handlers', 'mcp.ts')) ? { path: './avfs-mcp.js', external: true } : undefined,
    );
  },
};

/**
 * The MCP SDK's CommonJS build, not its ES modules: bundled as ES modules beside avfs's lazily
 * loaded modules (import() lowered to require), the SDK's schemas run before zod's classes are
 * initialised ("Class is not a constructor"). Its CommonJS build requires zod's own CommonJS build.
 */
const mcpSdkCommonJs = {
  name: 'mcp-sdk-commonjs',
  setup(b) {
    b.onResolve({ filter: /^@modelcontextprotocol\/sdk\// }, (args) =>
      args.pluginData === 'commonjs' ? undefined : b.resolve(args.path, { kind: 'require-call', resolveDir: args.resolveDir, pluginData: 'commonjs' }),
    );
  },
};

const coreOutside = {
  name: 'avfs-core-outside',
  setup(b) {
    b.onResolve({ filter: /^\.\/core$/ }, (args) =>
      args.importer.endsWith(join('host', 'cli', 'main.ts')) ? { path: './avfs-core.js', external: true } : undefined,
    );
  },
};

/**
 * zod's namespace exports every locale (400 kB, a fifth of the host's bundle, ~13 ms to
 * initialise at each CLI call); avfs speaks English only, which zod loads by itself. Every
 * `locales` namespace in zod is bundled with `en` alone. zod's fromJSONSchema, which avfs never
 * calls, copies two of zod's namespaces into one object as it loads (~1 ms of each cold call): it
 * is bundled as a function that says so.
 */
const zodTrimmed = {
  name: 'zod-trimmed',
  setup(b) {
    const inZod = (args) => args.importer.includes(`${sep}zod${sep}`);
    b.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      inZod(args) ? { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-en' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({ contents: 'export { default as en } from "./en.js";', resolveDir: dirname(args.path), loader: 'js' }));
    b.onResolve({ filter: /^\.\/from-json-schema\.js$/ }, (args) => (inZod(args) ? { path: 'from-json-schema', namespace: 'zod-no-from-json' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'zod-no-from-json' }, () => ({
      contents: 'export function fromJSONSchema() { throw new Error("zod\'s fromJSONSchema is not bundled with avfs"); }',
      loader: 'js',
    }));
  },
};

/**
 * dist/avfs-policy.js: the core for `avfs policy …` alone (host/cli/main.ts picks it). The three
 * loaders by area (host/protocol/areas.ts) import each area's file by its area's name: handlers
 * (host/cli/core.ts), method schemas (host/protocol/methods/load.ts) and operations
 * (host/ops/load.ts). Every one not named `policy` is left out: a smaller file, and a faster load.
 * test/protocol/areas.test.ts checks the built file holds the policy area's handlers and no other's.
 */
const AREAS_OF = {
  [join('host', 'cli', 'core.ts')]: /^\.\/handlers\/(\w+)$/,
  [join('host', 'protocol', 'methods', 'load.ts')]: /^\.\/(\w+)$/,
  [join('host', 'ops', 'load.ts')]: /^\.\/(\w+)$/,
};
const policyAreaOnly = {
  name: 'policy-area-only',
  setup(b) {
    b.onResolve({ filter: /^\.\/(handlers\/)?\w+$/ }, (args) => {
      const pattern = Object.entries(AREAS_OF).find(([file]) => args.importer.endsWith(file))?.[1];
      const area = pattern?.exec(args.path)?.[1];
      return area && area !== 'policy' ? { path: args.path, namespace: 'other-area' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'other-area' }, () => ({ contents: 'module.exports = {};', loader: 'js' }));
  },
};

/**
 * The extension is two files: dist/extension.js (extension/entry.ts) is what VS Code loads and
 * counts as the extension's activation time, and holds no zod and no protocol; it requires
 * dist/extension-core.js (extension/extension.ts and everything it imports) once activate() has
 * returned.
 */
const extensionCoreOutside = {
  name: 'extension-core-outside',
  setup(b) {
    b.onResolve({ filter: /^\.\/extension$/ }, (args) =>
      args.importer.endsWith(join('extension', 'entry.ts')) ? { path: './extension-core.js', external: true } : undefined,
    );
  },
};

/** The build fails if the extension's entry took in zod (an import that pulls the core into it). */
function assertNoZod(file) {
  const text = readFileSync(file, 'utf8');
  if (/node_modules[\\/]zod|ZodType|\$ZodError/.test(text)) throw new Error(`${file} holds zod: the extension's entry (extension/entry.ts) must load the core only after activate() returns`);
}

/**
 * The CLI's cores are read as Latin-1 when they are ASCII (host/cli/bundleLoader.ts: three times
 * faster than decoding UTF-8). esbuild writes strings and regular expressions in ASCII already;
 * what is left are comments (a dash, an ellipsis), which become \u escapes. They are comments, so
 * nothing the code does changes.
 */
function asciiOnly(file) {
  const text = readFileSync(file, 'utf8');
  if (/^[\x00-\x7f]*$/.test(text)) return;
  writeFileSync(file, text.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
}

/**
 * V8's code cache of dist/avfs-core.js (host/cli/bundleLoader.ts), made by `node`, the Node that will
 * run the CLI (V8 rejects a cache made by another). Best made at the end of a one-shot `proxy exec -- true`,
 * in a throw-away home: the cache then also holds the functions a call compiles as it runs (the
 * pipeline, the policy walk, the store, the mount), not only what loading the file compiles
 * (~25 ms of a cold exec). Where that call cannot run (no FUSE here), or its cache would not be
 * accepted, the cache is the one made right after loading the file, by `avfs pwd`.
 */
function writeCodeCache(outdir, node) {
  const home = mkdtempSync(join(tmpdir(), 'avfs-build-'));
  const cli = (args, write) =>
    spawnSync(node, [join(outdir, 'avfs.js'), ...args], {
      env: { ...process.env, AVFS_HOME: home, AVFS_NO_HOST: '1', ...(write ? { AVFS_WRITE_CODE_CACHE: write } : {}) },
      encoding: 'utf8',
    });
  const cache = join(outdir, 'avfs-core.js.cache');
  try {
    // The policy core's cache, from a decision of a line of the kind agents send, so that it holds
    // the parser, the walk, the rules and the handlers of the programs they run most (cd, git,
    // npm, python, ls, grep, tee, echo): the functions a decision runs that the cache lacks are
    // compiled as they first run.
    const policy = cli(['--json', 'policy', 'check', '--shell',
      `cd src && git status --short && npm test -- --coverage 2>&1 | tee test.log; python3 -c 'print(1)' > out.txt && ls -la | grep x && echo "$(date)" > done`], 'exit');
    if (policy.status !== 0 || !cacheAccepted(outdir, 'avfs-policy.js', node)) {
      rmSync(join(outdir, 'avfs-policy.js.cache'), { force: true });
      process.stderr.write(`build: no code cache for avfs-policy.js (its decision failed: ${policy.stdout || policy.stderr}); it loads without one\n`);
    }
    const ran = cli(['vault', 'create', 'cache'], '').status === 0 && cli(['--vault', 'cache', 'proxy', 'exec', '--', 'true'], 'exit').status === 0;
    if (ran && existsSync(cache) && cacheAccepted(outdir, 'avfs-core.js', node)) return;
    rmSync(cache, { force: true });
    const r = cli(['--json', 'pwd'], '1');
    if (r.status !== 0 || !existsSync(cache)) throw new Error(`writing the code cache failed: ${r.stderr}`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/** Whether a fresh Node accepts the code cache (V8 rejects one made under other flags). */
function cacheAccepted(outdir, file, node) {
  const check = `const { Script } = require('node:vm'); const { wrap } = require('node:module'); const { readFileSync } = require('node:fs');
    const f = process.argv[1]; const s = new Script(wrap(readFileSync(f, 'utf8')), { filename: f, cachedData: readFileSync(f + '.cache') });
    process.exit(s.cachedDataRejected ? 1 : 0);`;
  return spawnSync(node, ['-e', check, join(outdir, file)]).status === 0;
}

/**
 * Builds the product into `outdir` (default dist/). `production`: minified and without source maps,
 * for the VSIX (scripts/package.mjs builds into a staging folder, so dist/ keeps its maps). `node`: the
 * Node that will run the CLI, which makes its code caches (the VSIX's runtime for the VSIX).
 * @param {{ outdir?: string, production?: boolean, node?: string }} [opts]
 */
export async function buildProduct({ outdir = dist, production = false, node = process.execPath } = {}) {
  mkdirSync(outdir, { recursive: true });
  // lineLimit: a stack trace or a crash report from the minified bundle shows a short source line
  // (Node prints the whole line of the throw site), for 0.2 % more bytes.
  const options = production ? { ...common, minify: true, lineLimit: 500, sourcemap: false } : common;
  await build({
    ...options,
    entryPoints: [join(root, 'host/avfs.ts')],
    outfile: join(outdir, 'avfs.js'),
    banner: { js: '#!/usr/bin/env node' },
    plugins: [coreOutside, zodTrimmed],
  });
  chmodSync(join(outdir, 'avfs.js'), 0o755);
  await build({ ...options, entryPoints: [join(root, 'host/cli/core.ts')], outfile: join(outdir, 'avfs-core.js'), plugins: [mcpOutside, zodTrimmed] });
  await build({ ...options, entryPoints: [join(root, 'host/cli/core.ts')], outfile: join(outdir, 'avfs-policy.js'), plugins: [policyAreaOnly, mcpOutside, zodTrimmed] });
  // `avfs mcp`'s server (see mcpOutside).
  await build({ ...options, entryPoints: [join(root, 'host/mcp/server.ts')], outfile: join(outdir, 'avfs-mcp.js'), plugins: [mcpSdkCommonJs, zodTrimmed] });
  for (const core of ['avfs-core.js', 'avfs-policy.js']) asciiOnly(join(outdir, core));
  // The process that starts the vault host's commands (host/proxy/runnerClient.ts).
  await build({ ...options, entryPoints: [join(root, 'host/proxy/runnerProcess.ts')], outfile: join(outdir, 'avfs-runner.js') });
  // npm pg, for the PostgreSQL backend's worker thread and the host's LISTEN connections, which
  // require it by path (host/store/pgSync.ts): one file, no node_modules to ship. Its optional
  // native and Cloudflare transports are never loaded.
  await build({ ...options, entryPoints: [requireHere.resolve('pg')], outfile: join(outdir, 'avfs-pg.js'), external: ['pg-native', 'pg-cloudflare'] });
  // The vault host's operation threads (host/daemon/pool.ts).
  await build({ ...options, entryPoints: [join(root, 'host/daemon/opsWorker.ts')], outfile: join(outdir, 'avfs-ops-worker.js'), plugins: [zodTrimmed] });
  // The FUSE binding ships beside the bundle, which loads it from its own directory. Built before
  // the code cache: that cache is made by a one-shot `proxy exec`, which mounts with it (without
  // it, a fresh build or the VSIX's staging folder gets the smaller cache of loading alone).
  const addon = buildFuseAddon();
  if (outdir !== dist) copyFileSync(addon, join(outdir, 'avfs_fuse.node'));
  writeCodeCache(outdir, node);

  const extensionCore = join(root, 'extension/extension.ts');
  if (existsSync(extensionCore)) {
    // The extension is two files (see extensionCoreOutside): the entry VS Code loads, then its core.
    await build({ ...options, entryPoints: [join(root, 'extension/entry.ts')], outfile: join(outdir, 'extension.js'), plugins: [extensionCoreOutside] });
    await build({ ...options, entryPoints: [extensionCore], outfile: join(outdir, 'extension-core.js') });
    assertNoZod(join(outdir, 'extension.js'));
    // The executions view's page script: runs in the editor's browser frame, one self-contained file.
    await build({
      bundle: true,
      platform: 'browser',
      format: 'iife',
      target: 'chrome114',
      logLevel: 'warning',
      minify: production,
      sourcemap: production ? false : 'linked',
      entryPoints: [join(root, 'webview/main.ts')],
      outfile: join(outdir, 'webview.js'),
      plugins: [zodTrimmed],
    });
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
    // agents.test.ts drives `avfs mcp` with the SDK's client.
    plugins: [mcpSdkCommonJs],
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
