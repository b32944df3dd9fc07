// Bundles the avfs CLI/host (and, once they exist, the extension and webview) with esbuild.
import { build } from 'esbuild';
import { chmodSync, copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
mkdirSync(dist, { recursive: true });

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: 'linked',
  logLevel: 'warning',
  // Native modules load their own binaries; vscode is provided by the editor.
  external: ['better-sqlite3', 'fuse-native', 'vscode'],
};

await build({
  ...common,
  entryPoints: [join(root, 'host/avfs.ts')],
  outfile: join(dist, 'avfs.js'),
  banner: { js: '#!/usr/bin/env node' },
});
chmodSync(join(dist, 'avfs.js'), 0o755);

const extensionEntry = join(root, 'extension/extension.ts');
if (existsSync(extensionEntry)) {
  await build({ ...common, entryPoints: [extensionEntry], outfile: join(dist, 'extension.js') });
}

// The policy parser's grammars ship beside the bundle.
for (const [pkg, file] of [
  ['web-tree-sitter', 'web-tree-sitter.wasm'],
  ['tree-sitter-bash', 'tree-sitter-bash.wasm'],
]) {
  const src = join(root, 'node_modules', pkg, file);
  if (existsSync(src)) copyFileSync(src, join(dist, file));
}
