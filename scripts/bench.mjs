// Runs one benchmark suite: `npm run bench -- <name> [args]` runs bench/<name>.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [name, ...args] = process.argv.slice(2);
const suites = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts') && !f.startsWith('_'))
  .map((f) => f.slice(0, -3));
if (!name || !existsSync(join(root, 'bench', `${name}.ts`))) {
  console.error(`usage: npm run bench -- <suite> [args]\nsuites: ${suites.join(', ')}`);
  process.exit(2);
}
const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', join(root, 'bench', `${name}.ts`), ...args], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
