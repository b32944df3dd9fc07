/**
 * One operation, loading only its area's module (host/protocol/areas.ts): for a process that runs
 * one operation and exits (the CLI), which then does not load the policy rules to stat a file, nor
 * the FUSE binding to save a checkpoint. A long-lived process takes the whole table (index.ts).
 */
import { type Area, areaOf } from '../protocol/areas';
import type { OpHandler, OpName, OpsTable } from './context';

/** Each area's operations, from the file named by the area (`exec` runs are wired in host/proxy, not here). */
export const OPS_MODULES: Record<Exclude<Area, 'exec' | 'host' | 'mcp' | 'hook'>, () => Promise<Partial<OpsTable>>> = {
  vault: async () => (await import('./vault')).vaultOps,
  files: async () => (await import('./files')).fileOps,
  store: async () => (await import('./store')).storeOps,
  checkpoint: async () => (await import('./checkpoint')).checkpointOps,
  mount: async () => (await import('./mount')).mountOps,
  policy: async () => (await import('./policy')).policyOps,
  project: async () => (await import('./project')).projectOps,
};

export async function loadOp<M extends OpName>(method: M): Promise<OpHandler<M>> {
  const area = areaOf(method);
  const load = area in OPS_MODULES ? OPS_MODULES[area as keyof typeof OPS_MODULES] : undefined;
  const op = load && (await load())[method];
  if (!op) throw new Error(`operation ${method} is not in its area's module`);
  return op as OpHandler<M>;
}
