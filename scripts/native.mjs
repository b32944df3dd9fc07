// Compiles avfs's FUSE binding (host/fuse/native/*.c, an N-API addon over libfuse 2) into
// dist/avfs_fuse.node; `npm run build` calls it. A plain compiler call rather than node-gyp,
// which would fetch Node's headers over the network: Node ships its headers
// (<prefix>/include/node), and Debian's libfuse-dev has libfuse's. Rebuilds only when a source
// is newer than the addon, and replaces the addon by rename, so a mount server that has the old
// one loaded keeps running.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(root, 'host', 'fuse', 'native');
export const FUSE_ADDON = join(root, 'dist', 'avfs_fuse.node');

const HOW = 'install a C compiler and libfuse 2 headers (Debian: apt-get install build-essential libfuse-dev pkg-config)';

function nodeHeaders() {
  const dirs = [join(dirname(process.execPath), '..', 'include', 'node'), '/usr/include/node', '/usr/local/include/node'];
  const dir = dirs.find((d) => existsSync(join(d, 'node_api.h')));
  if (!dir) throw new Error(`cannot build the FUSE binding: Node's headers (node_api.h) are not in ${dirs.join(', ')}`);
  return dir;
}

/** libfuse 2's compiler and linker flags, from pkg-config when it knows them. */
function fuseFlags() {
  const pc = spawnSync('pkg-config', ['--cflags', '--libs', 'fuse'], { encoding: 'utf8' });
  if (pc.status === 0) return pc.stdout.trim().split(/\s+/);
  if (existsSync('/usr/include/fuse/fuse.h')) return ['-I/usr/include/fuse', '-D_FILE_OFFSET_BITS=64', '-lfuse', '-pthread'];
  throw new Error(`cannot build the FUSE binding: libfuse 2's headers are missing; ${HOW}`);
}

export function buildFuseAddon({ force = false } = {}) {
  const files = readdirSync(SRC).filter((f) => /\.[ch]$/.test(f));
  const newest = Math.max(...files.map((f) => statSync(join(SRC, f)).mtimeMs), statSync(fileURLToPath(import.meta.url)).mtimeMs);
  if (!force && existsSync(FUSE_ADDON) && statSync(FUSE_ADDON).mtimeMs >= newest) return FUSE_ADDON;
  const tmp = `${FUSE_ADDON}.${process.pid}.tmp`;
  const cc = process.env.CC || 'cc';
  const args = [
    '-shared', '-fPIC', '-O2', '-g', '-std=gnu11', '-Wall', '-Wextra',
    `-I${nodeHeaders()}`,
    '-o', tmp,
    ...files.filter((f) => f.endsWith('.c')).map((f) => join(SRC, f)),
    ...fuseFlags(),
  ];
  const r = spawnSync(cc, args, { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    rmSync(tmp, { force: true });
    const why = r.error ? r.error.message : r.stderr;
    throw new Error(`cannot build the FUSE binding (${cc} ${args.join(' ')}):\n${why}\n${HOW}`);
  }
  if (r.stderr.trim()) process.stderr.write(r.stderr);
  renameSync(tmp, FUSE_ADDON);
  return FUSE_ADDON;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(buildFuseAddon({ force: process.argv.includes('--force') }));
