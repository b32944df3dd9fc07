/**
 * The git configuration a run's git command would read, for the policy's network hosts
 * (policy/networkHosts.ts, policy/gitConfig.ts: `git push` reaches the hosts of the remote git
 * picks, after `insteadOf`, `pushInsteadOf` and `pushurl`). Read from the vault (never through
 * its mount, which this process may serve) and in git's order: the system file, the global files
 * the run sees (given by the caller: inside the sandbox only those its home shows), then the
 * repository's `config` (of the run's directory or the nearest folder above it holding `.git`;
 * a `.git` file's `gitdir:` and a worktree's `commondir` are followed), with the includes
 * (`include.path`) a file names, relative to itself (the vault's files include only within the vault). The branch checked out comes from `HEAD`.
 */
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, posix } from 'node:path';
import { type GitConfigEntry, type GitInclude, GitRemoteConfig, parseGitConfig } from '../policy/gitConfig';
import type { GitLookup } from '../policy/networkHosts';
import type { Vfs } from '../vfs/vfs';

/** The system-wide git configuration git reads (unless GIT_CONFIG_NOSYSTEM). */
export const SYSTEM_GIT_CONFIG = '/etc/gitconfig';

/** The global files git reads, in its order: `~/.config/git/config`, then `~/.gitconfig`. */
export const globalGitConfigs = (home: string): string[] => [join(home, '.config', 'git', 'config'), join(home, '.gitconfig')];

const readReal = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

/** Includes of a file outside the vault: relative to it, and absolute paths. */
const realIncludes =
  (from: string): GitInclude =>
  (p) => {
    const file = isAbsolute(p) ? p : join(dirname(from), p);
    const text = readReal(file);
    return text === null ? null : { text, include: realIncludes(file) };
  };

/** A file outside the vault, with what it includes. */
function realEntries(file: string): GitConfigEntry[] {
  const text = readReal(file);
  return text === null ? [] : parseGitConfig(text, realIncludes(file));
}

/** Includes of a file in the vault: relative to it (an absolute or `~` path is outside the vault: not followed). */
const vaultIncludes =
  (vfs: Vfs, from: string): GitInclude =>
  (p) => {
    if (isAbsolute(p) || p.startsWith('~')) return null;
    const file = posix.resolve(posix.dirname(from), p);
    const text = vaultText(vfs, file);
    return text === null ? null : { text, include: vaultIncludes(vfs, file) };
  };

/** Where the repository holding `dir` (a vault path) keeps its config and HEAD, or null. */
function gitDirOf(vfs: Vfs, dir: string): { common: string; own: string } | null {
  for (let d = dir; ; d = posix.dirname(d)) {
    const dotGit = posix.join(d, '.git');
    if (vfs.exists(dotGit)) {
      const st = vfs.stat(dotGit);
      let own = dotGit;
      if (st.type === 'file') {
        const m = /^gitdir:\s*(.+?)\s*$/m.exec(vfs.readFile(dotGit).toString('utf8'));
        if (!m) return null;
        own = posix.resolve(d, m[1]!);
      }
      const commonFile = posix.join(own, 'commondir');
      const common = vfs.exists(commonFile) ? posix.resolve(own, vfs.readFile(commonFile).toString('utf8').trim()) : own;
      return { common, own };
    }
    if (d === '/') return null;
  }
}

function vaultText(vfs: Vfs, file: string): string | null {
  try {
    return vfs.exists(file) ? vfs.readFile(file).toString('utf8') : null;
  } catch {
    return null;
  }
}

/**
 * The configuration of the repository holding `cwd` (a vault path), read once when first asked;
 * `globalFiles`: the global git files the run sees (outside the vault). Outside any repository:
 * the system and global files alone (`repository` false); null when nothing could be read.
 */
export function gitRemotesIn(vfs: Vfs, cwd: string, globalFiles: string[]): GitLookup {
  let config: GitRemoteConfig | null | undefined;
  return () => {
    if (config !== undefined) return config;
    config = null;
    try {
      const outside = [...realEntries(SYSTEM_GIT_CONFIG), ...globalFiles.flatMap(realEntries)];
      const dirs = gitDirOf(vfs, cwd);
      if (!dirs) return (config = new GitRemoteConfig(outside, null, false));
      const file = posix.join(dirs.common, 'config');
      const text = vaultText(vfs, file);
      const entries = [...outside, ...(text === null ? [] : parseGitConfig(text, vaultIncludes(vfs, file)))];
      const head = /^ref:\s*refs\/heads\/(.+?)\s*$/m.exec(vaultText(vfs, posix.join(dirs.own, 'HEAD')) ?? '');
      config = new GitRemoteConfig(entries, head?.[1] ?? null);
    } catch {
      config = null;
    }
    return config;
  };
}
