// `npm run package` makes an installable VSIX: checked from its file list, then for real by
// installing it into a fresh code-server extensions folder, running the CLI/host from the installed
// copy with the native modules it ships (a vault, then a `proxy exec` through a FUSE mount), and
// starting code-server with it installed (not in development mode) to see it activate.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { expandBraces, listZip, unmatchedAllowLines } from '../../scripts/package.mjs';
import { launchBrowser } from '../../scripts/vscode/browser.mjs';
import { QUIET_SETTINGS, startCodeServer } from '../../scripts/vscode/codeServer.mjs';
import { codeServerStateEnv, ensureCodeServer } from '../../scripts/vscode/install.mjs';
import { ROOT, tempDir } from '../helpers';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string; publisher: string };
const EXTENSION_ID = `${pkg.publisher}.${pkg.name}`;

/** The packages a VSIX may hold: the native modules and exactly what they load at run time. */
const RUNTIME_PACKAGES = [
  'better-sqlite3',
  'bindings',
  'file-uri-to-path',
  'node-gyp-build',
  'tree-sitter',
  'tree-sitter-bash',
];

/** Files without which the installed extension cannot work (paths inside the VSIX's extension/). */
const REQUIRED = [
  'package.json',
  'readme.md',
  'LICENSE.txt',
  'media/avfs.svg',
  'dist/extension.js',
  // The executions view's page script (webview/main.ts, bundled for the browser).
  'dist/webview.js',
  'dist/avfs.js',
  'dist/avfs-core.js',
  // The core of `avfs policy …` (scripts/build.mjs).
  'dist/avfs-policy.js',
  'dist/avfs-runner.js',
  'dist/avfs-ops-worker.js',
  // SQLite: the binary, its loader, and what the loader requires.
  'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
  'node_modules/better-sqlite3/lib/index.js',
  'node_modules/better-sqlite3/package.json',
  'node_modules/bindings/bindings.js',
  'node_modules/file-uri-to-path/index.js',
  // The policy's shell parser: tree-sitter's runtime, the bash grammar, and their loader.
  'node_modules/tree-sitter/build/Release/tree_sitter_runtime_binding.node',
  'node_modules/tree-sitter/index.js',
  'node_modules/tree-sitter-bash/prebuilds/linux-x64/tree-sitter-bash.node',
  'node_modules/tree-sitter-bash/bindings/node/index.js',
  'node_modules/node-gyp-build/node-gyp-build.js',
  // FUSE: avfs's own N-API addon, loaded from beside the bundle.
  'dist/avfs_fuse.node',
];

