/** Mounts (the contract: ../methods.ts). */
import { z } from 'zod';
import { define } from './define';

export const MountInfo = z.object({
  vault: z.string(),
  mountpoint: z.string(),
  readonly: z.boolean(),
  allow_other: z.boolean(),
  pid: z.number(),
  started: z.string(),
  state: z.string(),
  live: z.boolean(),
  /** Who made it: `host` (unmounted when the host stops), `cli`, `exec` (a kept exec mount). */
  owner: z.string().optional(),
});
export type MountInfo = z.infer<typeof MountInfo>;

export const MOUNT_METHODS = {
  'mount/list': define(z.object({}), z.object({ mounts: z.array(MountInfo), cleaned: z.array(z.string()) }), 'live mounts (stale ones are cleaned first)'),
  'mount/mount': define(
    z.object({
      vault: z.string(),
      mountpoint: z.string().optional().describe('absolute'),
      readonly: z.boolean().default(false),
      allow_other: z.boolean().default(false),
      cache_ms: z.number().int().min(0).optional().describe('how long the kernel may cache names and attributes (default 1000)'),
    }),
    MountInfo,
    'mount a vault (default mountpoint: <home>/mnt/<vault>); served by its own process',
  ),
  'mount/unmount': define(
    z.object({ mountpoint: z.string().describe('absolute'), timeout_ms: z.number().int().min(0).default(10_000).describe('then the server is killed') }),
    z.object({ mountpoint: z.string(), unmounted: z.boolean(), vault: z.string().nullable(), pid: z.number().nullable() }),
    'unmount',
  ),
} as const;
