/** File commands: ls, stat, cat, write, mkdir, rm, mv, cp, ln, chmod, touch, tree. */
import type { Command } from 'commander';
import { TextDecoder } from 'node:util';
import { AvfsError } from '../../protocol/errors';
import type { DirEntry } from '../../protocol/vault';
import { kindOf } from '../../store/inodes';
import { cliVaultPath, joinPath, normalizePath, splitPath } from '../../vfs/paths';
import { isoTime, modeString, type Vfs } from '../../vfs/vfs';
import { action, type CliContext, example, table } from '../context';
import { type Spool, spoolStdin } from '../stdin';

const utf8 = new TextDecoder('utf-8', { fatal: true });
function decodeText(data: Buffer): string | undefined {
  try {
    return utf8.decode(data);
  } catch {
    return undefined;
  }
}

function parseMode(value: string): number {
  if (!/^[0-7]{1,4}$/.test(value)) throw new AvfsError('InvalidInput', `mode must be octal like 644 or 0755, got ${JSON.stringify(value)}`, { value });
  return parseInt(value, 8);
}

export interface TreeNode {
  name: string;
  type: DirEntry['type'];
  size: number;
  target?: string;
  children?: TreeNode[];
}

function buildTree(vfs: Vfs, path: string, name: string, depth: number, maxDepth: number, all: boolean): TreeNode {
  const st = vfs.stat(path, false);
  const node: TreeNode = { name, type: st.type, size: st.size, ...(st.target !== undefined ? { target: st.target } : {}) };
  if (st.type === 'directory' && depth < maxDepth) {
    node.children = vfs
      .readdir(path)
      .filter((e) => all || !e.name.startsWith('.'))
      .map((e) => buildTree(vfs, joinPath(path, e.name), e.name, depth + 1, maxDepth, all));
  }
  return node;
}

function renderTree(node: TreeNode): string {
  const lines = [node.name];
  const walk = (n: TreeNode, prefix: string): void => {
    const kids = n.children ?? [];
    kids.forEach((k, i) => {
      const last = i === kids.length - 1;
      const label = k.type === 'directory' ? k.name + '/' : k.type === 'symlink' ? `${k.name} -> ${k.target}` : k.name;
      lines.push(prefix + (last ? '└── ' : '├── ') + label);
      walk(k, prefix + (last ? '    ' : '│   '));
    });
  };
  walk(node, '');
  return lines.join('\n');
}

