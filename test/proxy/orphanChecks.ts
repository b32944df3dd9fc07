/**
 * What a user sees of a run whose owner (the vault host, a one-shot `avfs proxy exec`, a mount
 * server) was killed mid-run: its processes, its mount, its vault. Shared by test/proxy/orphan.test.ts
 * and test/daemon/orphan.test.ts. Everything is observed from outside: /proc, the kernel's mount
 * table, the real CLI.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { pidAlive } from '../../host/fuse/registry';
import { groupMembers } from '../../host/proxy/processGroup';
import { runCli, runJson } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';

/** A command that writes what it is (its run id and mountpoint) to /s in the vault, then sleeps; `marker` is in its shell's argv. */
export const longCommand = (marker: string) => `echo "$AVFS_EXEC_ID $AVFS_MOUNTPOINT" > s; sleep 300; : ${marker}`;

/** Pids whose command line holds `marker` (the command's shell, and the CLI or guard that names it), or only those that start with `prefix`. */
export function processesWith(marker: string, prefix = ''): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8');
      if (cmdline.startsWith(prefix) && cmdline.includes(marker)) out.push(Number(name));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** The command's own shell (`bash -c …`: a `--shell` command), whose group is the command's. */
const commandShell = (marker: string) => processesWith(marker, 'bash\0-c\0');

function pgidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

export const mounted = (mountpoint: string) => readFileSync('/proc/self/mounts', 'utf8').split('\n').some((l) => l.split(' ')[1] === mountpoint);

export interface RunningRun {
  id: string;
  mountpoint: string;
  /** The command's process group. */
  pgid: number;
  /** The pid the mount's record names (its server; the CLI itself for a one-shot CLI call). */
  mountPid: number;
}

/** Waits until the command runs (it wrote /s), and says what it is. */
export async function whenRunning(home: string, vault: string, marker: string): Promise<RunningRun> {
  let line = '';
  const started = await waitFor(async () => {
    const r = await runCli(['--vault', vault, 'cat', '/s'], { home, env: { AVFS_NO_HOST: '1' } });
    line = r.code === 0 ? r.stdout.trim() : '';
    return line !== '' && commandShell(marker).length > 0;
  }, 60_000, 100);
  assert.ok(started, 'the command started');
  const [id, mountpoint] = line.split(' ') as [string, string];
  const record = JSON.parse(readFileSync(`${home}/mounts/${recordName(home, mountpoint)}`, 'utf8')) as { pid: number };
  return { id, mountpoint, pgid: pgidOf(commandShell(marker)[0]!), mountPid: record.pid };
}

function recordName(home: string, mountpoint: string): string {
  for (const n of readdirSync(`${home}/mounts`)) {
    if (!n.endsWith('.json')) continue;
    if ((JSON.parse(readFileSync(`${home}/mounts/${n}`, 'utf8')) as { mountpoint: string }).mountpoint === mountpoint) return n;
  }
  throw new Error(`no mount record for ${mountpoint}`);
}

/**
 * After the owner died: waits (a generous deadline, no claim on speed) until none of the command
 * runs and, for a one-shot mount, until the mount is gone, its server exited and its directory
 * removed; then checks each, so a failure says which is left.
 */
export async function assertRunEnded(home: string, run: RunningRun, marker: string, mount: { oneShot: boolean; serverPid?: number }): Promise<void> {
  const commandGone = () => processesWith(marker).length === 0 && groupMembers(run.pgid).length === 0;
  const mountGone = () => !mounted(run.mountpoint) && !existsSync(run.mountpoint) && (mount.serverPid === undefined || !pidAlive(mount.serverPid));
  await waitFor(() => commandGone() && (!mount.oneShot || mountGone()), 60_000, 100);
  assert.deepEqual(processesWith(marker), [], 'no process of the command survives');
  assert.deepEqual(groupMembers(run.pgid), [], 'its process group is empty');
  if (mount.oneShot) {
    assert.equal(mounted(run.mountpoint), false, 'the one-shot mount is unmounted');
    if (mount.serverPid !== undefined) assert.equal(pidAlive(mount.serverPid), false, 'its mount server exited');
    assert.equal(existsSync(run.mountpoint), false, 'its directory is removed');
    const mounts = await runJson(['mounts'], { home });
    const live = (mounts.json.mounts as Array<{ mountpoint: string; live: boolean }>).filter((m) => m.mountpoint === run.mountpoint && m.live);
    assert.deepEqual(live, [], 'avfs mounts lists no live mount of the run');
  }
}

/** The vault after the owner's death: the run's end in the audit trail, the checkpoint kept, the data intact and writable. */
export async function assertVaultAfter(home: string, vault: string, run: RunningRun, owner: RegExp): Promise<void> {
  type Entry = { operation: string; details: Record<string, unknown> | null };
  let ends: Entry[] = [];
  // Recorded last, once the command and the mount are dealt with.
  await waitFor(async () => {
    const audit = await runJson(['--vault', vault, 'audit'], { home });
    ends = (audit.json.entries as Entry[]).filter((e) => e.details?.id === run.id && /^exec_(result|failed|denied)$/.test(e.operation));
    return ends.length > 0;
  }, 30_000, 200);
  assert.equal(ends.length, 1, `one end of the run in the audit trail: ${JSON.stringify(ends)}`);
  assert.equal(ends[0]!.operation, 'exec_failed');
  assert.equal(ends[0]!.details!.error, 'OwnerDied');
  assert.match(String(ends[0]!.details!.message), owner);
  const checkpoint = String(ends[0]!.details!.checkpoint);
  const list = await runJson(['--vault', vault, 'checkpoint', 'list'], { home });
  assert.ok((list.json.checkpoints as Array<{ name: string }>).some((c) => c.name === checkpoint), `the checkpoint ${checkpoint} taken before the run is kept`);
  assert.equal((await runCli(['--vault', vault, 'cat', '/s'], { home })).stdout, `${run.id} ${run.mountpoint}\n`, 'what the command wrote before the kill is in the vault');
  assert.equal((await runCli(['--vault', vault, 'write', '/after', 'ok'], { home })).code, 0);
  assert.equal((await runCli(['--vault', vault, 'cat', '/after'], { home })).stdout, 'ok');
  const check = await sh('sqlite3', [`${home}/vaults/${vault}.avfs`, 'PRAGMA integrity_check']);
  assert.equal(check.stdout.trim(), 'ok');
}

/** After a test, whatever it left: the servers its home's mount records name stopped (by pid), its mounts detached. */
export async function releaseMountsOf(home: string): Promise<void> {
  let names: string[] = [];
  try {
    names = readdirSync(`${home}/mounts`).filter((n) => n.endsWith('.json'));
  } catch {
    /* no mounts */
  }
  for (const n of names) {
    try {
      const { pid } = JSON.parse(readFileSync(`${home}/mounts/${n}`, 'utf8')) as { pid: number };
      if (pid !== process.pid && pidAlive(pid)) process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  const left = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '').filter((m) => m.startsWith(`${home}/`));
  for (const m of left) await sh('fusermount', ['-uz', m]);
}
