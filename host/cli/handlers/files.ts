/** Handlers of the file commands: parse → one operation → render. */
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import type { TreeNode } from '../../protocol/files';
import type { DirEntry } from '../../protocol/vault';
import { terminalText } from '../../protocol/terminalText';
import { cliVaultPath } from '../../vfs/paths';
import { type CliContext, parseCount, table } from '../context';
import { spoolStdin } from '../stdin';

function parseMode(value: string): number {
  if (!/^[0-7]{1,4}$/.test(value)) throw new AvfsError('InvalidInput', `mode must be octal like 644 or 0755, got ${JSON.stringify(value)}`, { value });
  return parseInt(value, 8);
}

function renderTree(node: TreeNode): string {
  const t = (x: string | undefined) => terminalText(x ?? '');
  const lines = [t(node.name)];
  const walk = (n: TreeNode, prefix: string): void => {
    const kids = n.children ?? [];
    kids.forEach((k, i) => {
      const last = i === kids.length - 1;
      const label = k.type === 'directory' ? t(k.name) + '/' : k.type === 'symlink' ? `${t(k.name)} -> ${t(k.target)}` : t(k.name);
      lines.push(prefix + (last ? '└── ' : '├── ') + label);
      walk(k, prefix + (last ? '    ' : '│   '));
    });
  };
  walk(node, '');
  return lines.join('\n');
}

function typeChar(t: DirEntry['type']): string {
  return t === 'directory' ? 'd' : t === 'symlink' ? 'l' : t === 'file' ? '-' : '?';
}

/** Mutations print nothing without --json (as coreutils do). */
const quiet = () => undefined;

export const fileHandlers = {
  'files.ls': async (ctx: CliContext, p: string | undefined, opts: { long?: boolean; all?: boolean }, cmd: Command) => {
    const r = await ctx.call('fs/readDirectory', { ...ctx.inVault(cmd), path: cliVaultPath(p ?? '/'), all: !!opts.all, list_file: true });
    ctx.print(cmd, r, () => {
      if (!opts.long) return r.entries.map((e) => terminalText(e.name) + (e.type === 'directory' ? '/' : '')).join('\n');
      return table(
        r.entries.map((e) => [
          typeChar(e.type) + (e.mode ?? ''),
          String(e.nlink ?? ''),
          String(e.size),
          e.modified,
          e.name + (e.type === 'symlink' ? ` -> ${e.target}` : e.type === 'directory' ? '/' : ''),
        ]),
      );
    });
  },

  'files.stat': async (ctx: CliContext, p: string, opts: { dereference?: boolean }, cmd: Command) => {
    const st = await ctx.call('fs/stat', { ...ctx.inVault(cmd), path: cliVaultPath(p), follow: !!opts.dereference });
    ctx.print(cmd, st, () => table(Object.entries(st).map(([k, v]) => [k, String(v)])));
  },

  'files.cat': async (ctx: CliContext, p: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('fs/readText', { ...ctx.inVault(cmd), path: cliVaultPath(p) });
    ctx.print(cmd, r, () => Buffer.from(r.content, r.encoding === 'utf8' ? 'utf8' : 'base64'));
  },

  /**
   * From CONTENT: one fs/writeFile call. From standard input: always in this process, streamed
   * (a quota stops it as the input passes it; nothing is held whole, which one RPC message would).
   */
  'files.write': async (ctx: CliContext, p: string, content: string | undefined, opts: { append?: boolean; mode: string; parents?: boolean }, cmd: Command) => {
    const params = { ...ctx.inVault(cmd), path: cliVaultPath(p), mode: parseMode(opts.mode), append: !!opts.append, parents: !!opts.parents, create: true, overwrite: true };
    const r =
      content !== undefined
        ? await ctx.call('fs/writeFile', { ...params, data: Buffer.from(content, 'utf8').toString('base64') })
        : await (await import('../../ops/files')).writeFromStream(await ctx.opsContext(), params, (check) => spoolStdin(check));
    ctx.print(cmd, r, quiet);
  },

  'files.mkdir': async (ctx: CliContext, p: string, opts: { parents?: boolean; mode: string }, cmd: Command) => {
    const r = await ctx.call('fs/createDirectory', { ...ctx.inVault(cmd), path: cliVaultPath(p), parents: !!opts.parents, mode: parseMode(opts.mode) });
    ctx.print(cmd, r, quiet);
  },

  'files.rm': async (ctx: CliContext, p: string, opts: { recursive?: boolean; force?: boolean }, cmd: Command) => {
    const r = await ctx.call('fs/delete', { ...ctx.inVault(cmd), path: cliVaultPath(p), recursive: !!opts.recursive, force: !!opts.force });
    ctx.print(cmd, r, quiet);
  },

  'files.rmdir': async (ctx: CliContext, p: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('fs/delete', { ...ctx.inVault(cmd), path: cliVaultPath(p), directory_only: true });
    ctx.print(cmd, r, quiet);
  },

  'files.mv': async (ctx: CliContext, src: string, dst: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('fs/rename', { ...ctx.inVault(cmd), from: cliVaultPath(src), to: cliVaultPath(dst), into_directory: true });
    ctx.print(cmd, r, quiet);
  },

  'files.cp': async (ctx: CliContext, src: string, dst: string, opts: { recursive?: boolean }, cmd: Command) => {
    const r = await ctx.call('fs/copy', { ...ctx.inVault(cmd), from: cliVaultPath(src), to: cliVaultPath(dst), recursive: !!opts.recursive });
    ctx.print(cmd, r, quiet);
  },

  'files.ln': async (ctx: CliContext, target: string, p: string, opts: { symbolic?: boolean }, cmd: Command) => {
    // A symlink's text is kept as written; a hard link's target is a vault path.
    const r = await ctx.call('fs/link', { ...ctx.inVault(cmd), path: cliVaultPath(p), target: opts.symbolic ? target : cliVaultPath(target), symbolic: !!opts.symbolic });
    ctx.print(cmd, r, quiet);
  },

  'files.chmod': async (ctx: CliContext, mode: string, p: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('fs/chmod', { ...ctx.inVault(cmd), path: cliVaultPath(p), mode: parseMode(mode) });
    ctx.print(cmd, r, quiet);
  },

  'files.touch': async (ctx: CliContext, p: string, _opts: unknown, cmd: Command) => {
    const r = await ctx.call('fs/touch', { ...ctx.inVault(cmd), path: cliVaultPath(p) });
    ctx.print(cmd, r, quiet);
  },

  'files.pwd': (ctx: CliContext, _opts: unknown, cmd: Command) => ctx.print(cmd, { path: '/' }, () => '/'),

  'files.tree': async (ctx: CliContext, p: string | undefined, opts: { level: string; all?: boolean }, cmd: Command) => {
    const level = parseCount('--level', opts.level);
    if (level < 1) throw new AvfsError('InvalidInput', `--level must be a whole number >= 1, got ${opts.level}`, { field: '--level', value: opts.level });
    const r = await ctx.call('fs/tree', { ...ctx.inVault(cmd), path: cliVaultPath(p ?? '/'), level, all: !!opts.all });
    ctx.print(cmd, r, () => renderTree(r.tree));
  },
};
