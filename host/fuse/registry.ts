/**
 * Live mounts: one JSON record per mount in `<home>/mounts/`, checked against the kernel's
 * mount table and the serving process, and the clean-up of mounts whose server died. Nothing
 * here touches a mountpoint synchronously (a process that did so on its own mount would hang):
 * probes are asynchronous, with a time limit.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { MountRecord } from '../protocol/records';
import type { AvfsHome } from '../store/home';
import { unixSocketPath } from '../store/socketPath';
import { kernelPath, mountEntry, mountTable, pidAlive, servedNow } from './liveness';
import { makePrivateDir, writePrivateFile } from '../store/privateFs';

// The record's format is the protocol's (host/protocol/records.ts).
export { MountRecord };

export { mountEntry, type MountInfoEntry, mountTable, pidAlive } from './liveness';

export type Probe = 'ok' | 'stale' | 'missing' | 'hung' | 'error';

const PROBE_ERRORS: Array<[RegExp, Probe, string]> = [
  [/Transport endpoint is not connected/, 'stale', 'ENOTCONN'],
  [/No such file or directory/, 'missing', 'ENOENT'],
  [/Permission denied/, 'error', 'EACCES'],
];

/**
 * Stats a mountpoint in a child process (`stat`), never in this one: a FUSE server that hangs
 * leaves the stat waiting in the kernel, and a thread of ours waiting there would keep this
 * process from ever exiting. A dead server answers ENOTCONN ("stale").
 */
export async function probe(mountpoint: string, timeoutMs = 3000): Promise<{ probe: Probe; ino?: number; code?: string }> {
  return new Promise((resolve) => {
    const child = execFile('stat', ['-c', '%i', '--', mountpoint], { env: { ...process.env, LC_ALL: 'C' } }, (e, stdout, stderr) => {
      clearTimeout(timer);
      if (!e) return resolve({ probe: 'ok', ino: Number(stdout.trim()) });
      const hit = PROBE_ERRORS.find(([re]) => re.test(String(stderr)));
      resolve(hit ? { probe: hit[1], code: hit[2] } : { probe: 'error', code: String(stderr).trim().slice(0, 200) || String(e.message) });
    });
    const timer = setTimeout(() => {
      // A stat stuck in the kernel cannot be killed; leave it behind rather than wait with it.
      child.unref();
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolve({ probe: 'hung' });
    }, timeoutMs);
  });
}

/** `fusermount -uz` (lazy unmount); resolves to whether it succeeded. */
export function lazyUnmount(mountpoint: string): Promise<boolean> {
  return new Promise((res) => {
    execFile('fusermount', ['-uz', mountpoint], (e1) => {
      if (!e1) return res(true);
      execFile('umount', ['-l', mountpoint], (e2) => res(!e2));
    });
  });
}

export class MountRegistry {
  readonly dir: string;

  constructor(readonly home: AvfsHome) {
    this.dir = join(home.dir, 'mounts');
  }

  idOf(mountpoint: string): string {
    return createHash('sha256').update(resolve(mountpoint)).digest('hex').slice(0, 16);
  }

  fileOf(mountpoint: string): string {
    return join(this.dir, this.idOf(mountpoint) + '.json');
  }

  /** Where the server of a mount listens for runs handed to it. */
  execSocketOf(mountpoint: string): string {
    return unixSocketPath(join(this.dir, this.idOf(mountpoint) + '.sock'), resolve(mountpoint));
  }

  logOf(mountpoint: string): string {
    return join(this.dir, this.idOf(mountpoint) + '.log');
  }

  write(rec: MountRecord): void {
    makePrivateDir(this.dir);
    const file = this.fileOf(rec.mountpoint);
    writePrivateFile(file + '.tmp', JSON.stringify(rec, null, 2) + '\n');
    // rename is atomic: a reader sees the old record or the new one.
    renameSync(file + '.tmp', file);
  }

  remove(mountpoint: string, pid?: number): void {
    const rec = this.read(mountpoint);
    if (rec && pid !== undefined && rec.pid !== pid) return;
    rmSync(this.fileOf(mountpoint), { force: true });
  }

  read(mountpoint: string): MountRecord | undefined {
    return this.readFile(this.fileOf(mountpoint));
  }

  private readFile(file: string): MountRecord | undefined {
    try {
      const r = MountRecord.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      return r.success ? r.data : undefined;
    } catch {
      return undefined;
    }
  }

  records(): MountRecord[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    return names
      .filter((n) => n.endsWith('.json'))
      .map((n) => this.readFile(join(this.dir, n)))
      .filter((r): r is MountRecord => r !== undefined);
  }

  /** Whether a record stands for a mount that is being served now. */
  isLive(rec: MountRecord): boolean {
    return servedNow(rec);
  }

  /**
   * Drops records of dead servers and lazily unmounts what they left behind (a mount whose server
   * was killed answers "Transport endpoint is not connected"). Also clears stale avfs mounts that
   * have no record (their home was removed), unless `foreign` is false. Returns the mountpoints cleaned.
   */
  async prune(opts: { foreign?: boolean } = {}): Promise<string[]> {
    const cleaned: string[] = [];
    for (const rec of this.records()) {
      if (pidAlive(rec.pid)) continue;
      if (mountEntry(rec.mountpoint)) await lazyUnmount(rec.mountpoint);
      rmSync(this.fileOf(rec.mountpoint), { force: true });
      cleaned.push(rec.mountpoint);
    }
    if (opts.foreign === false) return cleaned;
    const recorded = new Set(this.records().map((r) => kernelPath(r.mountpoint)));
    // Probed all at once: each probe is a process start, and other homes may have many mounts up.
    const foreign = mountTable().filter((e) => e.fstype === 'fuse.avfs' && !recorded.has(e.mountpoint));
    await Promise.all(
      foreign.map(async (e) => {
        if ((await probe(e.mountpoint, 1000)).probe !== 'stale') return;
        await lazyUnmount(e.mountpoint);
        cleaned.push(e.mountpoint);
      }),
    );
    return cleaned;
  }
}

/**
 * Refuses an operation that would pull a vault out from under a live mount of it (deleting it,
 * restoring a checkpoint under open files): the user unmounts first.
 */
export function assertNotMounted(home: AvfsHome, vault: string, what: string): void {
  const reg = new MountRegistry(home);
  const live = reg.records().filter((r) => r.vault === vault && reg.isLive(r));
  if (live.length > 0) {
    const where = live.map((r) => r.mountpoint);
    throw new AvfsError('VaultInUse', `cannot ${what}: vault ${vault} is mounted at ${where.join(', ')} (run avfs unmount first)`, {
      vault,
      mountpoints: where,
    });
  }
}
