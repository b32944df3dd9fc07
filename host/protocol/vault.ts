/** Vault-level contract: names, quotas, vault info, file stat, directory entries. */
import { z } from 'zod';
import { VAULT_NAME_RE } from './names';

export { VAULT_NAME_RE };
export const VaultName = z
  .string()
  .regex(VAULT_NAME_RE, 'a vault name is 1-64 characters of A-Z a-z 0-9 _ -, not starting with -');

export const QuotaKey = z.enum(['max_size_mb', 'max_files', 'max_file_size_mb']);
export type QuotaKey = z.infer<typeof QuotaKey>;

export const Quotas = z.object({
  max_size_mb: z.number().nullable(),
  max_files: z.number().nullable(),
  max_file_size_mb: z.number().nullable(),
});
export type Quotas = z.infer<typeof Quotas>;

export const QuotaStatus = Quotas.extend({
  current_size_bytes: z.number(),
  current_size_human: z.string(),
  current_files: z.number(),
  size_usage_percent: z.number().nullable(),
  files_usage_percent: z.number().nullable(),
});
export type QuotaStatus = z.infer<typeof QuotaStatus>;

/** `fifo` and `socket` are special files made in a mount (mkfifo, bind); they hold no bytes. */
export const FileType = z.enum(['file', 'directory', 'symlink', 'other', 'fifo', 'socket']);
export type FileType = z.infer<typeof FileType>;

export const Stat = z.object({
  path: z.string(),
  type: FileType,
  ino: z.number(),
  mode: z.string().describe('permission bits in octal, e.g. "0644"'),
  nlink: z.number(),
  uid: z.number(),
  gid: z.number(),
  size: z.number(),
  atime: z.string(),
  mtime: z.string(),
  ctime: z.string(),
  mtime_ns: z.string().describe('nanoseconds since the epoch, as a decimal string'),
  target: z.string().optional(),
});
export type Stat = z.infer<typeof Stat>;

export const DirEntry = z.object({
  name: z.string(),
  type: FileType,
  size: z.number(),
  modified: z.string(),
  ino: z.number().optional(),
  mode: z.string().optional(),
  nlink: z.number().optional(),
  target: z.string().optional(),
});
export type DirEntry = z.infer<typeof DirEntry>;

/** Where a vault's metadata and chunks live (docs/architecture.md, "Storage backends"). */
export const Backend = z.enum(['sqlite', 'lmdb', 'postgres']);

const VaultFile = z.object({
  name: z.string(),
  current: z.boolean(),
  size_on_disk: z.number(),
  backend: Backend,
  location: z.string().describe("where the vault lives: its file in this home, or its server's URL (any password replaced by ***)"),
});

const VaultSummaryOk = VaultFile.extend({
  status: z.literal('ok'),
  size: z.number().describe('logical bytes of the live tree'),
  files: z.number(),
  parent: z.string().nullable(),
});

/** A file in the vaults directory that this avfs cannot read as a vault (damaged, not a vault, newer schema, no access). */
const VaultSummaryUnreadable = VaultFile.extend({
  status: z.literal('unreadable'),
  reason: z.string().describe('why the file cannot be read; `avfs vault delete NAME` removes it'),
});

export const VaultSummary = z.discriminatedUnion('status', [VaultSummaryOk, VaultSummaryUnreadable]);
export type VaultSummary = z.infer<typeof VaultSummary>;

/** What the read-time chunk check found (host/store/chunks.ts): the first chunk whose bytes no longer match their SHA-256. */
export const VaultDamage = z.object({
  found_at: z.string().describe('when a read first found it'),
  chunk: z.string().describe('the SHA-256 (hex) the bytes on disk no longer match'),
  files: z.array(z.string()).describe('the paths of the live tree whose content holds that chunk (they cannot be read; every other file can)'),
  checkpoints: z.array(z.string()).describe('the checkpoints that hold it (restoring one would fail)'),
  recovery: z.string().describe('the commands that get the vault whole again, in a sentence'),
});
export type VaultDamage = z.infer<typeof VaultDamage>;

export const VaultInfo = VaultSummaryOk.extend({
  path: z.string(),
  created_at: z.string().nullable(),
  schema_version: z.number().describe("the vault file's schema version (an older one is upgraded by the first write)"),
  chunk_size: z.number(),
  chunks: z.number(),
  quotas: Quotas,
  forks: z.array(z.string()),
  checkpoints: z.array(z.string()),
  damaged: VaultDamage.nullable().describe('set once a read found a chunk changed on disk; null when none was'),
});
export type VaultInfo = z.infer<typeof VaultInfo>;
