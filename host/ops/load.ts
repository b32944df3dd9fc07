/**
 * One operation, loading only its area's module: for a process that runs one operation and exits
 * (the CLI), which then does not load the policy rules to stat a file, nor the FUSE binding to
 * save a checkpoint. A long-lived process takes the whole table (index.ts).
 */
import type { OpHandler, OpName, OpsTable } from './context';

async function areaOf(method: OpName): Promise<Partial<OpsTable>> {
  const [area] = method.split('/');
  if (method === 'vault/stats' || method === 'vault/gc' || area === 'quota' || area === 'audit') return (await import('./store')).storeOps;
  switch (area) {
    case 'vault':
      return (await import('./vaults')).vaultOps;
    case 'fs':
      return (await import('./files')).fileOps;
    case 'checkpoint':
      return (await import('./checkpoints')).checkpointOps;
    case 'mount':
      return (await import('./mounts')).mountOps;
    case 'policy':
      return (await import('./policy')).policyOps;
  }
  throw new Error(`no operations module for ${method}`);
}

export async function loadOp<M extends OpName>(method: M): Promise<OpHandler<M>> {
  const op = (await areaOf(method))[method];
  if (!op) throw new Error(`operation ${method} is not in its area's module`);
  return op as OpHandler<M>;
}
