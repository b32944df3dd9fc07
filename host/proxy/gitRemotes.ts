/**
 * The git configuration a run's git command would read, for the policy's network hosts
 * (policy/networkHosts.ts, policy/gitConfig.ts: `git push` reaches the hosts of the remote git
 * picks, after `insteadOf`, `pushInsteadOf` and `pushurl`). Read from the vault (never through
 * its mount, which this process may serve) and in git's order: the system file (or
 * `GIT_CONFIG_SYSTEM`'s; none with `GIT_CONFIG_NOSYSTEM`), the global files the run sees (given by
 * the caller: inside the sandbox only those its home shows; `GIT_CONFIG_GLOBAL`'s instead), the
 * repository's `config` (of `GIT_DIR`, else of the run's directory or the nearest folder above it
 * holding `.git`; a `.git` file's `gitdir:` and a worktree's `commondir` are followed), then the
 * environment's `GIT_CONFIG_COUNT` / `GIT_CONFIG_KEY_n` / `GIT_CONFIG_VALUE_n` and
 * `GIT_CONFIG_PARAMETERS`. A file's includes are followed relative to it (the vault's files
 * include only within the vault): `include.path`, and `includeIf.<condition>.path` where the
 * condition holds for the run: `gitdir:` / `gitdir/i:` (the repository's git directory, as the run
 * sees it, against the pattern as git completes it), `onbranch:` (the branch checked out, from
 * `HEAD`), `hasconfig:remote.*.url:` (a remote URL configured outside such includes).
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, posix } from 'node:path';
import picomatch from 'picomatch';
import { entryOfOption, type GitConfigEntry, gitConfigParameters, type GitInclude, GitRemoteConfig, parseGitConfig } from '../policy/gitConfig';
import type { GitLookup } from '../policy/networkHosts';
import { normPath, realIfThere } from '../sandbox/secrets';
import type { Vfs } from '../vfs/vfs';

/** The system-wide git configuration git reads (unless GIT_CONFIG_NOSYSTEM). */
export const SYSTEM_GIT_CONFIG = '/etc/gitconfig';

/** The global files git reads, in its order: `~/.config/git/config`, then `~/.gitconfig`. */
export const globalGitConfigs = (home: string): string[] => [join(home, '.config', 'git', 'config'), join(home, '.gitconfig')];

/** The most of a configuration file read (git's own are a few KiB; a device or a huge file is no configuration). */
const MAX_CONFIG_BYTES = 1 << 20;

/** Where git runs, for `includeIf`: the repository's git directory and branch as the run sees them, its home, the remote URLs configured. */
interface Where {
  gitDir: string | null;
  branch: string | null;
  home: string | undefined;
  /** With `hasconfig:` false: the remote URLs of the files read without those includes (git's rule: they may add none). */
  remoteUrls: string[] | null;
  /** Set when a `hasconfig:` condition was met while `remoteUrls` was null: the files are read again with them. */
  askedRemotes?: boolean;
  /** A file outside the vault as the run could read it, or null (hidden from the run, not a regular file, too big). */
  read(file: string): string | null;
}

/** Whether `includeIf.<condition>` holds where git runs; `fromDir`: the folder of the file that says it (for `gitdir:./`). */
function holds(condition: string, fromDir: string, w: Where): boolean {
  const m = /^(gitdir|gitdir\/i|onbranch|hasconfig:remote\.\*\.url):(.*)$/s.exec(condition);
  if (!m) return false;
  const [, kind, raw] = m as unknown as [string, string, string];
  const glob = (p: string) => (p.endsWith('/') ? `${p}**` : p);
  if (kind === 'onbranch') return w.branch !== null && raw !== '' && picomatch.isMatch(w.branch, glob(raw), { dot: true });
  if (kind !== 'gitdir' && kind !== 'gitdir/i') {
    if (w.remoteUrls === null) w.askedRemotes = true;
    return w.remoteUrls !== null && w.remoteUrls.some((u) => picomatch.isMatch(u, raw, { dot: true }));
  }
  if (w.gitDir === null || raw === '') return false;
  let pattern = raw;
  if (pattern.startsWith('~/')) {
    if (!w.home) return false;
    pattern = posix.join(w.home, pattern.slice(2)); // (join keeps a trailing slash)
  } else if (pattern.startsWith('./')) pattern = posix.join(fromDir, pattern.slice(2));
  else if (!pattern.startsWith('/')) pattern = `**/${pattern}`;
  return picomatch.isMatch(w.gitDir, glob(pattern), { dot: true, nocase: kind === 'gitdir/i' });
}

