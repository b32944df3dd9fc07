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
import { AuditEntry, ChangeSummary, CheckpointInfo, RestoreResult } from './changes';
import { ExecRequest, ExecutionEnvelope } from './exec';
import { ExportResult, FileText, ImportResult, TreeNode } from './files';
import { Decision, PolicyCommand, PolicyRulesReport } from './policy';
import { DirEntry, QuotaKey, Quotas, QuotaStatus, Stat, VaultInfo, VaultSummary } from './vault';

const VaultRef = z.object({ vault: z.string().optional() });
const PathRef = VaultRef.extend({ path: z.string() });
const Base64 = z.string().describe('bytes, base64-encoded');
const Mode = z.number().int().min(0).max(0o7777);
/** A quota as a caller sets it: a whole number, or null for none. */
const QuotaValues = z.object({
  max_size_mb: z.number().int().min(0).nullable(),
  max_files: z.number().int().min(0).nullable(),
  max_file_size_mb: z.number().int().min(0).nullable(),
});
/** A path on the host's own file system: absolute, or relative to host_cwd (the caller's working directory). */
const HostPath = {
  host_path: z.string().min(1),
  host_cwd: z.string().optional().describe('absolute; what a relative host_path is taken from (the CLI sends its own cwd)'),
};

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
    z.object({ name: z.string(), quotas: QuotaValues.partial().optional(), use: z.boolean().default(true) }),
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
  'vault/upgrade': define(
    z.object({ name: z.string() }),
    z.object({ vault: z.string(), from: z.number(), to: z.number(), upgraded: z.boolean() }),
    'apply the schema migrations a vault written by an older avfs is missing',
  ),

  // ---- files (what a FileSystemProvider needs, and the CLI's file commands)
  'fs/stat': define(PathRef.extend({ follow: z.boolean().default(false) }), Stat, 'metadata of a path (a final symlink is not followed unless follow)'),
  'fs/readDirectory': define(
    PathRef.extend({
      all: z.boolean().default(true).describe('false: leave out names that start with a dot'),
      list_file: z.boolean().default(false).describe('a path that is not a directory is listed as its only entry (as ls does) rather than refused'),
    }),
    z.object({ path: z.string(), entries: z.array(DirEntry) }),
    'the entries of a directory',
  ),
  'fs/readFile': define(PathRef, z.object({ path: z.string(), size: z.number(), data: Base64 }), 'the bytes of a file'),
  'fs/readText': define(PathRef, FileText, 'a file as text when its bytes are UTF-8, else as base64 (what `avfs cat --json` prints)'),
  'fs/writeFile': define(
    PathRef.extend({
      data: Base64,
      create: z.boolean().default(true).describe('create the file if it is missing'),
      overwrite: z.boolean().default(true).describe('replace the file if it exists'),
      append: z.boolean().default(false),
      parents: z.boolean().default(false).describe('create missing parent directories'),
      mode: Mode.optional().describe('permission bits of a new file (default 0644)'),
    }),
    z.object({ path: z.string(), size: z.number(), written: z.number(), appended: z.boolean(), created: z.boolean() }),
    'write a whole file (quotas apply: QuotaExceeded names the quota)',
  ),
  'fs/createDirectory': define(
    PathRef.extend({ parents: z.boolean().default(false), mode: Mode.optional() }),
    z.object({ path: z.string(), created: z.boolean().describe('false: with parents, the directory was there already') }),
    'create a directory',
  ),
  'fs/delete': define(
    PathRef.extend({
      recursive: z.boolean().default(false),
      force: z.boolean().default(false).describe('a missing path is not an error (removed: 0)'),
      directory_only: z.boolean().default(false).describe('only an empty directory may be removed (rmdir)'),
    }),
    z.object({ path: z.string(), removed: z.number() }),
    'delete a file, symlink or directory',
  ),
  'fs/rename': define(
    VaultRef.extend({
      from: z.string(),
      to: z.string(),
      overwrite: z.boolean().default(true),
      into_directory: z.boolean().default(false).describe('when `to` is a directory and `from` is not, move into it (as mv does)'),
    }),
    z.object({ from: z.string(), to: z.string() }),
    'rename or move (over an existing file unless overwrite is false)',
  ),
  'fs/copy': define(
    VaultRef.extend({ from: z.string(), to: z.string(), recursive: z.boolean().default(false), overwrite: z.boolean().default(true) }),
    z.object({ from: z.string(), to: z.string(), copied: z.number() }),
    'copy a file or tree inside the vault (chunks are shared, not copied)',
  ),
  'fs/link': define(
    PathRef.extend({ target: z.string(), symbolic: z.boolean().default(false) }),
    z.object({ path: z.string(), target: z.string(), symbolic: z.boolean() }),
    'make a hard link at path to the file target, or a symbolic link whose text is target',
  ),
  'fs/chmod': define(PathRef.extend({ mode: Mode }), z.object({ path: z.string(), mode: z.string() }), 'set permission bits'),
  'fs/touch': define(PathRef, z.object({ path: z.string(), mtime: z.string() }), 'create an empty file, or set an existing one\'s times to now'),
  'fs/tree': define(
    PathRef.extend({ path: z.string().default('/'), level: z.number().int().min(1).default(64), all: z.boolean().default(false) }),
    z.object({ path: z.string(), tree: TreeNode }),
    'a directory tree, down to level (dot files with all)',
  ),
  'fs/import': define(
    VaultRef.extend({ ...HostPath, path: z.string().default('/'), force: z.boolean().default(false) }),
    ImportResult,
    'copy a host file or directory into the vault, in one transaction',
  ),
  'fs/export': define(VaultRef.extend({ ...HostPath, path: z.string(), force: z.boolean().default(false) }), ExportResult, 'copy a vault file or directory out to the host'),

  // ---- checkpoints
  'checkpoint/save': define(VaultRef.extend({ name: z.string().optional(), description: z.string().optional() }), CheckpointInfo, 'save the current tree (metadata only)'),
  'checkpoint/list': define(VaultRef, z.object({ checkpoints: z.array(CheckpointInfo) }), 'checkpoints, oldest first'),
  'checkpoint/info': define(VaultRef.extend({ name: z.string() }), CheckpointInfo, 'one checkpoint'),
  'checkpoint/restore': define(
    VaultRef.extend({ name: z.string(), force: z.boolean().default(false) }),
    RestoreResult,
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
    z.object({ chunks_total: z.number(), orphans_found: z.number(), orphans_deleted: z.number(), bytes_freed: z.number(), dry_run: z.boolean() }),
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

  // ---- policy and exec
  'policy/check': define(
    VaultRef.extend({ command: PolicyCommand, cwd: z.string().default('/'), mountpoint: z.string().optional() }),
    Decision.extend({ context: z.object({ mountpoint: z.string(), cwd: z.string(), vault: z.string().nullable(), rule_files: z.array(z.string()) }) }),
    'decide a command without running it',
  ),
  'policy/rules': define(VaultRef, PolicyRulesReport, 'the effective rules and where each came from'),
  'policy/setVaultRules': define(
    VaultRef.extend({
      rules: z.string().nullable().describe('the text of a rules file (validated, then stored in the vault), or null to remove the vault\'s rules'),
      origin: z.string().default('rules').describe('what the text came from, for error messages (a file name)'),
    }),
    z.object({ vault: z.string(), action: z.enum(['set', 'cleared']), rules: z.number() }),
    'store policy rules in the vault, or remove them',
  ),
  'exec/run': define(ExecRequest, ExecutionEnvelope, 'run a command through the policy in a vault mount (cancellable); progress arrives as exec/* notifications'),
} as const;

export type MethodName = keyof typeof METHODS;
export type MethodParams<M extends MethodName> = z.input<(typeof METHODS)[M]['params']>;
export type MethodParamsParsed<M extends MethodName> = z.output<(typeof METHODS)[M]['params']>;
export type MethodResult<M extends MethodName> = z.output<(typeof METHODS)[M]['result']>;
export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];
