/**
 * The MCP tools of `avfs mcp`: each a thin wrapper over one operation of the table (or a few: edit
 * reads then writes, search walks the tree) or the exec pipeline, through the backend (the running
 * host, else this process). Inputs are zod schemas (the SDK publishes them as JSON Schema and
 * refuses arguments that do not fit); results are the operations' own result schemas, returned as
 * `structuredContent` with a short text for clients that read only text.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ServerNotification, ServerRequest, ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { z } from 'zod';
import { ChangeSummary, CheckpointInfo, RestoreResult } from '../protocol/changes';
import { ProjectBase } from '../protocol/project';
import { AvfsError, toAvfsError } from '../protocol/errors';
import { ExecRequest, type ExecRequestInput, type ExecutionEnvelope, ExecutionEnvelope as Envelope } from '../protocol/exec';
import { FileText, type TreeNode } from '../protocol/files';
import { DirEntry, Stat, VaultSummary } from '../protocol/vault';
import { METHODS } from '../protocol/methods';
import type { McpBackend } from './backend';

/** The longest path an argument may hold (the kernel's PATH_MAX, as the vfs bounds one path). */
const PATH_MAX = 4096;
/** The most text one write or one edit may carry (a write of more goes through `exec` or the CLI). */
export const MAX_CONTENT_CHARS = 16 * 1024 * 1024;
/** Characters of a command's output put in the text part of an exec result (the envelope holds it all). */
const TEXT_OUTPUT_CHARS = 32 * 1024;
/** Files larger than this are not searched for content. */
const GREP_MAX_FILE_BYTES = 1024 * 1024;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ToolContext {
  backend: McpBackend;
  /** The vault of --vault; undefined: the current vault, as each operation resolves it. */
  vault: string | undefined;
  /** Mounts that exec kept up for this server (mountpoint → vault): released before a restore of their vault, and when the server stops. */
  kept: Map<string, string>;
}

/** Unmounts the mounts this server's exec calls kept up (of one vault, or all); returns how many. */
export async function releaseKept(ctx: ToolContext, vault?: string): Promise<number> {
  let n = 0;
  for (const [mountpoint, v] of [...ctx.kept]) {
    if (vault !== undefined && v !== vault) continue;
    ctx.kept.delete(mountpoint);
    const r = await ctx.backend.call('mount/unmount', { mountpoint, timeout_ms: 10_000 }).catch(() => undefined);
    if (r?.unmounted) n++;
  }
  return n;
}

const VaultPath = z.string().min(1).max(PATH_MAX).describe('a path inside the vault, absolute (/src/app.ts); a relative one is taken from /');
const VaultArg = z.string().max(255).optional().describe('the vault to work in (default: the one the server was started on, else the current vault)');

/** A vault path as the operations take it: absolute. `..` above the root and NUL are refused by the vfs (InvalidPath). */
export const absolute = (p: string): string => (p.startsWith('/') ? p : `/${p}`);

/** A tool error the client reads: the avfs error kind, its message and details. */
export function toolError(e: unknown): CallToolResult {
  const ae = toAvfsError(e);
  return { isError: true, content: [{ type: 'text', text: `${ae.kind}: ${ae.message}\n${JSON.stringify(ae.toJSON())}` }] };
}

interface ToolSpec<I extends z.ZodRawShape, O extends z.ZodType> {
  title: string;
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  run: (args: z.output<z.ZodObject<I>>, extra: Extra) => Promise<{ result: z.output<O>; text: string; isError?: boolean }>;
}

function define<I extends z.ZodRawShape, O extends z.ZodType>(server: McpServer, name: string, spec: ToolSpec<I, O>): void {
  server.registerTool(
    name,
    {
      title: spec.title,
      description: spec.description,
      // Strict: an argument the tool does not know is refused rather than silently ignored.
      inputSchema: z.strictObject(spec.input),
      outputSchema: spec.output as unknown as z.ZodObject,
      annotations: { title: spec.title, openWorldHint: false, ...spec.annotations },
    },
    (async (args: z.output<z.ZodObject<I>>, extra: Extra): Promise<CallToolResult> => {
      try {
        const { result, text, isError } = await spec.run(args, extra);
        return { content: [{ type: 'text', text }], structuredContent: result as Record<string, unknown>, ...(isError ? { isError: true } : {}) };
      } catch (e) {
        return toolError(e);
      }
    }) as never,
  );
}

