/**
 * Where a path word lands: inside the workspace (the vault's mountpoint), on a harmless device,
 * in readable system directories, on a host secret, elsewhere on the host, or nobody knows.
 * Everything is lexical: the policy never touches the file system.
 */
import { posix } from 'node:path';
import type { Category } from '../protocol/policy';
import { braceExpansion, hasGlob, isLiteral, literal, literalPrefix, litWord, tildeAsHome, type Word } from './words';

export type PathClass =
  | 'inside'
  /** Inside, but .git/hooks or .git/config: writing there makes git run code later. */
  | 'git_control'
  | 'device'
  /** /dev/tcp, /dev/udp: bash opens a network socket. */
  | 'socket'
  /** Host files that are fine to read (system headers, binaries, OS release files). */
  | 'system'
  | 'secret'
  | 'host'
  | 'unknown';

export interface PathVerdict {
  cls: PathClass;
  /** The path as judged (resolved when it could be), for messages. */
  shown: string;
}

export interface PathContext {
  mountpoint: string;
  /** Absolute current directory, or null once a `cd` went somewhere unknown. */
  cwd: string | null;
  /** Other directories the shell may be in (a `cd` that may have failed); relative paths are judged from each. */
  otherCwds?: string[];
  /** The host user's home directory, if known; `~` is outside the workspace either way. */
  home?: string;
}

export type PathUse = 'read' | 'write' | 'exec';

const DEVICES = new Set(['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/stdin', '/dev/stdout', '/dev/stderr', '/dev/tty', '/dev/full']);
const DEVICE_RE = /^\/(dev\/fd\/\d+|proc\/self\/fd\/\d+|dev\/std(in|out|err))$/;
const SYSTEM_PREFIXES = ['/usr/', '/bin/', '/sbin/', '/lib/', '/lib32/', '/lib64/', '/libx32/', '/opt/', '/nix/store/', '/usr/share/zoneinfo/'];
const SYSTEM_EXACT = new Set([
  '/usr', '/bin', '/sbin', '/lib', '/lib64', '/opt',
  '/etc/os-release', '/etc/lsb-release', '/etc/debian_version', '/etc/alpine-release', '/etc/redhat-release', '/etc/issue',
  '/etc/timezone', '/etc/localtime', '/etc/hostname', '/etc/shells',
  '/proc/cpuinfo', '/proc/meminfo', '/proc/version', '/proc/loadavg', '/proc/uptime', '/proc/stat', '/proc/self/status',
]);
const SECRET_RE = [
  /^\/etc\/(shadow|gshadow|sudoers|master\.passwd)(\/|$|\.)/,
  /^\/etc\/sudoers\.d(\/|$)/,
  /^\/etc\/ssh\//,
  /^\/root(\/|$)/,
  /^\/proc\/[^/]+\/(environ|mem|maps|cmdline|root|cwd)(\/|$)/,
  /^\/var\/run\/docker\.sock$|^\/run\/docker\.sock$/,
];
const HOME_SECRET_RE =
  new RegExp(
    [
      String.raw`^(\.ssh|\.aws|\.gnupg|\.kube|\.docker|\.azure|\.netrc|\.npmrc|\.pypirc|\.git-credentials|\.gitconfig`,
      String.raw`|\.config\/gcloud|\.config\/gh|\.bash_history|\.zsh_history|\.password-store|\.vault-token|\.avfs)(\/|$)`,
    ].join(''),
  );

function inside(p: string, mount: string): boolean {
  return mount === '/' || p === mount || p.startsWith(mount + '/');
}

