// A throwaway PostgreSQL cluster for tests: initdb + pg_ctl as the `postgres` user (tests run as
// root, PostgreSQL refuses to), listening only on a Unix socket in a temporary directory (no TCP
// port, so parallel test processes never collide), stopped and removed when the process exits.
// Debian's `postgresql` package puts the binaries in /usr/lib/postgresql/<major>/bin.
//   const c = startCluster();  c.url → postgresql://postgres@/avfs?host=<dir>
//   c.stop(); c.start();       (a test of a server that goes away mid-run)
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The directory of initdb/pg_ctl, or undefined when PostgreSQL is not installed. */
export function pgBinDir() {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const majors = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return majors.length ? join(base, majors[0], 'bin') : undefined;
}

function postgresIds() {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

function asPostgres(bin, args, dir) {
  const r = spawnSync('runuser', ['-u', 'postgres', '--', bin, ...args], { cwd: dir, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  return r.stdout;
}

/**
 * Starts a cluster with a database `avfs`; `url` reaches it as the superuser `postgres`
 * (trust on the socket: a throwaway cluster of this machine's tests, no TCP port). Tests run it
 * without fsync (nothing here survives a crash of the machine); `durable` keeps PostgreSQL's
 * defaults (fsync, synchronous commit), for benchmarks.
 */
export function startCluster({ durable = false } = {}) {
  const bin = pgBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (apt-get install postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'avfs-pg-'));
  const { uid, gid } = postgresIds();
  chownSync(dir, uid, gid);
  // Tests also run the CLI as other users (nobody): they reach the socket too.
  chmodSync(dir, 0o755);
  const data = join(dir, 'data');
  asPostgres(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], dir);
  const fast = durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
  const opts = `-k ${dir} -c listen_addresses=${fast} -c max_connections=300 -c shared_buffers=32MB`;
  const cluster = {
    dir,
    url: `postgresql://postgres@/avfs?host=${dir}`,
    running: false,
    start() {
      asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'log'), '-o', opts, '-w', '-t', '60', 'start'], dir);
      cluster.running = true;
    },
    /** Stops the server (`fast`: running sessions are ended, as when a server goes down). */
    stop(mode = 'fast') {
      if (!cluster.running) return;
      asPostgres(join(bin, 'pg_ctl'), ['-D', data, '-m', mode, '-w', '-t', '60', 'stop'], dir);
      cluster.running = false;
    },
    /** Runs SQL as the superuser through psql (for tests that look at the server's tables). */
    psql(sql, db = 'avfs') {
      return asPostgres(join(bin, 'psql'), ['-h', dir, '-U', 'postgres', '-d', db, '-v', 'ON_ERROR_STOP=1', '-qAt', '-c', sql], dir);
    },
    destroy() {
      try {
        cluster.stop('immediate');
      } catch {
        /* already down */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  cluster.start();
  cluster.psql('CREATE DATABASE avfs', 'postgres');
  process.on('exit', () => cluster.destroy());
  return cluster;
}