export function register(program: Command, ctx: CliContext): void {
  example(
    program
      .command('ls [path]')
      .description('list a directory')
      .option('-l, --long', 'show mode, links, size and modification time')
      .option('-a, --all', 'include entries whose names start with a dot')
      .action(
        action(ctx, (p: string | undefined, opts: { long?: boolean; all?: boolean }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p ?? '/');
            const st = vfs.stat(path, true);
            let entries: DirEntry[] =
              st.type === 'directory'
                ? vfs.readdir(path)
                : [{ name: splitPath(path).pop() ?? '/', type: st.type, size: st.size, modified: st.mtime, ino: st.ino, mode: st.mode, nlink: st.nlink }];
            if (!opts.all) entries = entries.filter((e) => !e.name.startsWith('.'));
            ctx.print(cmd, { path: normalizePath(path), entries }, () => {
              if (!opts.long) return entries.map((e) => e.name + (e.type === 'directory' ? '/' : '')).join('\n');
              return table(
                entries.map((e) => [
                  typeChar(e.type) + (e.mode ?? ''),
                  String(e.nlink ?? ''),
                  String(e.size),
                  e.modified,
                  e.name + (e.type === 'symlink' ? ` -> ${e.target}` : e.type === 'directory' ? '/' : ''),
                ]),
              );
            });
          }, { readonly: true });
        }),
      ),
    'avfs ls -l /src',
  );

  example(
    program
      .command('stat <path>')
      .description('show a path\'s metadata (symlinks are not followed)')
      .option('-L, --dereference', 'follow a symlink')
      .action(
        action(ctx, (p: string, opts: { dereference?: boolean }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const st = vfs.stat(cliVaultPath(p), !!opts.dereference);
            ctx.print(cmd, st, () =>
              table(Object.entries(st).map(([k, v]) => [k, String(v)])),
            );
          }, { readonly: true });
        }),
      ),
    'avfs stat /package.json --json',
  );

  example(
    program
      .command('cat <path>')
      .description('print a file (binary-safe; --json gives utf8 or base64 content)')
      .action(
        action(ctx, (p: string, _opts: unknown, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p);
            const data = vfs.readFile(path);
            const text = decodeText(data);
            ctx.print(
              cmd,
              text !== undefined
                ? { path: normalizePath(path), size: data.length, encoding: 'utf8', content: text }
                : { path: normalizePath(path), size: data.length, encoding: 'base64', content: data.toString('base64') },
              () => data,
            );
          }, { readonly: true });
        }),
      ),
    'avfs cat /README.md',
  );

  example(
    program
      .command('write <path> [content]')
      .description('write a file from CONTENT, or from standard input when CONTENT is omitted')
      .option('-a, --append', 'append instead of replacing')
      .option('-m, --mode <octal>', 'permission bits for a new file', '644')
      .option('-p, --parents', 'create missing parent directories')
      .action(
        action(ctx, async (p: string, content: string | undefined, opts: { append?: boolean; mode: string; parents?: boolean }, cmd: Command) => {
          const path = cliVaultPath(p);
          const mode = parseMode(opts.mode);
          const append = !!opts.append;
          await ctx.withVfs(cmd, async (vfs) => {
            const existed = vfs.exists(path);
            // Standard input is streamed: refused as soon as it passes a quota, never held whole.
            let spool: Spool | undefined;
            try {
              const text = content !== undefined ? Buffer.from(content, 'utf8') : undefined;
              if (text === undefined) spool = await spoolStdin(vfs.quotaProbe(path, { append }));
              const attr = vfs.mutate(path, () => {
                if (opts.parents) vfs.mkdir('/' + splitPath(path).slice(0, -1).join('/'), { parents: true });
                return vfs.writeFile(path, text ?? spool!.blocks(), { append, mode });
              });
              const written = text?.length ?? spool!.size;
              ctx.print(cmd, { path: normalizePath(path), size: attr.size, written, appended: append, created: !existed }, () => undefined);
            } finally {
              spool?.dispose();
            }
          });
        }),
      ),
    'avfs write /notes.txt "hello"',
    'cat image.png | avfs write /img/logo.png -p',
  );

  example(
    program
      .command('mkdir <path>')
      .description('create a directory')
      .option('-p, --parents', 'create missing parents; an existing directory is not an error')
      .option('-m, --mode <octal>', 'permission bits', '755')
      .action(
        action(ctx, (p: string, opts: { parents?: boolean; mode: string }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p);
            vfs.mkdir(path, { parents: !!opts.parents, mode: parseMode(opts.mode) });
            ctx.print(cmd, { path: normalizePath(path), created: true }, () => undefined);
          });
        }),
      ),
    'avfs mkdir -p /src/lib',
  );

  example(
    program
      .command('rm <path>')
      .description('remove a file, symlink or (with -r) directory')
      .option('-r, --recursive', 'remove directories and their contents')
      .option('-f, --force', 'ignore a missing path')
      .action(
        action(ctx, (p: string, opts: { recursive?: boolean; force?: boolean }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p);
            const { removed } = vfs.rm(path, { recursive: !!opts.recursive, force: !!opts.force });
            ctx.print(cmd, { path: normalizePath(path), removed }, () => undefined);
          });
        }),
      ),
    'avfs rm -r /build',
  );

  example(
    program
      .command('rmdir <path>')
      .description('remove an empty directory')
      .action(
        action(ctx, (p: string, _opts: unknown, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p);
            vfs.rm(path, { dirOnly: true });
            ctx.print(cmd, { path: normalizePath(path), removed: 1 }, () => undefined);
          });
        }),
      ),
    'avfs rmdir /empty',
  );

  example(
    program
      .command('mv <src> <dst>')
      .description('move or rename (replaces an existing file, or an empty directory)')
      .action(
        action(ctx, (src: string, dst: string, _opts: unknown, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const from = cliVaultPath(src);
            let to = cliVaultPath(dst);
            const target = vfs.tryResolve(to, true);
            if (target && kindOf(target.attr.mode) === 'directory' && kindOf(vfs.resolve(from, false).attr.mode) !== 'directory') {
              to = joinPath(target.path, splitPath(from).pop() ?? '');
            }
            vfs.rename(from, to);
            ctx.print(cmd, { from: normalizePath(from), to: normalizePath(to) }, () => undefined);
          });
        }),
      ),
    'avfs mv /a.txt /b.txt',
  );

  example(
    program
      .command('cp <src> <dst>')
      .description('copy a file or (with -r) a tree; content is shared, not duplicated')
      .option('-r, --recursive', 'copy directories')
      .action(
        action(ctx, (src: string, dst: string, opts: { recursive?: boolean }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const from = cliVaultPath(src);
            const to = cliVaultPath(dst);
            const { copied } = vfs.copy(from, to, { recursive: !!opts.recursive });
            ctx.print(cmd, { from: normalizePath(from), to: normalizePath(to), copied }, () => undefined);
          });
        }),
      ),
    'avfs cp -r /src /src-backup',
  );

  example(
    program
      .command('ln <target> <path>')
      .description('create a hard link PATH to TARGET, or with -s a symbolic link PATH whose text is TARGET')
      .option('-s, --symbolic', 'make a symbolic link')
      .action(
        action(ctx, (target: string, p: string, opts: { symbolic?: boolean }, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p);
            if (opts.symbolic) vfs.symlink(target, path);
            else vfs.link(cliVaultPath(target), path);
            ctx.print(cmd, { path: normalizePath(path), target, symbolic: !!opts.symbolic }, () => undefined);
          });
        }),
      ),
    'avfs ln -s ../lib/index.js /bin/tool',
  );

  example(
    program
      .command('chmod <mode> <path>')
      .description('set permission bits (octal)')
      .action(
        action(ctx, (mode: string, p: string, _opts: unknown, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p);
            const attr = vfs.setattr(path, { mode: parseMode(mode) });
            ctx.print(cmd, { path: normalizePath(path), mode: modeString(attr.mode) }, () => undefined);
          });
        }),
      ),
    'avfs chmod 755 /run.sh',
  );

  example(
    program
      .command('touch <path>')
      .description('create an empty file, or set an existing one\'s modification time to now')
      .action(
        action(ctx, (p: string, _opts: unknown, cmd: Command) => {
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p);
            const now = BigInt(Date.now()) * 1_000_000n;
            const attr = vfs.mutate(path, () =>
              vfs.exists(path) ? vfs.setattr(path, { atime: now, mtime: now }) : vfs.writeFile(path, Buffer.alloc(0), { exclusive: true }),
            );
            ctx.print(cmd, { path: normalizePath(path), mtime: isoTime(attr.mtime) }, () => undefined);
          });
        }),
      ),
    'avfs touch /.keep',
  );

  example(
    program
      .command('pwd')
      .description('the working directory inside a vault (always the root: vault paths are absolute)')
      .action(action(ctx, (_opts: unknown, cmd: Command) => ctx.print(cmd, { path: '/' }, () => '/'))),
    'avfs pwd',
  );

  example(
    program
      .command('tree [path]')
      .description('show a directory tree')
      .option('-L, --level <n>', 'descend at most N levels', '64')
      .option('-a, --all', 'include dot files')
      .action(
        action(ctx, (p: string | undefined, opts: { level: string; all?: boolean }, cmd: Command) => {
          const level = Number(opts.level);
          if (!Number.isInteger(level) || level < 1) throw new AvfsError('InvalidInput', `--level must be a whole number >= 1, got ${opts.level}`);
          ctx.withVfs(cmd, (vfs) => {
            const path = cliVaultPath(p ?? '/');
            const shown = normalizePath(path);
            const tree = buildTree(vfs, path, shown, 0, level, !!opts.all);
            ctx.print(cmd, { path: shown, tree }, () => renderTree(tree));
          }, { readonly: true });
        }),
      ),
    'avfs tree -L 2 /',
  );

}

function typeChar(t: DirEntry['type']): string {
  return t === 'directory' ? 'd' : t === 'symlink' ? 'l' : t === 'file' ? '-' : '?';
}