function classifyAbsolute(p: string, ctx: PathContext): PathVerdict {
  const mount = posix.normalize(ctx.mountpoint).replace(/(.)\/$/, '$1');
  if (inside(p, mount)) {
    const rel = p.slice(mount.length);
    if (/(^|\/)\.git\/(hooks(\/|$)|config$)/.test(rel)) return { cls: 'git_control', shown: p };
    return { cls: 'inside', shown: p };
  }
  if (DEVICES.has(p) || DEVICE_RE.test(p)) return { cls: 'device', shown: p };
  if (/^\/dev\/(tcp|udp)\//.test(p)) return { cls: 'socket', shown: p };
  if (SECRET_RE.some((re) => re.test(p))) return { cls: 'secret', shown: p };
  if (ctx.home) {
    const home = posix.normalize(ctx.home);
    if (p.startsWith(home + '/') && HOME_SECRET_RE.test(p.slice(home.length + 1))) return { cls: 'secret', shown: p };
  }
  if (/^\/(home|Users)\/[^/]+\/(.+)$/.test(p) && HOME_SECRET_RE.test(p.replace(/^\/(home|Users)\/[^/]+\//, ''))) {
    return { cls: 'secret', shown: p };
  }
  if (SYSTEM_EXACT.has(p) || SYSTEM_PREFIXES.some((x) => p.startsWith(x))) return { cls: 'system', shown: p };
  return { cls: 'host', shown: p };
}

/** The part of a literal path that globbing cannot change; a `.*`-like component may match `..`. */
function globBase(path: string): string {
  const parts = path.split('/');
  const out: string[] = [];
  for (const part of parts) {
    if (/[*?[]/.test(part)) {
      if (/^\.[*?[]|^\.\.[*?[]?/.test(part) || part === '.*') out.push('..');
      break;
    }
    out.push(part);
  }
  const joined = out.join('/');
  return joined === '' && path.startsWith('/') ? '/' : joined;
}

function resolveLiteral(path: string, ctx: PathContext, glob: boolean): PathVerdict {
  const p = glob ? globBase(path) : path;
  if (p.startsWith('/')) return classifyAbsolute(posix.normalize(p), ctx);
  if (ctx.cwd === null) return { cls: 'unknown', shown: path };
  let worst = classifyAbsolute(posix.normalize(posix.join(ctx.cwd, p === '' ? '.' : p)), ctx);
  for (const other of ctx.otherCwds ?? []) {
    const verdict = classifyAbsolute(posix.normalize(posix.join(other, p === '' ? '.' : p)), ctx);
    if (RANK[verdict.cls] > RANK[worst.cls]) worst = { cls: verdict.cls, shown: `${verdict.shown} (if a cd failed)` };
  }
  return worst;
}

function homeJoin(rest: string, ctx: PathContext): PathVerdict {
  const home = ctx.home ? posix.normalize(ctx.home) : '/home/~';
  const v = classifyAbsolute(posix.normalize(posix.join(home, rest)), ctx);
  if (!ctx.home && v.cls === 'host') return { cls: HOME_SECRET_RE.test(rest.replace(/^\/+/, '')) ? 'secret' : 'host', shown: '~' + rest };
  return v;
}

/** Judges one path word against the workspace. */
export function judgePath(word: Word, ctx: PathContext): PathVerdict {
  const w = tildeAsHome(word);
  // Plain names (a loop over `1 2 3` or `a b`: no `/`, `.` or `~`) cannot move a path anywhere:
  // `src/f$i.txt` is judged as `src/fN.txt`.
  if (!isLiteral(w) && w.segs.every((seg) => seg.t === 'lit' || (seg.v.kind === 'workspace' && seg.v.name === true))) {
    const text = w.segs.map((seg) => (seg.t === 'lit' ? seg.s : 'N')).join('');
    return { ...judgePath(litWord(text, false), ctx), shown: w.raw };
  }
  if (isLiteral(w)) {
    const expansion = braceExpansion(w);
    const glob = hasGlob(w);
    // Past the expansion's bounds the other words could be anywhere.
    let worst: PathVerdict | undefined = expansion.complete ? undefined : { cls: 'unknown', shown: w.raw };
    for (const a of expansion.words) {
      const v = resolveLiteral(a, ctx, glob);
      if (!worst || RANK[v.cls] > RANK[worst.cls]) worst = v;
    }
    return worst ?? { cls: 'unknown', shown: w.raw };
  }
  const first = w.segs[0]!;
  const restLiteral = (from: number): string | null => literal({ raw: '', segs: w.segs.slice(from) });
  if (first.t === 'val') {
    const v = first.v;
    if (v.kind === 'procsub') return { cls: 'device', shown: '/dev/fd/N' };
    if (v.kind === 'home' || v.kind === 'host') {
      const rest = restLiteral(1);
      if (v.kind === 'home') {
        const r = homeJoin(rest ?? '', ctx);
        return rest === null && (r.cls === 'inside' || r.cls === 'git_control') ? { cls: 'unknown', shown: w.raw } : { cls: r.cls, shown: w.raw };
      }
      const base = v.path.startsWith('~') ? homeJoin('/../' + v.path.slice(1) + (rest ?? ''), ctx) : resolveLiteral(v.path + (rest ?? ''), ctx, false);
      return { cls: base.cls === 'inside' ? 'unknown' : base.cls, shown: w.raw };
    }
    if (v.kind === 'workspace') {
      const rest = restLiteral(1);
      if (rest !== null && !/(^|\/)\.\.(\/|$)/.test(rest)) return { cls: 'inside', shown: w.raw };
      return { cls: 'unknown', shown: w.raw };
    }
    return { cls: 'unknown', shown: w.raw };
  }
  // A literal start, then something unknown.
  const prefix = literalPrefix(w);
  if (prefix.startsWith('/')) {
    const mount = posix.normalize(ctx.mountpoint);
    const norm = posix.normalize(prefix);
    // `/work$X` might still land inside `/workspace`; `/etc/$X` cannot.
    if ((mount + '/').startsWith(norm) || inside(norm, mount) || /\.\.?$/.test(prefix)) return { cls: 'unknown', shown: w.raw };
    const dir = prefix.endsWith('/') ? norm : posix.dirname(norm);
    const v = classifyAbsolute(dir === '/' ? norm : dir, ctx);
    return { cls: v.cls === 'system' || v.cls === 'device' ? 'host' : v.cls, shown: w.raw };
  }
  return { cls: 'unknown', shown: w.raw };
}

/** How bad each class is, for picking the worst alternative of a brace expansion. */
const RANK: Record<PathClass, number> = { inside: 0, device: 1, system: 2, git_control: 3, unknown: 4, socket: 5, host: 6, secret: 7 };

export interface PathFinding {
  categories: Category[];
  /** Why, as a phrase: "writes outside the workspace (/etc/x)". */
  why: string;
}

/** What using a path for reading, writing or running means, or null when it is harmless. */
export function pathFinding(v: PathVerdict, use: PathUse): PathFinding | null {
  switch (v.cls) {
    case 'inside':
    case 'device':
      return null;
    case 'git_control':
      return use === 'write' ? { categories: ['persistence'], why: `writes git's hooks or config (${v.shown}), which run code later` } : null;
    case 'socket':
      return { categories: ['networked', 'host_escape'], why: `opens a raw network socket (${v.shown})` };
    case 'system':
      return use === 'write' ? { categories: ['host_escape'], why: `writes outside the workspace (${v.shown})` } : null;
    case 'secret':
      return { categories: ['host_escape'], why: `touches a host secret (${v.shown})` };
    case 'host':
      return { categories: ['host_escape'], why: `${use === 'write' ? 'writes' : use === 'exec' ? 'runs' : 'reads'} outside the workspace (${v.shown})` };
    case 'unknown':
      return { categories: ['unknown'], why: `uses a path whose value is unknown (${v.shown})` };
  }
}

const TEMP_DIRS = /^\/(tmp|var\/tmp|dev\/shm|private\/tmp)(\/|$)/;

/**
 * Programs live on the host, so running `/usr/bin/rm` or putting `/opt/bin` in PATH is fine;
 * a program (or a directory of them) in a shared temp directory, among secrets, or at an unknown
 * place is not.
 */
export function programDirectory(v: PathVerdict): PathFinding | null {
  if (v.cls === 'unknown') return { categories: ['unknown'], why: `runs programs from a place whose value is unknown (${v.shown})` };
  if (v.cls === 'secret' || v.cls === 'socket' || TEMP_DIRS.test(v.shown)) return { categories: ['host_escape'],
      why: `runs programs from outside the workspace (${v.shown})` };
  return null;
}

/** True when a string looks like a URL or remote spec rather than a local path. */
export function looksRemote(s: string): boolean {
  return /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(s) || /^[^/\s]+@[^/\s]+:/.test(s);
}