/** Includes of a file outside the vault: relative to it, and absolute paths. */
const realIncludes =
  (from: string, w: Where): GitInclude =>
  (p, condition) => {
    if (condition !== undefined && !holds(condition, dirname(from), w)) return null;
    // `~/` is the home, as git expands it.
    const named = p.startsWith('~/') && w.home ? join(w.home, p.slice(2)) : p;
    const file = isAbsolute(named) ? named : join(dirname(from), named);
    const text = w.read(file);
    return text === null ? null : { text, include: realIncludes(file, w) };
  };

/** A file outside the vault, with what it includes. */
function realEntries(file: string, w: Where): GitConfigEntry[] {
  const text = w.read(file);
  return text === null ? [] : parseGitConfig(text, realIncludes(file, w));
}

/** Includes of a file in the vault: relative to it (an absolute or `~` path is outside the vault: not followed); `root`: where the run sees the vault. */
const vaultIncludes =
  (vfs: Vfs, from: string, root: string, w: Where): GitInclude =>
  (p, condition) => {
    if (condition !== undefined && !holds(condition, posix.join(root, posix.dirname(from)), w)) return null;
    if (isAbsolute(p) || p.startsWith('~')) return null;
    const file = posix.resolve(posix.dirname(from), p);
    const text = vaultText(vfs, file);
    return text === null ? null : { text, include: vaultIncludes(vfs, file, root, w) };
  };

/** A git directory's config folder: itself, or a worktree's `commondir`. */
function withCommon(vfs: Vfs, own: string): { common: string; own: string } {
  const commonFile = posix.join(own, 'commondir');
  const common = vfs.exists(commonFile) ? posix.resolve(own, vfs.readFile(commonFile).toString('utf8').trim()) : own;
  return { common, own };
}

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
      return withCommon(vfs, own);
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

/** Where the run is, for what git reads: the vault's root as the run sees it, and the run's environment. */
export interface GitRunContext {
  /** The host path the run sees the vault's root at (its mount, or the materialized copy). */
  root: string;
  env: Record<string, string | undefined>;
  /** Whether the run can read a file outside the vault (the sandbox hides the home but for what it shows). */
  visible(file: string): boolean;
}

/** A boolean as git reads one from the environment: true, yes, on, or a number other than 0. */
const gitBool = (v: string | undefined) => {
  if (v === undefined) return false;
  const t = v.trim().toLowerCase();
  return t === 'true' || t === 'yes' || t === 'on' || (/^-?\d+$/.test(t) && Number(t) !== 0);
};

/** The environment's configuration, after the files: GIT_CONFIG_COUNT's pairs, then GIT_CONFIG_PARAMETERS; null when git would refuse them. */
function envEntries(env: Record<string, string | undefined>): GitConfigEntry[] | null {
  const out: GitConfigEntry[] = [];
  if (env.GIT_CONFIG_COUNT !== undefined && env.GIT_CONFIG_COUNT.trim() !== '') {
    const n = Number(env.GIT_CONFIG_COUNT);
    if (!Number.isInteger(n) || n < 0) return null;
    for (let k = 0; k < n; k++) {
      const key = env[`GIT_CONFIG_KEY_${k}`];
      const value = env[`GIT_CONFIG_VALUE_${k}`];
      const entry = key === undefined || value === undefined ? null : entryOfOption(`${key}=${value}`);
      if (entry === null) return null;
      out.push(entry);
    }
  }
  if (env.GIT_CONFIG_PARAMETERS !== undefined) {
    const more = gitConfigParameters(env.GIT_CONFIG_PARAMETERS);
    if (more === null) return null;
    out.push(...more);
  }
  return out;
}

