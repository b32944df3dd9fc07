/**
 * One operation, loading only its area's module: for a process that runs one operation and exits
 * (the CLI), which then does not load the policy rules to stat a file, nor the FUSE binding to
 * save a checkpoint. A long-lived process takes the whole table (index.ts).
 */
import { areaOf } from '../protocol/methods/areas';
import type { OpHandler, OpName, OpsTable } from './context';

async function areaOps(method: OpName): Promise<Partial<OpsTable>> {
  switch (areaOf(method)) {
    case 'vault':
      return (await import('./vaults')).vaultOps;
    case 'files':
      return (await import('./files')).fileOps;
    case 'checkpoints':
      return (await import('./checkpoints')).checkpointOps;
    case 'store':
      return (await import('./store')).storeOps;
    case 'mounts':
      return (await import('./mounts')).mountOps;
    case 'policy':
      return (await import('./policy')).policyOps;
    case 'project':
      return (await import('./project')).projectOps;
  }
  throw new Error(`no operations module for ${method}`);
}

export async function loadOp<M extends OpName>(method: M): Promise<OpHandler<M>> {
  const op = (await areaOps(method))[method];
  if (!op) throw new Error(`operation ${method} is not in its area's module`);
  return op as OpHandler<M>;
}
