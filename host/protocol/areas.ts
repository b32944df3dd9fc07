/**
 * The areas of avfs, one name each. What a one-call process (the CLI) loads lazily, it loads by
 * area, and every such file is named by its area:
 * - a command's handlers: host/cli/handlers/<area>.ts, handlers named `<area>.<verb>`;
 * - a method's schemas: host/protocol/methods/<area>.ts (areaOf below says which method is where);
 * - a method's operations: host/ops/<area>.ts.
 * scripts/build.mjs makes dist/avfs-policy.js by leaving out every file of these three folders
 * not named `policy`. test/protocol/areas.test.ts fails when a loader, a file or a name disagrees.
 */
import type { MethodName } from './methods';

export const AREAS = ['vault', 'files', 'store', 'checkpoint', 'mount', 'policy', 'exec', 'project', 'host', 'mcp', 'hook'] as const;
export type Area = (typeof AREAS)[number];

/** The areas with RPC methods (the rest are the CLI's alone: `avfs host`, `avfs mcp`, `avfs hook`). */
export type MethodArea = Exclude<Area, 'host' | 'mcp' | 'hook'>;

/** The area of a method: its prefix, but `fs/` (files) and the whole-vault methods of `avfs gc`, `quota`, `audit` (store). */
export function areaOf(method: MethodName): MethodArea {
  const [prefix] = method.split('/');
  if (method === 'vault/stats' || method === 'vault/gc' || prefix === 'quota' || prefix === 'audit') return 'store';
  if (prefix === 'fs') return 'files';
  if (prefix === 'vault' || prefix === 'checkpoint' || prefix === 'mount' || prefix === 'policy' || prefix === 'exec' || prefix === 'project') return prefix;
  throw new Error(`no area for the method ${method}`);
}
