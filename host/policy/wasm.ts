/**
 * Finds the parser's two wasm files: beside the bundle (dist/avfs.js, where scripts/build.mjs
 * copies them) or in node_modules when the sources run through tsx.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export const RUNTIME_WASM = 'web-tree-sitter.wasm';
export const BASH_WASM = 'tree-sitter-bash.wasm';

const PACKAGE_OF: Record<string, string> = { [RUNTIME_WASM]: 'web-tree-sitter', [BASH_WASM]: 'tree-sitter-bash' };

/** Directories that may hold the wasm files, most likely first. */
function candidates(file: string): string[] {
  const pkg = PACKAGE_OF[file] ?? '';
  const dirs = [__dirname, join(__dirname, '..'), join(__dirname, '..', '..'), process.cwd()];
  const out: string[] = [];
  for (const d of dirs) {
    out.push(join(d, file));
    out.push(join(d, 'node_modules', pkg, file));
  }
  if (process.env.AVFS_ROOT) out.push(join(process.env.AVFS_ROOT, 'node_modules', pkg, file));
  try {
    out.push(join(dirname(require.resolve(`${pkg}/package.json`)), file));
  } catch {
    /* not resolvable from here (bundled); the paths above cover it */
  }
  return out;
}

/** The absolute path of `file`, or a thrown error listing where it looked. */
export function locateWasm(file: string): string {
  const tried = candidates(file);
  const hit = tried.find((p) => existsSync(p));
  if (!hit) throw new Error(`cannot find ${file}; looked in:\n  ${tried.join('\n  ')}`);
  return hit;
}
