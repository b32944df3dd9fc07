/**
 * The URL of a git remote of the repository a run works in, read from the vault (never through
 * its mount, which this process may serve): `.git/config` of the run's directory or the nearest
 * folder above it. For the policy's network hosts (policy/networkHosts.ts: `git push` reaches
 * the host of `origin`'s URL). Only `[remote "NAME"] url = …` is read; an include, an
 * `insteadOf` rewrite or a `pushurl` is not followed (then the hosts may be other than the URL's,
 * and the proxy refuses those).
 */
import { posix } from 'node:path';
import type { RemoteUrl } from '../policy/networkHosts';
import type { Vfs } from '../vfs/vfs';

/** `[remote "origin"]` sections' `url` values of one config file. */
export function remotesOf(config: string): Map<string, string> {
  const out = new Map<string, string>();
  let remote: string | null = null;
  for (const raw of config.split('\n')) {
    const line = raw.trim();
    const section = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]$/.exec(line);
    if (section) {
      remote = section[1]!.toLowerCase() === 'remote' && section[2] !== undefined ? section[2] : null;
      continue;
    }
    const kv = /^url\s*=\s*(.*)$/i.exec(line);
    if (remote !== null && kv && !out.has(remote)) out.set(remote, kv[1]!.replace(/^"(.*)"$/, '$1').trim());
  }
  return out;
}

/** A lookup of the remotes of the repository holding `cwd` (a vault path), read once when first asked. */
export function gitRemotesIn(vfs: Vfs, cwd: string): RemoteUrl {
  let remotes: Map<string, string> | undefined;
  return (name) => {
    if (!remotes) {
      remotes = new Map();
      for (let dir = cwd; ; dir = posix.dirname(dir)) {
        const file = posix.join(dir, '.git', 'config');
        try {
          if (vfs.exists(file)) {
            remotes = remotesOf(vfs.readFile(file).toString('utf8'));
            break;
          }
        } catch {
          break;
        }
        if (dir === '/') break;
      }
    }
    return remotes.get(name) ?? null;
  };
}
