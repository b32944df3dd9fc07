/** Files: what a FileSystemProvider needs, and the CLI's file commands (the contract: ../methods.ts). */
import { z } from 'zod';
import { ExportResult, FileText, ImportResult, TreeNode } from '../files';
import { DirEntry, Stat } from '../vault';
import { Base64, HostPath, Mode, PathRef, VaultRef, define } from './define';

export const FILE_METHODS = {
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
} as const;