/**
 * The configuration of the repository holding `cwd` (a vault path), read once when first asked;
 * `globalFiles`: the global git files the run sees (outside the vault). Outside any repository:
 * the system and global files alone (`repository` false); null when nothing could be read, or the
 * run's environment points git where the vault cannot tell (a GIT_DIR outside it, malformed
 * GIT_CONFIG_* variables): the hosts are then unknown.
 */
export function gitRemotesIn(vfs: Vfs, cwd: string, globalFiles: string[], run: GitRunContext): GitLookup {
  let config: GitRemoteConfig | null | undefined;
  return () => {
    if (config !== undefined) return config;
    config = null;
    try {
      const env = run.env;
      const fromEnv = envEntries(env);
      if (fromEnv === null) return null;
      let dirs: { common: string; own: string } | null;
      if (env.GIT_DIR !== undefined && env.GIT_DIR !== '') {
        const gitDir = posix.resolve(posix.join(run.root, cwd), env.GIT_DIR);
        const rel = posix.relative(run.root, gitDir);
        if (rel.startsWith('..') || posix.isAbsolute(rel)) return null;
        dirs = withCommon(vfs, `/${rel}`);
      } else dirs = gitDirOf(vfs, cwd);
      const head = dirs ? /^ref:\s*refs\/heads\/(.+?)\s*$/m.exec(vaultText(vfs, posix.join(dirs.own, 'HEAD')) ?? '') : null;
      // GIT_CONFIG_SYSTEM or GIT_CONFIG_GLOBAL set empty: git reads no such file.
      const named = (v: string | undefined, otherwise: string[]) => (v === undefined ? otherwise : v === '' ? [] : [v]);
      const system = gitBool(env.GIT_CONFIG_NOSYSTEM) ? [] : named(env.GIT_CONFIG_SYSTEM, [SYSTEM_GIT_CONFIG]);
      const globals = named(env.GIT_CONFIG_GLOBAL, globalFiles);
      // Each as git finds it from the run's directory; one in the vault is read from the vault.
      const files = [...system, ...globals].map((f) => normPath(posix.resolve(posix.join(run.root, cwd), f)));
      const inVault = (f: string) => f === run.root || f.startsWith(`${run.root}/`);
      // Outside the vault: as the run could read it, by its path and where its links lead (never into the mount, which this process may serve).
      const readOutside = (f: string): string | null => {
        const p = normPath(f);
        if (inVault(p) || !run.visible(p)) return null;
        const r = realIfThere(p);
        if (r === null || inVault(r) || !run.visible(r)) return null;
        try {
          const st = statSync(r);
          return st.isFile() && st.size <= MAX_CONFIG_BYTES ? readFileSync(r, 'utf8') : null;
        } catch {
          return null;
        }
      };
      const where = (remoteUrls: string[] | null): Where => ({ gitDir: dirs ? posix.join(run.root, dirs.own) : null, branch: head?.[1] ?? null, home: env.HOME, remoteUrls, read: readOutside });
      const read = (w: Where): GitConfigEntry[] => {
        const outside = files.flatMap((f) => {
          if (!inVault(f)) return realEntries(f, w);
          const file = `/${posix.relative(run.root, f)}`;
          const text = vaultText(vfs, file);
          return text === null ? [] : parseGitConfig(text, vaultIncludes(vfs, file, run.root, w));
        });
        if (!dirs) return outside;
        const file = posix.join(dirs.common, 'config');
        const text = vaultText(vfs, file);
        return [...outside, ...(text === null ? [] : parseGitConfig(text, vaultIncludes(vfs, file, run.root, w)))];
      };
      // hasconfig:remote.*.url: asks of the remote URLs configured without such includes: a first
      // reading finds them, and a second (only where such a condition was met) applies them.
      const w0 = where(null);
      const first = read(w0);
      const urls = first.filter((e) => /^remote\..*\.url$/.test(e.key)).map((e) => e.value);
      const entries = [...(w0.askedRemotes ? read(where(urls)) : first), ...fromEnv];
      config = new GitRemoteConfig(entries, head?.[1] ?? null, dirs !== null);
    } catch {
      config = null;
    }
    return config;
  };
}