const READ_ONLY: ToolAnnotations = { readOnlyHint: true, idempotentHint: true };

/** The vault params of an operation: the tool's `vault`, else the server's, else none (the current one). */
function inVault(ctx: ToolContext, vault: string | undefined): { vault?: string } {
  const v = vault ?? ctx.vault;
  return v !== undefined ? { vault: v } : {};
}

/** The name of the vault a tool works in (the current one looked up when none is named). */
async function vaultName(ctx: ToolContext, vault: string | undefined): Promise<string> {
  const v = vault ?? ctx.vault;
  if (v !== undefined) return v;
  return (await ctx.backend.call('vault/info', {})).name;
}

/** Every entry under `root` of a tree, with its path, depth first. */
function* walk(node: TreeNode, path: string): Generator<{ path: string; node: TreeNode }> {
  for (const c of node.children ?? []) {
    const p = path === '/' ? `/${c.name}` : `${path}/${c.name}`;
    yield { path: p, node: c };
    yield* walk(c, p);
  }
}

function countMatches(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max / 2)}\n… (${text.length - max} characters left out) …\n${text.slice(-max / 2)}`;
}

/** The text part of an exec result: what happened, then the output. */
export function execText(env: ExecutionEnvelope): string {
  const r = env.result;
  const lines: string[] = [];
  if (r.state === 'completed') lines.push(`exit ${r.exit_code}${r.signal ? ` (${r.signal})` : ''} in ${r.duration_ms} ms`);
  else if (r.state === 'denied') {
    const d = r.decision;
    lines.push(`denied: nothing ran${d ? ` (policy: ${d.action}, rule ${d.rule ?? 'none'}: ${d.reason ?? ''})` : ''}`);
    if (r.approval) lines.push(`approval: ${r.approval.outcome}${r.approval.by ? ` by ${r.approval.by}` : ''}`);
    if (r.error) lines.push(`${r.error.error}: ${r.error.message}`);
  } else lines.push(`${r.state}${r.duration_ms ? ` after ${r.duration_ms} ms` : ''}${r.error ? `: ${r.error.error}: ${r.error.message}` : ''}`);
  if (r.checkpoint) lines.push(`checkpoint ${r.checkpoint} (checkpoint_restore it to undo the run)`);
  if (r.changed_files.length > 0) lines.push(`changed: ${r.changed_files.slice(0, 50).join(', ')}${r.changed_files.length > 50 ? ` and ${r.changed_files.length - 50} more` : ''}`);
  if (r.stdout) lines.push(`--- stdout${r.stdout_truncated ? ' (truncated)' : ''}\n${cut(r.stdout, TEXT_OUTPUT_CHARS)}`);
  if (r.stderr) lines.push(`--- stderr${r.stderr_truncated ? ' (truncated)' : ''}\n${cut(r.stderr, TEXT_OUTPUT_CHARS)}`);
  return lines.join('\n');
}

/**
 * exec's arguments: ExecRequest's own fields, with the command flattened for agents (`command`: a
 * shell line, or `argv`) and the mount kept by default (an agent runs many commands in a row; the
 * next one reuses it). Not an agent's to choose: where the vault is mounted and who else may reach
 * it (`mountpoint`, `allow_other`: a vault mounted and kept at an empty ~/.config/autostart would
 * put the agent's files in the user's session), nor the environment the sandbox reads (`caller_env`).
 */
const ExecInput = {
  ...ExecRequest.omit({ id: true, vault: true, command: true, caller_env: true, mountpoint: true, allow_other: true }).shape,
  command: z.string().min(1).max(1024 * 1024).optional().describe('a shell command line, run by bash -c in the vault (give this or argv)'),
  argv: z.array(z.string().max(1024 * 1024)).min(1).max(10_000).optional().describe('a program and its arguments, run as is (give this or command)'),
  keep_mount: z.boolean().default(true).describe('leave the mount up for the next call (default here: true)'),
  stdin: z.string().max(MAX_CONTENT_CHARS).optional().describe('text fed to the command (default: none)'),
  vault: VaultArg,
};

export function registerTools(server: McpServer, ctx: ToolContext): void {
  const { backend } = ctx;

  define(server, 'read_file', {
    title: 'Read a file',
    description:
      'Read a file of the vault. Text comes back as is (optionally only lines start_line..end_line, 1-based, inclusive); a file that is not UTF-8 comes back base64-encoded.',
    input: {
      path: VaultPath,
      start_line: z.number().int().min(1).optional().describe('first line to return (1-based)'),
      end_line: z.number().int().min(1).optional().describe('last line to return (inclusive)'),
      vault: VaultArg,
    },
    output: FileText.extend({
      total_lines: z.number().optional().describe('lines in the whole file (text files)'),
      start_line: z.number().optional(),
      end_line: z.number().optional(),
    }),
    annotations: READ_ONLY,
    run: async (a) => {
      const f = await backend.call('fs/readText', { ...inVault(ctx, a.vault), path: absolute(a.path) });
      if (f.encoding !== 'utf8') return { result: f, text: `(${f.size} bytes, not UTF-8: base64)\n${f.content}` };
      if (a.start_line === undefined && a.end_line === undefined) return { result: f, text: f.content };
      const lines = f.content.split('\n');
      const total = f.content.endsWith('\n') ? lines.length - 1 : lines.length;
      const start = a.start_line ?? 1;
      const end = Math.min(a.end_line ?? total, total);
      if (end < start && !(start === 1 && total === 0)) {
        throw new AvfsError('InvalidInput', `lines ${start}..${a.end_line ?? total} are outside the file (${total} lines)`, { field: 'start_line', total_lines: total });
      }
      const content = lines.slice(start - 1, end).join('\n') + (end >= 1 && (end < total || f.content.endsWith('\n')) ? '\n' : '');
      return { result: { ...f, content, total_lines: total, start_line: start, end_line: end }, text: content };
    },
  });

  define(server, 'write_file', {
    title: 'Write a file',
    description: 'Create or replace a file of the vault with the given content (missing parent directories are created). Quotas apply.',
    input: {
      path: VaultPath,
      content: z.string().max(MAX_CONTENT_CHARS).describe('the whole new content'),
      encoding: z.enum(['utf8', 'base64']).default('utf8').describe('how content is given'),
      vault: VaultArg,
    },
    output: METHODS['fs/writeFile'].result,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    run: async (a) => {
      const data = a.encoding === 'base64' ? a.content : Buffer.from(a.content, 'utf8').toString('base64');
      const r = await backend.call('fs/writeFile', { ...inVault(ctx, a.vault), path: absolute(a.path), data, parents: true });
      return { result: r, text: `${r.created ? 'created' : 'wrote'} ${r.path} (${r.size} bytes)` };
    },
  });

  define(server, 'edit_file', {
    title: 'Edit a file',
    description:
      'Replace exact text in a text file of the vault, edit by edit, and return a unified diff. Each old_text must occur exactly once (or give replace_all); an ambiguous or missing match changes nothing. dry_run shows the diff without writing.',
    input: {
      path: VaultPath,
      edits: z
        .array(
          z.strictObject({
            old_text: z.string().min(1).max(MAX_CONTENT_CHARS).describe('text to find, exactly (whitespace included)'),
            new_text: z.string().max(MAX_CONTENT_CHARS).describe('what replaces it'),
            replace_all: z.boolean().default(false).describe('replace every occurrence instead of requiring exactly one'),
          }),
        )
        .min(1)
        .max(1000),
      dry_run: z.boolean().default(false),
      vault: VaultArg,
    },
    output: z.object({ path: z.string(), diff: z.string(), replacements: z.number(), written: z.boolean() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
    run: async (a) => {
      const path = absolute(a.path);
      const f = await backend.call('fs/readText', { ...inVault(ctx, a.vault), path });
      if (f.encoding !== 'utf8') throw new AvfsError('InvalidInput', `${path} is not a UTF-8 text file: it cannot be edited as text`, { path });
      let text = f.content;
      let replacements = 0;
      a.edits.forEach((e, i) => {
        const n = countMatches(text, e.old_text);
        if (n === 0) throw new AvfsError('InvalidInput', `edits[${i}].old_text was not found in ${path}: nothing was changed`, { field: `edits[${i}].old_text`, matches: 0 });
        if (n > 1 && !e.replace_all) {
          throw new AvfsError('InvalidInput', `edits[${i}].old_text occurs ${n} times in ${path}: give more context to make it unique, or replace_all; nothing was changed`, {
            field: `edits[${i}].old_text`,
            matches: n,
          });
        }
        text = e.replace_all ? text.split(e.old_text).join(e.new_text) : text.replace(e.old_text, () => e.new_text);
        replacements += e.replace_all ? n : 1;
      });
      const { createTwoFilesPatch } = await import('diff');
      const diff = createTwoFilesPatch(path, path, f.content, text, undefined, undefined, { context: 3 });
      if (!a.dry_run && text !== f.content) {
        await backend.call('fs/writeFile', { ...inVault(ctx, a.vault), path, data: Buffer.from(text, 'utf8').toString('base64'), create: false });
      }
      return { result: { path, diff, replacements, written: !a.dry_run && text !== f.content }, text: diff };
    },
  });

  define(server, 'list_directory', {
    title: 'List a directory',
    description: 'The entries of a directory of the vault: name, type, size, modification time.',
    input: { path: VaultPath.default('/'), vault: VaultArg },
    output: z.object({ path: z.string(), entries: z.array(DirEntry) }),
    annotations: READ_ONLY,
    run: async (a) => {
      const r = await backend.call('fs/readDirectory', { ...inVault(ctx, a.vault), path: absolute(a.path), all: true, list_file: false });
      const text = r.entries.map((e) => `${e.type === 'directory' ? '[DIR] ' : e.type === 'symlink' ? '[LINK]' : '[FILE]'} ${e.name}${e.type === 'file' ? ` (${e.size} bytes)` : ''}`).join('\n');
      return { result: r, text: text || '(empty directory)' };
    },
  });

  const Match = z.object({ path: z.string(), type: z.string(), size: z.number() });
  define(server, 'search_files', {
    title: 'Find files by name',
    description: 'Find files and directories under a path whose path (relative to it) matches a glob: "**/*.ts", "src/**/test_*.py", "*.md". Dot files are included.',
    input: {
      pattern: z.string().min(1).max(PATH_MAX).describe('a glob over the path relative to `path`'),
      path: VaultPath.default('/'),
      exclude: z.array(z.string().max(PATH_MAX)).max(100).default([]).describe('globs of paths to leave out (e.g. "**/node_modules/**")'),
      max_results: z.number().int().min(1).max(10_000).default(500),
      vault: VaultArg,
    },
    output: z.object({ matches: z.array(Match), truncated: z.boolean() }),
    annotations: READ_ONLY,
    run: async (a) => {
      const root = absolute(a.path);
      const { tree } = await backend.call('fs/tree', { ...inVault(ctx, a.vault), path: root, level: 64, all: true });
      const picomatch = (await import('picomatch')).default;
      const matches = picomatch(a.pattern, { dot: true });
      const excluded = a.exclude.length ? picomatch(a.exclude, { dot: true }) : () => false;
      const found: z.infer<typeof Match>[] = [];
      let truncated = false;
      const base = root.replace(/\/+$/, '') || '/';
      for (const { path, node } of walk(tree, base)) {
        const rel = path.slice(base === '/' ? 1 : base.length + 1);
        if (excluded(rel) || !matches(rel)) continue;
        if (found.length >= a.max_results) {
          truncated = true;
          break;
        }
        found.push({ path, type: node.type, size: node.size });
      }
      return { result: { matches: found, truncated }, text: found.map((m) => m.path).join('\n') + (truncated ? '\n(more matches: raise max_results)' : '') || 'no matches' };
    },
  });

  const Hit = z.object({ path: z.string(), line: z.number(), text: z.string() });
  define(server, 'grep', {
    title: 'Search file contents',
    description:
      'Search the text files under a path for a regular expression (JavaScript syntax; fixed_string for plain text), line by line: each match with its path and line number. Files over 1 MiB and files that are not UTF-8 are skipped.',
    input: {
      pattern: z.string().min(1).max(10_000),
      path: VaultPath.default('/'),
      include: z.string().max(PATH_MAX).optional().describe('only files whose path (relative to `path`) matches this glob, e.g. "**/*.ts"'),
      ignore_case: z.boolean().default(false),
      fixed_string: z.boolean().default(false),
      max_results: z.number().int().min(1).max(10_000).default(200),
      vault: VaultArg,
    },
    output: z.object({ matches: z.array(Hit), files_searched: z.number(), truncated: z.boolean() }),
    annotations: READ_ONLY,
    run: async (a, extra) => {
      let re: RegExp;
      try {
        re = new RegExp(a.fixed_string ? a.pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : a.pattern, a.ignore_case ? 'i' : '');
      } catch (e) {
        throw new AvfsError('InvalidInput', `pattern is not a valid regular expression: ${e instanceof Error ? e.message : String(e)}`, { field: 'pattern' });
      }
      const root = absolute(a.path);
      const v = inVault(ctx, a.vault);
      const st = await backend.call('fs/stat', { ...v, path: root, follow: true });
      const files: string[] = [];
      const base = root.replace(/\/+$/, '') || '/';
      if (st.type === 'file') files.push(root);
      else {
        const { tree } = await backend.call('fs/tree', { ...v, path: root, level: 64, all: true });
        const picomatch = (await import('picomatch')).default;
        const included = a.include ? picomatch(a.include, { dot: true }) : () => true;
        for (const { path, node } of walk(tree, base)) {
          if (node.type === 'file' && node.size <= GREP_MAX_FILE_BYTES && included(path.slice(base === '/' ? 1 : base.length + 1))) files.push(path);
        }
      }
      const hits: z.infer<typeof Hit>[] = [];
      let truncated = false;
      let searched = 0;
      for (const path of files) {
        if (extra.signal.aborted || truncated) break;
        const f = await backend.call('fs/readText', { ...v, path });
        if (f.encoding !== 'utf8') continue;
        searched++;
        const lines = f.content.split('\n');
        for (let i = 0; i < lines.length; i++) {
          if (!re.test(lines[i]!)) continue;
          if (hits.length >= a.max_results) {
            truncated = true;
            break;
          }
          hits.push({ path, line: i + 1, text: lines[i]!.length > 1000 ? `${lines[i]!.slice(0, 1000)}…` : lines[i]! });
        }
      }
      const text = hits.map((h) => `${h.path}:${h.line}: ${h.text}`).join('\n') + (truncated ? '\n(more matches: raise max_results)' : '');
      return { result: { matches: hits, files_searched: searched, truncated }, text: text || `no matches in ${searched} file(s)` };
    },
  });

  define(server, 'file_info', {
    title: 'File info',
    description: 'Metadata of a path in the vault: type, size, mode, owner, times, inode; a symlink\'s target.',
    input: { path: VaultPath, vault: VaultArg },
    output: Stat,
    annotations: READ_ONLY,
    run: async (a) => {
      const s = await backend.call('fs/stat', { ...inVault(ctx, a.vault), path: absolute(a.path), follow: false });
      return { result: s, text: `${s.path}: ${s.type}, ${s.size} bytes, mode ${s.mode}, modified ${s.mtime}${s.target ? `, -> ${s.target}` : ''}` };
    },
  });

  define(server, 'checkpoint_save', {
    title: 'Save a checkpoint',
    description: 'Save the vault\'s current tree as a checkpoint (cheap: metadata only), to diff against or restore later.',
    input: {
      name: z.string().max(128).optional().describe('1-128 characters of A-Z a-z 0-9 . _ - (default: an automatic name)'),
      description: z.string().max(10_000).optional(),
      vault: VaultArg,
    },
    output: CheckpointInfo,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    run: async (a) => {
      const c = await backend.call('checkpoint/save', { ...inVault(ctx, a.vault), ...(a.name !== undefined ? { name: a.name } : {}), ...(a.description !== undefined ? { description: a.description } : {}) });
      return { result: c, text: `saved checkpoint ${c.name} (${c.file_count} entries, ${c.total_size_human})` };
    },
  });

  define(server, 'checkpoint_list', {
    title: 'List checkpoints',
    description: 'The vault\'s checkpoints, oldest first (automatic ones are made before each exec that changes files, and before a restore).',
    input: { vault: VaultArg },
    output: z.object({ checkpoints: z.array(CheckpointInfo) }),
    annotations: READ_ONLY,
    run: async (a) => {
      const r = await backend.call('checkpoint/list', inVault(ctx, a.vault));
      return { result: r, text: r.checkpoints.map((c) => `${c.name}  ${c.created_at}${c.description ? `  ${c.description}` : ''}`).join('\n') || 'no checkpoints' };
    },
  });

  define(server, 'checkpoint_diff', {
    title: 'Diff checkpoints',
    description: 'What changed between a checkpoint and the current tree (or another checkpoint): files added, deleted, modified, renamed; patch adds unified diffs of text files.',
    input: {
      from: z.string().max(128).describe('a checkpoint name'),
      to: z.string().max(128).default('current').describe('a checkpoint name, or "current"'),
      patch: z.boolean().default(false),
      vault: VaultArg,
    },
    output: ChangeSummary,
    annotations: READ_ONLY,
    run: async (a) => {
      const d = await backend.call('checkpoint/diff', { ...inVault(ctx, a.vault), from: a.from, to: a.to, patch: a.patch });
      const lines = [
        ...d.added.map((e) => `A ${e.path}`),
        ...d.modified.map((e) => `M ${e.path}`),
        ...d.deleted.map((e) => `D ${e.path}`),
        ...d.renamed.map((e) => `R ${e.from} -> ${e.to}`),
      ];
      return { result: d, text: [lines.join('\n') || 'no changes', ...(d.patch ? [d.patch] : [])].join('\n') };
    },
  });

  define(server, 'checkpoint_restore', {
    title: 'Restore a checkpoint',
    description:
      'Put the vault\'s tree back as it was at a checkpoint. The current tree is saved first as an automatic checkpoint (undo_checkpoint), so a restore can itself be undone. A mount that exec kept up for this server is taken down first; a restore is refused while another mount of the vault is up.',
    input: { name: z.string().max(128), force: z.boolean().default(false).describe('restore even past a quota'), vault: VaultArg },
    output: RestoreResult,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true },
    run: async (a) => {
      const params = { ...inVault(ctx, a.vault), name: a.name, force: a.force };
      let r;
      try {
        r = await backend.call('checkpoint/restore', params);
      } catch (e) {
        // A restore is refused while the vault is mounted: a mount exec kept up for this server is released, and the restore tried again.
        if (!(e instanceof AvfsError && e.kind === 'VaultInUse') || (await releaseKept(ctx, await vaultName(ctx, a.vault))) === 0) throw e;
        r = await backend.call('checkpoint/restore', params);
      }
      return { result: r, text: `restored ${r.checkpoint} (${r.files_restored} files); undo with checkpoint_restore ${r.undo_checkpoint}` };
    },
  });

  define(server, 'fork_create', {
    title: 'Fork the vault',
    description: 'Make a new vault that starts as a copy of this one (metadata only, copy on write): a place to try something without touching the original.',
    input: { name: z.string().min(1).max(255).describe('the new vault\'s name'), source: VaultArg.describe('the vault to fork (default: the server\'s vault, else the current one)') },
    output: METHODS['vault/fork'].result,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    run: async (a) => {
      const r = await backend.call('vault/fork', { source: await vaultName(ctx, a.source), name: a.name, use: false });
      return { result: r, text: `forked ${r.source} as ${r.name} in ${r.duration_ms} ms` };
    },
  });

  define(server, 'fork_list', {
    title: 'List forks',
    description: 'The vaults forked from a vault (directly), with their sizes.',
    input: { vault: VaultArg },
    output: z.object({ vault: z.string(), forks: z.array(VaultSummary) }),
    annotations: READ_ONLY,
    run: async (a) => {
      const name = await vaultName(ctx, a.vault);
      const { vaults } = await backend.call('vault/list', {});
      const forks = vaults.filter((v) => v.status === 'ok' && v.parent === name);
      return { result: { vault: name, forks }, text: forks.map((f) => f.name).join('\n') || `${name} has no forks` };
    },
  });

  define(server, 'vault_list', {
    title: 'List vaults',
    description: 'Every vault of the avfs home (forks after their parent), with which one is current.',
    input: {},
    output: METHODS['vault/list'].result,
    annotations: READ_ONLY,
    run: async () => {
      const r = await backend.call('vault/list', {});
      return { result: r, text: r.vaults.map((v) => `${v.current ? '* ' : '  '}${v.name}${v.status === 'ok' ? ` (${v.files} files${v.parent ? `, fork of ${v.parent}` : ''})` : ` (unreadable)`}`).join('\n') || 'no vaults' };
    },
  });

  define(server, 'vault_create', {
    title: 'Create a vault',
    description: 'Create a new, empty vault (it does not become the current one unless use is true).',
    input: { name: z.string().min(1).max(255), use: z.boolean().default(false).describe('make it the current vault') },
    output: METHODS['vault/create'].result,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false },
    run: async (a) => {
      const r = await backend.call('vault/create', { name: a.name, use: a.use });
      return { result: r, text: `created vault ${r.created}` };
    },
  });

  define(server, 'project_changes', {
    title: 'Changes against the project base',
    description:
      'For a vault made from a project folder (avfs mcp --from, avfs vault create --from): what the vault changed since its base (the project as the vault last agreed with it), each change checked against the project as it is now: "apply" (avfs apply would write it), "same" (the project has it already) or "conflict" (the project changed it too; the reason says how). patch adds unified diffs against the project\'s files. Nothing is written to the vault or the project (an apply of the project that was interrupted earlier is rolled back first, as every apply does).',
    input: { patch: z.boolean().default(false), vault: VaultArg },
    output: METHODS['project/apply'].result.extend({ base: ProjectBase }),
    annotations: READ_ONLY,
    run: async (a) => {
      const v = inVault(ctx, a.vault);
      const { base } = await backend.call('project/base', { vault: await vaultName(ctx, a.vault) });
      if (!base) throw new AvfsError('NotFound', `vault ${await vaultName(ctx, a.vault)} was not made from a project: it has no base to compare with`, { vault: await vaultName(ctx, a.vault) });
      const plan = await backend.call('project/apply', { ...v, dry_run: true, patch: a.patch });
      const lines = plan.changes.map((c) => `${c.status === 'conflict' ? '!' : c.status === 'same' ? '=' : ' '} ${c.action} ${c.from !== undefined ? `${c.from} -> ` : ''}${c.path}${c.reason ? ` (${c.reason})` : ''}`);
      const head = `base: ${base.source}${base.git_commit ? ` at ${base.git_commit.slice(0, 12)}` : ''}; ${plan.changes.length} change(s), ${plan.conflicts.length} conflict(s)`;
      return { result: { ...plan, base }, text: [head, ...lines, ...(plan.patch ? [plan.patch] : [])].join('\n') };
    },
  });

  define(server, 'exec', {
    title: 'Run a command in the vault',
    description:
      'Run a shell command (or an argv) with the vault mounted as its file system: the avfs policy judges it first (a denied command runs nothing), a checkpoint is taken when the policy asks for one, an approval is asked in VS Code when the policy requires it, the run is bounded by timeout_ms, and the result is the ExecutionEnvelope: exit code, stdout, stderr, the checkpoint to undo it, and every file it changed. cwd is a path inside the vault.',
    input: ExecInput,
    output: Envelope,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    run: async (a, extra) => {
      const { command, argv, vault, ...rest } = a;
      if ((command === undefined) === (argv === undefined)) throw new AvfsError('InvalidInput', 'give exactly one of command (a shell line) or argv', { field: 'command' });
      const request = {
        ...rest,
        ...inVault(ctx, vault),
        command: command !== undefined ? { shell: command } : { argv: argv! },
      } as ExecRequestInput;
      const token = extra._meta?.progressToken;
      let progress = 0;
      const notify = (message: string) => {
        if (token === undefined) return;
        void extra
          .sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: ++progress, message } })
          .catch(() => undefined);
      };
      const env = await backend.exec(request, {
        signal: extra.signal,
        onState: (state) => notify(`state: ${state}`),
        onOutput: (stream, text) => notify(`${stream}: ${text.length > 4000 ? `…${text.slice(-4000)}` : text}`),
      });
      if (env.result.kept_mounted && !env.result.mount_reused && env.result.mountpoint && env.result.vault) ctx.kept.set(env.result.mountpoint, env.result.vault);
      const ok = env.result.state === 'completed';
      return { result: env, text: execText(env), isError: !ok };
    },
  });
}
