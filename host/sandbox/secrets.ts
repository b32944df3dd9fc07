/**
 * What a run never sees, and the path tests the plan makes with it: secrets under the home (keys,
 * tokens, cloud credentials, the avfs home) and of the system. Pure apart from resolving links.
 */
import { realpathSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';

/** Home paths never shown to a run, whatever the settings say (relative to the home). */
export const SECRET_HOME_PATHS = [
  '.ssh', '.gnupg', '.aws', '.azure', '.config/gcloud', '.kube', '.docker', '.netrc', '.npmrc', '.pypirc', '.git-credentials',
  '.config/gh', '.config/hub', '.cargo/credentials', '.cargo/credentials.toml', '.terraform.d', '.vault-token', '.password-store',
  '.local/share/keyrings', '.mozilla', '.config/google-chrome', '.config/chromium', '.avfs',
];

/**
 * Files a tool's own folder may keep a token in (relative to that folder): npm's global config in
 * a Node prefix, cargo's and other tools' credentials, token files copied into a prefix.
 */
export const SECRET_TOOL_FILES = ['etc/npmrc', 'credentials', 'credentials.toml', '.npmrc', '.pypirc', '.netrc', '.git-credentials'];

/** System files root could read that no run needs. */
export const SECRET_SYSTEM_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/security/opasswd'];

/**
 * A path with its links resolved, or itself where it does not resolve. The native call (one
 * realpath(3)): JavaScript's walks every component of every path with an lstat of its own, and a
 * plan resolves ~60 paths per run (~150 lstats, several ms at load, in the run's critical path).
 */
export const real = (p: string): string => {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
};

/** Whether `p` is `dir` or under it (lexically). */
export const within = (p: string, dir: string): boolean => {
  const r = relative(dir, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
};

/** Why `path` (absolute, under the home) may not be shown, or null. */
export function secretWhy(path: string, home: string, avfsHome: string): string | null {
  const target = real(path);
  for (const s of SECRET_HOME_PATHS) {
    const secret = join(home, s);
    if (within(path, secret) || within(target, real(secret)) || within(secret, path)) return `it holds or is ~/${s}`;
  }
  if (within(target, real(avfsHome)) || within(real(avfsHome), target)) return 'it holds the avfs home';
  if (within(home, target)) return 'it is the whole home';
  return null;
}
