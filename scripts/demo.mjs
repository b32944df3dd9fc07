// A guided tour of the avfs CLI on a demo vault. Leaves the vault in ./.avfs-demo for you to explore.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const home = join(root, '.avfs-demo');
// A mount left by an earlier demo run would make the clean-up below fail.
spawnSync(process.execPath, [join(root, 'dist/avfs.js'), 'unmount', join(home, 'mnt')], { env: { ...process.env, AVFS_HOME: home }, stdio: 'ignore' });
rmSync(home, { recursive: true, force: true });
mkdirSync(home, { recursive: true });
const env = { ...process.env, AVFS_HOME: home };

function avfs(...args) {
  process.stdout.write(`\n\x1b[1m$ avfs ${args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}\x1b[0m\n`);
  const r = spawnSync(process.execPath, [join(root, 'dist/avfs.js'), ...args], { env, stdio: 'inherit' });
  if (r.status !== 0) process.stdout.write(`\x1b[2m(exit code ${r.status})\x1b[0m\n`);
}

avfs('vault', 'create', 'demo', '--max-size-mb', '256');
avfs('import', join(root, 'docs'), '/docs');
avfs('write', '/src/hello.py', 'print("hello from a vault")\n', '--parents');
avfs('ln', '-s', 'src/hello.py', '/hello');
avfs('tree', '/');
avfs('ls', '-l', '/src');
avfs('cat', '/hello');
avfs('--json', 'stat', '/src/hello.py');
avfs('--json', 'cat', '/does/not/exist');
avfs('checkpoint', 'save', 'before-work', '-m', 'clean tree');
avfs('quota');

// The vault as a real directory: ordinary tools work in it unchanged.
const mnt = join(home, 'mnt');
mkdirSync(mnt, { recursive: true });
avfs('mount', 'demo', mnt);
function sh(cmd) {
  process.stdout.write(`\n\x1b[1m$ ${cmd}\x1b[0m   \x1b[2m(in the mount)\x1b[0m\n`);
  const r = spawnSync('bash', ['-c', cmd], { cwd: mnt, env, stdio: 'inherit' });
  if (r.status !== 0) process.stdout.write(`\x1b[2m(exit code ${r.status})\x1b[0m\n`);
}
sh('ls -la && python3 src/hello.py');
sh('git init -q && git add -A && git -c user.email=demo@avfs -c user.name=demo commit -qm "first commit" && git log --oneline');
avfs('unmount', mnt);
avfs('checkpoint', 'diff', 'before-work');

// What an agent does: every command through the policy, in a mount, with one JSON envelope back.
avfs('proxy', 'exec', '--vault', 'demo', '--shell', 'python3 src/hello.py > out.txt && cat out.txt');
avfs('proxy', 'exec', '--vault', 'demo', '--no-prompt', '--', 'rm', '-rf', '/etc/avfs-demo-never');
avfs('--json', 'proxy', 'exec', '--vault', 'demo', '--', 'sh', '-c', 'echo done > done.txt');
avfs('audit', '--limit', '5');
avfs('vault', 'list');
process.stdout.write(`\nThe demo vault is in ${home}. Explore it with:\n  export AVFS_HOME=${home}\n  alias avfs="node ${join(root, 'dist/avfs.js')}"\n  avfs --help\n`);
