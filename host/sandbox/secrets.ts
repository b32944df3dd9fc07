/**
 * What a run never sees, and the path tests the plan makes with it: secrets under the home (keys,
 * tokens, cloud credentials, the avfs home) and of the system. Pure apart from resolving links.
 */
import { existsSync, realpathSync } from 'node:fs';
import { join, normalize } from 'node:path';

/** Home paths never shown to a run, whatever the settings say (relative to the home). */
export const SECRET_HOME_PATHS = [
  '.ssh', '.gnupg', '.aws', '.azure', '.config/gcloud', '.kube', '.docker', '.netrc', '.npmrc', '.pypirc', '.git-credentials',
  '.config/gh', '.config/hub', '.cargo/credentials', '.cargo/credentials.toml', '.terraform.d', '.vault-token', '.password-store',
  '.local/share/keyrings', '.mozilla', '.config/google-chrome', '.config/chromium', '.avfs',
];

/**
 * Files a tool's own folder may keep a token in (relative to that folder): npm's global config in
 * a Node prefix, cargo's and RubyGems' credentials, Gradle's and Maven's settings, token files
 * copied into a prefix.
 */
export const SECRET_TOOL_FILES = ['etc/npmrc', 'credentials', 'credentials.toml', '.npmrc', '.pypirc', '.netrc', '.git-credentials', 'gradle.properties', 'settings.xml', 'settings-security.xml'];

/** System files root could read that no run needs. */
export const SECRET_SYSTEM_FILES = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/sudoers', '/etc/security/opasswd'];

/**
 * A path with its links resolved (real: or itself where it does not exist). The native call (one
 * realpath(3)): JavaScript's walks every component with an lstat of its own. A missing path is
 * told by existsSync, which throws nothing: a failed realpath makes an Error, and a plan meets
 * dozens of missing paths (most secrets are not there), several ms in a cold process.
 */
export const realIfThere = (p: string): string | null => {
  if (!existsSync(p)) return null;
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
};
export const real = (p: string): string => realIfThere(p) ?? p;

/**
 * Whether `p` is `dir` or under it. Both absolute and normalized (from join, realpath or
 * normPath): a string test, not path.relative, which resolves both against the cwd and costs
 * more than the plan's file system calls in a cold process.
 */
export const within = (p: string, dir: string): boolean => p === dir || dir === '/' || p.startsWith(dir.endsWith('/') ? dir : `${dir}/`);

/** An absolute path normalized, without a trailing slash (a home given as `/home/me/`). */
export const normPath = (p: string): string => {
  const n = normalize(p);
  return n.length > 1 && n.endsWith('/') ? n.slice(0, -1) : n;
};

/** The secret places of one home, each by its path and by where its links lead: made once per plan. */
export interface Secrets {
  home: string;
  /** [~/-relative name, path, real path] of each secret place. */
  places: Array<[string, string, string]>;
  avfsHome: string;
}

export function secretsOf(home: string, avfsHome: string): Secrets {
  const h = normPath(home);
  return { home: h, places: SECRET_HOME_PATHS.map((s) => [s, join(h, s), real(join(h, s))]), avfsHome: real(normPath(avfsHome)) };
}

/** The secret place `p` (absolute, normalized) is in or is, or null. */
export const secretIn = (p: string, s: Secrets): string | null => s.places.find(([, path, target]) => within(p, path) || within(p, target))?.[0] ?? null;

/** Why `path` (absolute, under the home) may not be shown, or null. */
export function secretWhy(path: string, s: Secrets): string | null {
  const p = normPath(path);
  const target = real(p);
  for (const [name, secret, secretTarget] of s.places) {
    if (within(p, secret) || within(target, secretTarget) || within(secret, p)) return `it holds or is ~/${name}`;
  }
  if (within(target, s.avfsHome) || within(s.avfsHome, target)) return 'it holds the avfs home';
  if (within(s.home, target)) return 'it is the whole home';
  return null;
}
