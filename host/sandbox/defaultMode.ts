/**
 * The sandbox mode a run gets when its caller does not choose: `workspace` where bubblewrap is
 * on PATH and can start a namespace here, else `none`. Probed once per process (one short
 * `bwrap … true`, ~5 ms, started early so that it overlaps other work); `policy check` and the
 * exec pipeline both judge by it.
 */
import { spawn } from 'node:child_process';
import type { SandboxMode } from '../protocol/sandbox';

let probe: Promise<SandboxMode> | undefined;

export function defaultSandboxMode(): Promise<SandboxMode> {
  probe ??= new Promise((resolve) => {
    const child = spawn('bwrap', ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--die-with-parent', 'true'], { stdio: 'ignore', timeout: 5000 });
    child.on('error', () => resolve('none'));
    child.on('exit', (code) => resolve(code === 0 ? 'workspace' : 'none'));
  });
  return probe;
}