/** What never ships: sources, tests, maps, build inputs of the native modules, other platforms' binaries. */
const FORBIDDEN: [RegExp, string][] = [
  [/\.[cm]?ts$/, 'a TypeScript source'],
  [/\.map$/, 'a source map'],
  [/(^|\/)tests?\//, 'a test folder'],
  [/^(host|extension|webview|scripts|bench|docs|test)\//, "the checkout's own folders"],
  [/\.(c|cc|cpp|h|hpp|gyp|gypi)$|(^|\/)(src|deps)\//, 'native build inputs'],
  [/(^|\/)(darwin|win32)-|electron\.napi\.node$|libfuse/, 'another platform or runtime, or a bundled libfuse'],
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

/**
 * An environment with nothing that could lead the installed CLI to modules outside its folder (no
 * NODE_PATH): the native modules must load from the VSIX's own node_modules.
 */
function isolatedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_PATH;
  return env;
}

describe('the VSIX (npm run package)', { timeout: 600_000 }, () => {
  const t = tempDir('avfs-vsix-test-');
  const stateDir = join(t.dir, 'code-server');
  let vsix = '';
  let packaging: Run;
  let installed = '';

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
  });

  after(() => t.cleanup());

  test('holds the bundles and the native modules with their loaders, and nothing else', () => {
    assert.match(packaging.stdout, /native modules are built for Node v\d+/);
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

    // node_modules holds the runtime closure of the native modules and no other package; in
    // particular, none of the lock file's dev dependencies.
    const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { dev?: boolean }> };
    const shipped = [...new Set(files.filter((f) => f.startsWith('node_modules/')).map((f) => f.split('/')[1]!))].sort();
    assert.deepEqual(shipped, RUNTIME_PACKAGES);
    for (const name of shipped) assert.equal(lock.packages[`node_modules/${name}`]?.dev, undefined, `${name} is a dev dependency`);

    // Top-level dist/ only: the VS Code tests' bundles (dist/test/) stay out.
    assert.deepEqual(files.filter((f) => f.startsWith('dist/')).sort(), ['dist/avfs-core.js', 'dist/avfs-core.js.cache', 'dist/avfs-ops-worker.js', 'dist/avfs-policy.js', 'dist/avfs-policy.js.cache', 'dist/avfs-runner.js', 'dist/avfs.js', 'dist/avfs_fuse.node', 'dist/extension.js', 'dist/webview.js']);
    // Sane size: about 1.6 MiB and 46 files today; the whole of better-sqlite3 (its SQLite
    // sources) or a source tree would break these bounds.
    const bytes = readFileSync(vsix).length;
    assert.ok(bytes > 1 << 20 && bytes < 4 << 20, `${bytes} bytes`);
    assert.ok(files.length < 80, `${files.length} files`);
  });

  test('is built in production mode: minified bundles that name no source map', () => {
    for (const bundle of ['avfs.js', 'extension.js']) {
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

  test('installed, it is this platform\'s extension, and its CLI runs from there with the shipped native modules', async () => {
    assert.match(readFileSync(join(installed, '.vsixmanifest'), 'utf8'), /TargetPlatform="linux-x64"/);
    const dist = join(installed, 'dist');
    const cwd = join(t.dir, 'elsewhere');
    mkdirSync(cwd);
    const env = isolatedEnv({ AVFS_HOME: join(t.dir, 'avfs-home') });

    // Each native module resolves inside the installed folder, as dist/avfs.js resolves it.
    const resolved = await run(process.execPath, ['-e', "console.log(require.resolve('better-sqlite3', { paths: [process.argv[1]] }))", dist], { cwd, env });
    assert.deepEqual(resolved.stdout.trim().split('\n'), [join(installed, 'node_modules', 'better-sqlite3', 'lib', 'index.js')]);
    assert.ok(existsSync(join(dist, 'avfs_fuse.node')), 'the FUSE addon ships beside the bundle');

    // `node <installed>/dist/avfs.js`, as docs/install.md tells a person to run it.
    const avfs = (...args: string[]) => run(process.execPath, [join(dist, 'avfs.js'), ...args], { cwd, env });
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
  });

  test('code-server runs the installed copy (not in development mode): it activates and writes to its AVFS log', async () => {
    const workspace = join(t.dir, 'workspace');
    mkdirSync(workspace);
    const server = await startCodeServer({
      stateDir,
      settings: QUIET_SETTINGS,
      env: { AVFS_HOME: join(t.dir, 'avfs-home'), XDG_CACHE_HOME: join(t.dir, 'xdg-cache') },
    });
    let browser: Awaited<ReturnType<typeof launchBrowser>> | undefined;
    try {
      browser = await launchBrowser({ userDataDir: join(t.dir, 'chromium') });
      const page = browser.page;
      page.setDefaultTimeout(30_000);
      // No payload: no extensionDevelopmentPath, so the only AVFS extension is the installed one.
      await page.goto(server.workbenchUrl({ folder: workspace }));
      await page.locator('#workbench\\.parts\\.activitybar').getByRole('tab', { name: 'AVFS', exact: true }).waitFor();
      // The command palette, as a person would: "AVFS: Show Logs" activates the extension and shows its channel.
      await page.keyboard.press('F1');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor();
      await input.fill('>AVFS: Show Logs');
      await page.locator('.quick-input-list').getByRole('option', { name: /AVFS: Show Logs/ }).waitFor();
      await page.keyboard.press('Enter');
      const panel = page.locator('#workbench\\.parts\\.panel');
      await panel.getByText(`AVFS ${pkg.version} activated`).waitFor();
      assert.equal(await panel.getByRole('combobox', { name: 'Switch Output' }).inputValue(), 'AVFS');
    } finally {
      await browser?.context.close();
      await server.stop();
    }
  });
});
