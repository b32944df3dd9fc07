/** Vaults: create, list, fork, delete, upgrade (the contract: ../methods.ts). */
import { z } from 'zod';
import { Backend, Quotas, VaultInfo, VaultSummary } from '../vault';
import { QuotaValues, define } from './define';

export const VAULT_METHODS = {
  'vault/list': define(z.object({}), z.object({ vaults: z.array(VaultSummary) }), 'every vault in the home, forks after their parent'),
  'vault/create': define(
    z.object({
      name: z.string(),
      quotas: QuotaValues.partial().optional(),
      use: z.boolean().default(true),
      backend: Backend.optional().describe('default: sqlite (or $AVFS_BACKEND)'),
      url: z.string().optional().describe('postgres: the server (postgresql://user[:password]@host[:port]/database; default $AVFS_PG_URL)'),
    }),
    z.object({ created: z.string(), current: z.boolean(), backend: Backend, path: z.string(), location: z.string(), quotas: Quotas }),
    'create a vault (and make it current unless use is false)',
  ),
  'vault/attach': define(
    z.object({ name: z.string(), backend: z.literal('postgres'), url: z.string(), use: z.boolean().default(true) }),
    z.object({ attached: z.string(), current: z.boolean(), backend: Backend, path: z.string(), location: z.string() }),
    'register in this home a vault that exists on a server already (made from another home or machine)',
  ),
  'vault/info': define(z.object({ name: z.string().optional() }), VaultInfo, 'one vault: sizes, quotas, parent, forks, checkpoints'),
  'vault/use': define(z.object({ name: z.string() }), z.object({ current: z.string() }), 'make a vault the current one'),
  'vault/fork': define(
    z.object({ source: z.string(), name: z.string(), use: z.boolean().default(false) }),
    z.object({ source: z.string(), name: z.string(), current: z.boolean(), backend: Backend, path: z.string(), copy_on_write: z.boolean(), duration_ms: z.number() }),
    'fork a vault: a task copy that costs metadata only',
  ),
  'vault/delete': define(
    z.object({ name: z.string(), flatten: z.boolean().default(false) }),
    z.object({ deleted: z.string(), flattened: z.array(z.string()) }),
    'delete a vault (refused while mounted, or while forks read from it unless flatten)',
  ),
  'vault/convert': define(
    z.object({ name: z.string(), backend: Backend }),
    z.object({ vault: z.string(), from: Backend, to: Backend, files: z.number(), checkpoints: z.number(), chunks: z.number(), verified: z.boolean(), duration_ms: z.number() }),
    'copy a vault onto another storage backend (checkpoints included), verify the copy, then put it in the vault\'s place',
  ),
  'vault/upgrade': define(
    z.object({ name: z.string() }),
    z.object({ vault: z.string(), from: z.number(), to: z.number(), upgraded: z.boolean() }),
    'apply the schema migrations a vault written by an older avfs is missing',
  ),
} as const;
