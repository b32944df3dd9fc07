/**
 * The project's git repository, used from outside: the commit a vault starts from, a branch made of
 * the vault's changes (a temporary index and `git commit-tree`, so HEAD, the index and the working
 * tree are never touched), and a patch `git apply` takes.
 */
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { PathChange } from '../store/diff';
import { kindOf } from '../store/inodes';
import type { TreeReader } from './trees';

function git(cwd: string, args: string[], opts: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): string {
  const r = spawnSync('git', args, { cwd, input: opts.input, env: opts.env ?? process.env, maxBuffer: 1 << 30 });
  if (r.error) throw new AvfsError('NotSupported', `git is needed for this and could not run: ${r.error.message}`, { command: 'git' });
  if (r.status !== 0) {
    throw new AvfsError('StorageError', `git ${args[0]} failed in ${cwd}: ${r.stderr.toString().trim() || `exit ${r.status}`}`, { command: `git ${args[0]}`, path: cwd });
  }
  return r.stdout.toString().trim();
}

/** The commit checked out in `dir` and where `dir` sits in its repository, or null when it is not in one. */
export function gitInfo(dir: string): { commit: string | null; prefix: string } | null {
  const r = spawnSync('git', ['rev-parse', '--show-prefix'], { cwd: dir });
  if (r.error || r.status !== 0) return null;
  const prefix = r.stdout.toString().trim();
  const head = spawnSync('git', ['rev-parse', '--verify', '-q', 'HEAD^{commit}'], { cwd: dir });
  return { commit: head.status === 0 ? head.stdout.toString().trim() : null, prefix };
}

const ZERO = '0'.repeat(40);

/**
 * Commits the vault's changes (base tree → `to`) onto a new branch `name` whose parent is the base
 * commit. Refused if the branch exists. Returns the commit.
 */
export function commitBranch(root: string, baseCommit: string, prefix: string, name: string, message: string, changes: PathChange[], to: TreeReader): string {
  const check = spawnSync('git', ['check-ref-format', '--branch', name], { cwd: root });
  if (check.status !== 0) throw new AvfsError('InvalidInput', `not a valid branch name: ${name}`, { branch: name });
  if (spawnSync('git', ['show-ref', '--verify', '-q', `refs/heads/${name}`], { cwd: root }).status === 0) {
    throw new AvfsError('AlreadyExists', `branch ${name} already exists in the project repository`, { branch: name });
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'avfs-index-'));
  try {
    const env = { ...process.env, GIT_INDEX_FILE: path.join(tmp, 'index') };
    const top = git(root, ['rev-parse', '--show-toplevel']);
    git(top, ['read-tree', baseCommit], { env });
    const lines: string[] = [];
    for (const c of changes) {
      const p = prefix + c.path.slice(1);
      const a = c.after;
      const k = a ? kindOf(a.mode) : undefined;
      if (c.before && kindOf(c.before.mode) !== 'directory' && k !== kindOf(c.before.mode)) lines.push(`0 ${ZERO}\t${p}`);
      if (!a || k === 'directory') continue;
      if (k === 'symlink') {
        lines.push(`120000 ${git(top, ['hash-object', '-w', '--stdin'], { input: a.target ?? '' })}\t${p}`);
      } else if (k === 'file') {
        lines.push(`${a.mode & 0o111 ? '100755' : '100644'} ${git(top, ['hash-object', '-w', '--stdin'], { input: to.read(a) })}\t${p}`);
      }
    }
    if (lines.length > 0) git(top, ['update-index', '-z', '--index-info'], { env, input: lines.join('\0') + '\0' });
    const tree = git(top, ['write-tree'], { env });
    const ident = spawnSync('git', ['var', 'GIT_COMMITTER_IDENT'], { cwd: top });
    const who = ident.status === 0 ? {} : { GIT_AUTHOR_NAME: 'avfs', GIT_AUTHOR_EMAIL: 'avfs@localhost', GIT_COMMITTER_NAME: 'avfs', GIT_COMMITTER_EMAIL: 'avfs@localhost' };
    const commit = git(top, ['commit-tree', tree, '-p', baseCommit, '-F', '-'], { input: message, env: { ...process.env, ...who } });
    git(top, ['update-ref', `refs/heads/${name}`, commit, ZERO]);
    return commit;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * A patch of the vault's changes (base tree → `to`), in git's format (modes, symlinks, binary
 * files, new and deleted files), paths relative to the project folder: `git apply` takes it there.
 */
export function writePatch(file: string, changes: PathChange[], from: TreeReader, to: TreeReader): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'avfs-patch-'));
  try {
    const put = (side: string, c: PathChange, reader: TreeReader, n: NonNullable<PathChange['before']>) => {
      const dst = path.join(tmp, side, c.path);
      const k = kindOf(n.mode);
      if (k === 'directory') return;
      fs.mkdirSync(path.dirname(dst), { recursive: true });
      if (k === 'symlink') fs.symlinkSync(n.target ?? '', dst);
      else if (k === 'file') fs.writeFileSync(dst, reader.read(n), { mode: n.mode & 0o777 });
      if (k === 'file') fs.chmodSync(dst, n.mode & 0o777);
    };
    fs.mkdirSync(path.join(tmp, 'a'));
    fs.mkdirSync(path.join(tmp, 'b'));
    for (const c of changes) {
      if (c.before) put('a', c, from, c.before);
      if (c.after) put('b', c, to, c.after);
    }
    const r = spawnSync('git', ['diff', '--no-index', '--binary', '--no-prefix', '--no-color', '--no-ext-diff', 'a', 'b'], { cwd: tmp, maxBuffer: 1 << 30 });
    if (r.error) throw new AvfsError('NotSupported', `git is needed for --patch-out and could not run: ${r.error.message}`, { command: 'git' });
    if (r.status !== 0 && r.status !== 1) throw new AvfsError('StorageError', `git diff failed: ${r.stderr.toString().trim()}`, { command: 'git diff' });
    try {
      fs.writeFileSync(file, r.stdout);
    } catch (e) {
      throw new AvfsError('PermissionDenied', `cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { path: file });
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}
