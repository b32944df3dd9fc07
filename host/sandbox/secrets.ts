/**
 * What a run never sees, and the path tests the plan makes with it: secrets under the home (keys,
 * tokens, cloud credentials, the avfs home) and of the system. Pure apart from looking at the file
 * system: resolving links, and `look` (what a plan lists, reads or tests the kind of).
 */
import { accessSync, constants, type Dirent, existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, normalize } from 'node:path';
import { mountTable } from '../fuse/liveness';

/** Home paths never shown to a run, whatever the settings say (relative to the home). */
export const SECRET_HOME_PATHS = [
  '.ssh', '.gnupg', '.aws', '.azure', '.config/gcloud', '.kube', '.docker', '.netrc', '.npmrc', '.pypirc', '.git-credentials',
  '.config/git/credentials', '.config/gh', '.config/hub', '.cargo/credentials', '.cargo/credentials.toml', '.terraform.d', '.vault-token', '.password-store',
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
 * Places a plan must not look into while it runs (outside()): the run's mount, which the very
 * process making the plan may serve (a one-shot CLI, a mount's server), so a stat there would wait
 * on itself. Set for the span of one synchronous plan; empty otherwise.
 */
let avoided: readonly string[] = [];
/** Of the current outside() span: each path looked at, as a link's target, a plain entry (''), or missing (null). */
let looked = new Map<string, string | null>();
/** Of the current outside() span: each path resolved, and its answer (a plan asks for most secret places several times). */
let resolved = new Map<string, string | null>();

/**
 * While a plan is recorded for the plan cache (planCache.ts): each folder whose entries or state an
 * answer came from (the folder of each path looked at, each folder listed, each file read), and
 * whether an avoided place was met (a plan that met one depends on where the run's mount is).
 */
let rec: { paths: Set<string>; met: boolean } | null = null;

/**
 * Runs `fn` (synchronous, inside an outside() span) and says what its answers depend on: the
 * paths whose state (links, entries, contents) it read, and the paths it looked at.
 */
export function recorded<T>(fn: () => T): { value: T; paths: string[]; looked: string[]; met: boolean } {
  const before = rec;
  const r = (rec = { paths: new Set<string>(), met: false });
  try {
    const value = fn();
    return { value, paths: [...r.paths], looked: [...looked.keys()], met: r.met };
  } finally {
    rec = before;
  }
}

/** Tells a recorded plan that it met an avoided place (a test against the run's mount that held). */
export const metAvoided = (): void => {
  if (rec) rec.met = true;
};

/** Runs `fn` (synchronous) with realIfThere() never entering `places`: a link that leads there is not followed. */
export function outside<T>(places: readonly string[], fn: () => T): T {
  const before = [avoided, looked, resolved] as const;
  avoided = places.map(normPath);
  looked = new Map();
  resolved = new Map();
  try {
    return fn();
  } finally {
    [avoided, looked, resolved] = before;
  }
}

/** Whether `p` is in a place the current outside() span avoids (a string test: nothing is looked at). */
export const isAvoided = (p: string): boolean => {
  if (!withinAny(p, avoided)) return false;
  metAvoided();
  return true;
};

/** Whether `p` is in one of `dirs` (a loop, not some() with a closure: a plan makes hundreds of these tests in a cold process). */
function withinAny(p: string, dirs: readonly string[]): boolean {
  for (const d of dirs) if (within(p, d)) return true;
  return false;
}

/** The FUSE file systems mounted now, by the kernel's list (nothing is looked at): one may be served by this very process. */
export const fuseMounts = (): string[] => mountTable((fstype) => fstype === 'fuse' || fstype.startsWith('fuse.')).map((m) => m.mountpoint);

/**
 * The first `name` in the folders of `path` (PATH) that this user may run: its path there and its
 * real one. Never looked for on a FUSE file system, nor through a link there (a program of the
 * system is never there, and the caller may be the process serving it: a stat would wait on
 * itself). One span for all the folders, so those they share (/root, /root/.pyenv) are looked at once.
 */
export function onPath(name: string, path: string): { path: string; real: string } | null {
  const fuse = fuseMounts();
  return outside(fuse, () => {
    for (const d of path.split(delimiter)) {
      if (!isAbsolute(d)) continue;
      const p = join(d, name);
      const r = realIfThere(p);
      if (r === null || withinAny(r, avoided)) continue;
      try {
        accessSync(r, constants.X_OK);
        return { path: p, real: r };
      } catch {
        /* next */
      }
    }
    return null;
  });
}

/**
 * A path with its links resolved (real: or itself where it does not exist). The native call (one
 * realpath(3)): JavaScript's walks every component with an lstat of its own. A missing path is
 * told by existsSync, which throws nothing: a failed realpath makes an Error, and a plan meets
 * dozens of missing paths (most secrets are not there), several ms in a cold process. Inside
 * outside(), a path is resolved a component at a time instead, each checked by string before it
 * is looked at, so a link into an avoided place (`~/bin` → the run's mount) is never followed.
 */
export const realIfThere = (p: string): string | null => {
  if (avoided.length > 0) {
    let r = resolved.get(p);
    if (r === undefined) {
      r = realAvoiding(p, avoided);
      resolved.set(p, r);
    }
    return r;
  }
  if (!existsSync(p)) return null;
  try {
    return realpathSync.native(p);
  } catch {
    return null;
  }
};

/**
 * realpath(3) done by hand: an lstat of each component and a readlink of each link (each looked at
 * once per outside() span), none inside `avoid`. Null where it does not exist; a path that leads
 * into an avoided place is answered as it would resolve there, without looking (callers test it
 * against the places they never show).
 */
function realAvoiding(p: string, avoid: readonly string[]): string | null {
  const stack = p.split('/').filter((c) => c !== '' && c !== '.');
  let cur = '/';
  let links = 0;
  while (stack.length > 0) {
    const name = stack.shift()!;
    if (name === '..') {
      cur = dirname(cur);
      continue;
    }
    const next = cur === '/' ? `/${name}` : `${cur}/${name}`;
    // A path looked at before is not in an avoided place (it would not have been looked at).
    let seen = looked.get(next);
    if (seen === undefined) {
      if (withinAny(next, avoid)) {
        metAvoided();
        return normPath(join(next, ...stack));
      }
      // What `next` is (missing, a link and where to, anything else) is its folder's to say.
      rec?.paths.add(cur);
      seen = linkOrEntry(next);
      looked.set(next, seen);
    }
    if (seen === null) return null;
    if (seen !== '') {
      if (++links > 40) return null;
      if (seen.startsWith('/')) cur = '/';
      stack.unshift(...seen.split('/').filter((c) => c !== '' && c !== '.'));
      continue;
    }
    cur = next;
  }
  return cur;
}

/** A link's target, '' for any other entry, null where there is none (or it cannot be looked at). */
function linkOrEntry(p: string): string | null {
  try {
    const st = lstatSync(p, { throwIfNoEntry: false });
    if (!st) return null;
    return st.isSymbolicLink() ? readlinkSync(p) || null : '';
  } catch {
    return null;
  }
}

export const real = (p: string): string => realIfThere(p) ?? p;

/** Where `p` leads, if it is there and not in an avoided place (never looked into). */
const reachable = (p: string): string | null => {
  const r = realIfThere(p);
  return r === null || isAvoided(r) ? null : r;
};

/**
 * The plan's other looks at the file system, each through realIfThere (so, while recorded, the
 * folders on the way are noted, and an avoided place is never entered); a folder listed or a file
 * read is noted itself.
 */
export const look = {
  /** Whether `p` is there (a link: where it leads). */
  exists: (p: string): boolean => realIfThere(p) !== null,
  isDir(p: string): boolean {
    const r = reachable(p);
    try {
      return r !== null && statSync(r).isDirectory();
    } catch {
      return false;
    }
  },
  /** The entries of the folder `p`, or null where it cannot be read. */
  list(p: string): Dirent[] | null {
    const r = reachable(p);
    if (r === null) return null;
    rec?.paths.add(r);
    try {
      return readdirSync(r, { withFileTypes: true });
    } catch {
      return null;
    }
  },
  /** The text of the file `p`, or null. */
  read(p: string): string | null {
    const r = reachable(p);
    if (r === null) return null;
    rec?.paths.add(r);
    try {
      return readFileSync(r, 'utf8');
    } catch {
      return null;
    }
  },
};

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

/**
 * The secret places inside the folder `shown` (a real path), to be covered again: each by where it
 * leads, where it exists and the run would see it there (inside `shown`, or a link from it to a
 * place outside the home, which the system's read-only view shows).
 */
export function secretsInside(shown: string, s: Secrets): string[] {
  const out: string[] = [];
  for (const [, path, target] of s.places) {
    if (!within(path, shown) && !within(target, shown)) continue;
    const r = realIfThere(path);
    // (One that leads into the run's mount is the agent's to see, and is never looked at.)
    if (r === null || r === shown || isAvoided(r) || out.includes(r)) continue;
    if (within(r, shown) || !within(r, s.home)) out.push(r);
  }
  return out;
}

/** The secret place `p` (absolute, normalized) is in or is, or null. */
export const secretIn = (p: string, s: Secrets): string | null => s.places.find(([, path, target]) => within(p, path) || within(p, target))?.[0] ?? null;

/**
 * Why `path` (absolute, under the home) may not be shown, or null. A folder that holds a secret
 * place (~/.config/git and its credentials) may be: the plan covers the secret again (secretsInside).
 */
export function secretWhy(path: string, s: Secrets): string | null {
  const p = normPath(path);
  const target = real(p);
  for (const [name, secret, secretTarget] of s.places) {
    if (within(p, secret) || within(target, secretTarget)) return `it is ~/${name} or inside it`;
  }
  if (within(target, s.avfsHome) || within(s.avfsHome, target)) return 'it holds the avfs home';
  if (within(s.home, target)) return 'it is the whole home';
  return null;
}
