/**
 * The sandbox mode a run gets when its caller does not choose: `workspace` where bubblewrap can
 * make a sandbox here (probe.ts: probed once per process, or read from the avfs home where an earlier process probed), else
 * `none`. `policy check` and the exec pipeline both judge by it.
 */
import type { SandboxMode } from '../protocol/sandbox';
import { sandboxSupport } from './probe';

export async function defaultSandboxMode(avfsHome?: string): Promise<SandboxMode> {
  return (await sandboxSupport(avfsHome)).ok ? 'workspace' : 'none';
}
