/**
 * The record files other processes read to find a running part of avfs, as written in an avfs
 * home: `<home>/host.json` names the vault host (host/daemon/lock.ts writes it), and each file in
 * `<home>/mounts/` a live mount (host/fuse/registry.ts). Their formats are part of the contract
 * (docs/schema/host-record.schema.json, mount-record.schema.json): a CLI of one version reads a
 * host's or a mount server's of another.
 */
import { z } from 'zod';

/** `<home>/host.json`: the host that serves the home, claimed with O_EXCL (one host per home). */
export const HostRecord = z.object({
  pid: z.number().int(),
  /** Its Unix socket (the path, or the abstract name a too-long path became). */
  socket: z.string(),
  started_at: z.string(),
  version: z.string(),
});
export type HostRecord = z.infer<typeof HostRecord>;

/** `<home>/mounts/<hash>.json`: one live mount and the process serving it. */
export const MountRecord = z.object({
  vault: z.string(),
  mountpoint: z.string(),
  readonly: z.boolean(),
  /** Other users may reach it (absent in records written before the option existed: false). */
  allow_other: z.boolean().optional(),
  pid: z.number().int(),
  started: z.string(),
  state: z.enum(['mounting', 'mounted', 'unmounting']),
  log: z.string().optional(),
  /** The server's exec endpoint (host/proxy/mountExec.ts): a CLI call that finds this mount hands its run there. */
  exec_socket: z.string().optional(),
  /** The avfs version of the server (a call of another version runs in its own process). */
  version: z.string().optional(),
});
export type MountRecord = z.infer<typeof MountRecord>;
