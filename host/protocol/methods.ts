/**
 * Every operation a caller can ask of avfs, once: its name (`area/verb`), its params and its
 * result. The operations layer (host/ops) implements them; the CLI renders their results (its
 * `--json` output is the result, unchanged); the vault host serves them over JSON-RPC; the VS
 * Code extension calls them. Nothing else defines an operation's shape.
 *
 * Conventions: `vault` names a vault (absent: the current one); vault paths are absolute
 * (`/src/app.py`); file contents travel as base64; every result is an object.
 */
import { z } from 'zod';
import { AuditEntry, ChangeSummary, CheckpointInfo } from './changes';
import { ExecRequest, ExecutionEnvelope } from './exec';
import { Decision, PolicyCommand, PolicyRulesReport } from './policy';
import { DirEntry, QuotaKey, Quotas, QuotaStatus, Stat, VaultInfo, VaultSummary } from './vault';

const VaultRef = z.object({ vault: z.string().optional() });
const PathRef = VaultRef.extend({ path: z.string() });
const Base64 = z.string().describe('bytes, base64-encoded');

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

const define = <P extends z.ZodType, R extends z.ZodType>(params: P, result: R, doc: string) => ({ params, result, doc });

export const METHODS = {
  // ---- vaults
  'vault/list': define(z.object({}), z.object({ vaults: z.array(VaultSummary) }), 'every vault in the home, forks after their parent'),
  'vault/create': define(
    z.object({ name: z.string(), quotas: Quotas.partial().optional(), use: z.boolean().default(true) }),
    z.object({ created: z.string(), current: z.boolean(), backend: z.literal('sqlite'), path: z.string(), quotas: Quotas }),
    'create a vault (and make it current unless use is false)',
  ),
  'vault/info': define(z.object({ name: z.string().optional() }), VaultInfo, 'one vault: sizes, quotas, parent, forks, checkpoints'),
  'vault/use': define(z.object({ name: z.string() }), z.object({ current: z.string() }), 'make a vault the current one'),
  'vault/fork': define(
    z.object({ source: z.string(), name: z.string(), use: z.boolean().default(false) }),
    z.object({ source: z.string(), name: z.string(), current: z.boolean(), backend: z.literal('sqlite'), path: z.string(), copy_on_write: z.boolean(), duration_ms: z.number() }),
    'fork a vault: a task copy that costs metadata only',
  ),
  'vault/delete': define(
    z.object({ name: z.string(), flatten: z.boolean().default(false) }),
    z.object({ deleted: z.string(), flattened: z.array(z.string()) }),
    'delete a vault (refused while mounted, or while forks read from it unless flatten)',
  ),

  // ---- files (what a FileSystemProvider needs, and the CLI's file commands)
  'fs/stat': define(PathRef.extend({ follow: z.boolean().default(false) }), Stat, 'metadata of a path (a final symlink is not followed unless follow)'),
  'fs/readDirectory': define(PathRef, z.object({ path: z.string(), entries: z.array(DirEntry) }), 'the entries of a directory'),
  'fs/readFile': define(PathRef, z.object({ path: z.string(), size: z.number(), data: Base64 }), 'the bytes of a file'),
  'fs/writeFile': define(
    PathRef.extend({
      data: Base64,
      create: z.boolean().default(true).describe('create the file if it is missing'),
      overwrite: z.boolean().default(true).describe('replace the file if it exists'),
      append: z.boolean().default(false),
      parents: z.boolean().default(false).describe('create missing parent directories'),
      mode: z.number().int().min(0).max(0o7777).optional().describe('permission bits of a new file (default 0644)'),
    }),
    z.object({ path: z.string(), size: z.number(), written: z.number(), appended: z.boolean(), created: z.boolean() }),
    'write a whole file (quotas apply: QuotaExceeded names the quota)',
  ),
  'fs/createDirectory': define(
    PathRef.extend({ parents: z.boolean().default(false), mode: z.number().int().min(0).max(0o7777).optional() }),
    z.object({ path: z.string(), created: z.boolean() }),
    'create a directory',
  ),
  'fs/delete': define(PathRef.extend({ recursive: z.boolean().default(false) }), z.object({ path: z.string(), removed: z.number() }), 'delete a file, symlink or directory'),
  'fs/rename': define(
    VaultRef.extend({ from: z.string(), to: z.string(), overwrite: z.boolean().default(true) }),
    z.object({ from: z.string(), to: z.string() }),
    'rename or move (over an existing file unless overwrite is false)',
  ),
  'fs/copy': define(
    VaultRef.extend({ from: z.string(), to: z.string(), recursive: z.boolean().default(false), overwrite: z.boolean().default(true) }),
    z.object({ from: z.string(), to: z.string(), copied: z.number() }),
    'copy a file or tree inside the vault (chunks are shared, not copied)',
  ),

  // ---- checkpoints
  'checkpoint/save': define(VaultRef.extend({ name: z.string().optional(), description: z.string().optional() }), CheckpointInfo, 'save the current tree (metadata only)'),
  'checkpoint/list': define(VaultRef, z.object({ checkpoints: z.array(CheckpointInfo) }), 'checkpoints, oldest first'),
  'checkpoint/info': define(VaultRef.extend({ name: z.string() }), CheckpointInfo, 'one checkpoint'),
  'checkpoint/restore': define(
    VaultRef.extend({ name: z.string(), force: z.boolean().default(false) }),
    z.object({
      checkpoint: z.string(),
      undo_checkpoint: z.string(),
      files_restored: z.number(),
      dirs_restored: z.number(),
      changes: ChangeSummary.shape.totals,
    }),
    'put the tree back as it was (the current tree is saved first, as undo_checkpoint)',
  ),
  'checkpoint/delete': define(VaultRef.extend({ name: z.string() }), z.object({ action: z.literal('delete'), name: z.string() }), 'delete a checkpoint'),
  'checkpoint/diff': define(
    VaultRef.extend({ from: z.string(), to: z.string().default('current'), patch: z.boolean().default(false) }),
    ChangeSummary,
    'what changed between two checkpoints, or from one to the current tree',
  ),
  'checkpoint/stat': define(VaultRef.extend({ name: z.string(), path: z.string() }), Stat, 'a path as it was at a checkpoint'),
  'checkpoint/readDirectory': define(VaultRef.extend({ name: z.string(), path: z.string() }), z.object({ path: z.string(), entries: z.array(DirEntry) }), 'a directory as it was at a checkpoint'),
  'checkpoint/readFile': define(
    VaultRef.extend({ name: z.string(), path: z.string() }),
    z.object({ path: z.string(), size: z.number(), data: Base64 }),
    'a file as it was at a checkpoint',
  ),

  // ---- quotas, stats, gc, audit
  'quota/get': define(VaultRef, QuotaStatus, 'quotas and usage'),
  'quota/set': define(VaultRef.extend({ key: QuotaKey, value: z.number().int().min(0) }), z.object({ action: z.literal('set'), key: QuotaKey, value: z.number() }), 'set a quota'),
  'quota/clear': define(VaultRef.extend({ key: QuotaKey }), z.object({ action: z.literal('clear'), key: QuotaKey }), 'remove a quota'),
  'vault/stats': define(
    VaultRef,
    z.object({
      files: z.number(),
      directories: z.number(),
      symlinks: z.number(),
      total_size_bytes: z.number(),
      content_chunks: z.number(),
      stored_bytes: z.number(),
      checkpoints: z.number(),
      journal_entries: z.number(),
      size_on_disk: z.number(),
    }),
    'what the vault holds',
  ),
  'vault/gc': define(
    VaultRef.extend({ dry_run: z.boolean().default(false) }),
    z.object({ chunks_total: z.number(), orphans_found: z.number(), orphans_deleted: z.number(), bytes_freed: z.number() }),
    'delete chunks nothing references (forks included) and give the space back',
  ),
  'audit/list': define(
    VaultRef.extend({ limit: z.number().int().min(0).default(50), since_ms: z.number().default(0) }),
    z.object({ entries: z.array(AuditEntry), total_count: z.number() }),
    'the audit trail, newest first',
  ),

  // ---- mounts
  'mount/list': define(z.object({}), z.object({ mounts: z.array(MountInfo), cleaned: z.array(z.string()) }), 'live mounts (stale ones are cleaned first)'),
  'mount/mount': define(
    z.object({ vault: z.string(), mountpoint: z.string().optional(), readonly: z.boolean().default(false), allow_other: z.boolean().default(false) }),
    MountInfo,
    'mount a vault (default mountpoint: <home>/mnt/<vault>); served by its own process',
  ),
  'mount/unmount': define(
    z.object({ mountpoint: z.string() }),
    z.object({ mountpoint: z.string(), unmounted: z.boolean(), vault: z.string().nullable(), pid: z.number().nullable() }),
    'unmount',
  ),

  // ---- policy and exec
  'policy/check': define(
    VaultRef.extend({ command: PolicyCommand, cwd: z.string().default('/'), mountpoint: z.string().optional() }),
    Decision.extend({ context: z.object({ mountpoint: z.string(), cwd: z.string(), vault: z.string().nullable(), rule_files: z.array(z.string()) }) }),
    'decide a command without running it',
  ),
  'policy/rules': define(VaultRef, PolicyRulesReport, 'the effective rules and where each came from'),
  'exec/run': define(ExecRequest, ExecutionEnvelope, 'run a command through the policy in a vault mount (cancellable); progress arrives as exec/* notifications'),
} as const;

export type MethodName = keyof typeof METHODS;
export type MethodParams<M extends MethodName> = z.input<(typeof METHODS)[M]['params']>;
export type MethodParamsParsed<M extends MethodName> = z.output<(typeof METHODS)[M]['params']>;
export type MethodResult<M extends MethodName> = z.output<(typeof METHODS)[M]['result']>;
export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];
