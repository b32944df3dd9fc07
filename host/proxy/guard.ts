/**
 * A run's guard: what ends a run whose owner died. The owner is the process that runs the
 * pipeline (the vault host, a mount server, a one-shot `avfs proxy exec`); when it is killed
 * mid-run (SIGKILL, a crash, an OOM kill), the command, its mount server and their files outlive it.
 *
 * Once a run is allowed, its owner starts the guard: a shell in a session of its own (a signal
 * to the owner's process group or a terminal's hangup does not reach it), started with
 * posix_spawn (host/fuse/native/process.c: a fraction of a millisecond, where Node's spawn forks
 * the whole owner), reading a pipe whose other end only the owner holds (close-on-exec: no
 * command, runner or mount server the owner starts inherits it). The owner writes what the run
 * holds as it comes (host/protocol/guard.ts: the checkpoint, the baseline, the one-shot mount,
 * the command's process group), one JSON line each, and `done` once the run has ended. When the
 * owner dies, whatever the signal, the kernel closes its end: the guard reads the end of its
 * input without `done` and runs the settle step (settle.ts) with all it was told. Nothing polls,
 * and no pid is trusted to name the owner: the pipe's end is the owner's death.
 */
import { closeSync, existsSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { RunGuardStart, RunGuardUpdate } from '../protocol/guard';
import { loadNativeAddon } from '../fuse/addon';

export interface RunGuard {
  /** Tells the guard what the run holds now (what to stop or release should the owner die). */
  tell(update: RunGuardUpdate): void;
  /** The run has ended: the guard leaves without doing anything. */
  done(): void;
}

interface GuardAddon {
  pipe(): [number, number];
  spawnGuard?(argv: string[], stdinFd: number): number;
}

/**
 * Collects the lines until the end of its input: `done` ends the guard; at the end of input
 * without it, the settle step runs with every line as an argument after the fixed ones.
 */
const GUARD_SCRIPT = 'while IFS= read -r line; do [ "$line" = done ] && exit 0; set -- "$@" "$line"; done; exec "$@"';

/** The settle step's entry: the CLI's core exports it (host/cli/core.ts). */
const SETTLE = 'require(process.argv[1]).settleOrphanedRun(process.argv.slice(2))';

/** Node and its arguments to load the core with: the bundle beside this file, or the sources through tsx. */
function settleCommand(): string[] {
  const bundled = join(__dirname, 'avfs-core.js');
  if (existsSync(bundled)) return [process.execPath, '-e', SETTLE, bundled];
  return [process.execPath, '--import', 'tsx', '-e', SETTLE, join(__dirname, '..', 'cli', 'core.ts')];
}

let addon: GuardAddon | null | undefined;

function guardAddon(): GuardAddon | null {
  if (addon === undefined) {
    try {
      const a = loadNativeAddon<GuardAddon>();
      addon = a && typeof a.spawnGuard === 'function' ? a : null;
    } catch {
      addon = null;
    }
  }
  return addon;
}

/**
 * Starts the guard of a run; undefined where it cannot be started (no native addon: then no
 * mount can be made either, and no command runs).
 */
export function startRunGuard(start: RunGuardStart): RunGuard | undefined {
  const a = guardAddon();
  if (!a?.spawnGuard) return undefined;
  const [readEnd, writeEnd] = a.pipe();
  try {
    a.spawnGuard(['/bin/sh', '-c', GUARD_SCRIPT, 'avfs-guard', ...settleCommand(), JSON.stringify(start)], readEnd);
  } catch {
    closeSync(writeEnd);
    return undefined;
  } finally {
    closeSync(readEnd);
  }
  let open = true;
  const write = (line: string) => {
    if (!open) return;
    try {
      writeSync(writeEnd, line + '\n');
    } catch {
      /* the guard is gone (killed with its session): the run goes on unguarded */
    }
  };
  return {
    tell: (update) => write(JSON.stringify(update)),
    done: () => {
      write('done');
      open = false;
      closeSync(writeEnd);
    },
  };
}
