/**
 * A method's schemas, with its area's table (../areas.ts) loaded alone: a process that makes one
 * call (the CLI) builds the schemas of that area only, not the whole contract (../methods.ts merges them).
 */
import { areaOf, type MethodArea } from '../areas';
import type { MethodName } from '../methods';

/** The params and result schemas of one method, loading only its area's table. */
export async function methodSchemas<M extends MethodName>(method: M): Promise<(typeof import('../methods').METHODS)[M]> {
  return (await METHOD_TABLES[areaOf(method)]())[method] as (typeof import('../methods').METHODS)[M];
}

/** Each area's table, from the file named by the area. */
export const METHOD_TABLES: Record<MethodArea, () => Promise<Record<string, unknown>>> = {
  vault: async () => (await import('./vault')).VAULT_METHODS,
  files: async () => (await import('./files')).FILE_METHODS,
  store: async () => (await import('./store')).STORE_METHODS,
  checkpoint: async () => (await import('./checkpoint')).CHECKPOINT_METHODS,
  mount: async () => (await import('./mount')).MOUNT_METHODS,
  policy: async () => (await import('./policy')).POLICY_METHODS,
  exec: async () => (await import('./exec')).EXEC_METHODS,
  project: async () => (await import('./project')).PROJECT_METHODS,
};
