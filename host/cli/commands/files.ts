/** File commands: ls, stat, cat, write, mkdir, rm, rmdir, mv, cp, ln, chmod, touch, pwd, tree (handlers: ../handlers/files.ts). */
import type { Command } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  example(
    program
      .command('ls [path]')
      .description('list a directory')
      .option('-l, --long', 'show mode, links, size and modification time')
      .option('-a, --all', 'include entries whose names start with a dot')
      .action(act('files.ls')),
    'avfs ls -l /src',
  );
  example(
    program.command('stat <path>').description('show a path\'s metadata (symlinks are not followed)').option('-L, --dereference', 'follow a symlink').action(act('files.stat')),
    'avfs stat /package.json --json',
  );
  example(program.command('cat <path>').description('print a file (binary-safe; --json gives utf8 or base64 content)').action(act('files.cat')), 'avfs cat /README.md');
  example(
    program
      .command('write <path> [content]')
      .description('write a file from CONTENT, or from standard input when CONTENT is omitted')
      .option('-a, --append', 'append instead of replacing')
      .option('-m, --mode <octal>', 'permission bits for a new file', '644')
      .option('-p, --parents', 'create missing parent directories')
      .action(act('files.write')),
    'avfs write /notes.txt "hello"',
    'cat image.png | avfs write /img/logo.png -p',
  );
  example(
    program
      .command('mkdir <path>')
      .description('create a directory')
      .option('-p, --parents', 'create missing parents; an existing directory is not an error')
      .option('-m, --mode <octal>', 'permission bits', '755')
      .action(act('files.mkdir')),
    'avfs mkdir -p /src/lib',
  );
  example(
    program
      .command('rm <path>')
      .description('remove a file, symlink or (with -r) directory')
      .option('-r, --recursive', 'remove directories and their contents')
      .option('-f, --force', 'ignore a missing path')
      .action(act('files.rm')),
    'avfs rm -r /build',
  );
  example(program.command('rmdir <path>').description('remove an empty directory').action(act('files.rmdir')), 'avfs rmdir /empty');
  example(program.command('mv <src> <dst>').description('move or rename (replaces an existing file, or an empty directory)').action(act('files.mv')), 'avfs mv /a.txt /b.txt');
  example(
    program
      .command('cp <src> <dst>')
      .description('copy a file or (with -r) a tree; content is shared, not duplicated')
      .option('-r, --recursive', 'copy directories')
      .action(act('files.cp')),
    'avfs cp -r /src /src-backup',
  );
  example(
    program
      .command('ln <target> <path>')
      .description('create a hard link PATH to TARGET, or with -s a symbolic link PATH whose text is TARGET')
      .option('-s, --symbolic', 'make a symbolic link')
      .action(act('files.ln')),
    'avfs ln -s ../lib/index.js /bin/tool',
  );
  example(program.command('chmod <mode> <path>').description('set permission bits (octal)').action(act('files.chmod')), 'avfs chmod 755 /run.sh');
  example(
    program.command('touch <path>').description('create an empty file, or set an existing one\'s modification time to now').action(act('files.touch')),
    'avfs touch /.keep',
  );
  example(program.command('pwd').description('the working directory inside a vault (always the root: vault paths are absolute)').action(act('files.pwd')), 'avfs pwd');
  example(
    program
      .command('tree [path]')
      .description('show a directory tree')
      .option('-L, --level <n>', 'descend at most N levels', '64')
      .option('-a, --all', 'include dot files')
      .action(act('files.tree')),
    'avfs tree -L 2 /',
  );
}
