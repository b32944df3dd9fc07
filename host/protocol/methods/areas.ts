/**
 * Which area's table defines a method, and that table loaded alone: a process that makes one call
 * (the CLI) builds the schemas of that area only, not the whole contract (../methods.ts merges them).
 */
import type { MethodName } from '../methods';

export type MethodArea = 'vault' | 'files' | 'checkpoints' | 'store' | 'mounts' | 'policy' | 'exec' | 'project';

export function areaOf(method: MethodName): MethodArea {
  const [prefix] = method.split('/');
  if (method === 'vault/stats' || method === 'vault/gc' || prefix === 'quota' || prefix === 'audit') return 'store';
  switch (prefix) {
    case 'vault':
      return 'vault';
    case 'fs':
      return 'files';
    case 'checkpoint':
      return 'checkpoints';
    case 'mount':
      return 'mounts';
    case 'policy':
      return 'policy';
    case 'exec':
      return 'exec';
    case 'project':
      return 'project';
  }
  throw new Error(`no area for the method ${method}`);
}

/** The params and result schemas of one method, loading only its area's table. */
export async function methodSchemas<M extends MethodName>(method: M): Promise<(typeof import('../methods').METHODS)[M]> {
  return (await tableOf(areaOf(method)))[method] as (typeof import('../methods').METHODS)[M];
}

async function tableOf(area: MethodArea): Promise<Record<string, unknown>> {
  switch (area) {
    case 'vault': return (await import('./vault')).VAULT_METHODS;
    case 'files': return (await import('./files')).FILE_METHODS;
    case 'checkpoints': return (await import('./checkpoints')).CHECKPOINT_METHODS;
    case 'store': return (await import('./store')).STORE_METHODS;
    case 'mounts': return (await import('./mounts')).MOUNT_METHODS;
    case 'policy': return (await import('./policy')).POLICY_METHODS;
    case 'exec': return (await import('./exec')).EXEC_METHODS;
    case 'project': return (await import('./project')).PROJECT_METHODS;
  }
}
