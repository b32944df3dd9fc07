/**
 * The sandbox mode a run gets when its caller does not choose: `workspace` where bubblewrap can
 * make a sandbox here (probe.ts: probed once per process, with the namespaces a run gets), else
 * `none`. `policy check` and the exec pipeline both judge by it.
 */
import type { SandboxMode } from '../protocol/sandbox';
import { sandboxSupport } from './probe';

export async function defaultSandboxMode(): Promise<SandboxMode> {
  return (await sandboxSupport()).ok ? 'workspace' : 'none';
}
