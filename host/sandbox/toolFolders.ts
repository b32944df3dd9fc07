/**
 * The folders of the tools the caller's PATH names that the sandbox would hide (under the home,
 * /tmp), to be shown read-only: not only the PATH folder, whose programs are often a version
 * manager's shims or links into a prefix, but what they call: a known manager's whole folder
 * (pyenv's shims exec ~/.pyenv/libexec/pyenv and then a version under ~/.pyenv/versions; rustup's
 * proxies in ~/.cargo/bin read toolchains in ~/.rustup), else a `bin` with its prefix's `lib`,
 * `libexec` and `share` (nvm's npm links to ../lib/node_modules). Never a folder that is or holds
 * a secret place, a socket, a run-time folder (/run), the avfs home or a vault's mount; the
 * secrets known to live inside a shown folder are hidden again. Pure apart from reading the file
 * system (no process, no write); docs/exec.md, "What `workspace` guarantees".
 */
import { statfsSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { look, metAvoided, normPath, real, realIfThere, SECRET_TOOL_FILES, secretIn, type Secrets, within } from './secrets';

/** PATH folders whose parent is the tool's own prefix. */
const LEAVES = new Set(['bin', 'sbin', 'shims']);
/** Of a prefix, beside its `bin`: what its programs load. */
const PREFIX_PARTS = ['lib', 'lib64', 'libexec', 'share'];
/** Beside ~/.local/bin: where pip --user and pipx keep what its programs load (~/.local/share holds every program's data). */
const LOCAL_PROGRAM_DIRS = ['.local/lib', '.local/share/pipx', '.local/pipx'];
/**
 * Top folders of the home that are a version manager's or toolchain's own, shown whole when a
 * PATH folder is inside: what their shims call lives anywhere in them. Any other folder's tools
 * are shown by their `bin` and its prefix's parts alone (~/.pulumi keeps its token beside its bin).
 */
const MANAGERS = new Set([
  '.pyenv', '.rbenv', '.nodenv', '.goenv', '.jenv', '.plenv', '.nvm', '.fnm', '.asdf', '.volta', '.sdkman', '.cargo', '.rustup', '.bun', '.deno',
  '.ghcup', '.opam', '.elan', '.juliaup', '.rye', '.pixi', '.dotnet', '.npm-global', '.yarn', '.gem', '.pub-cache',
  'go', 'sdk', 'miniconda3', 'anaconda3', 'miniforge3', 'mambaforge', 'micromamba',
]);
/** What a manager reads beside its own folder: rustup's toolchains, a version manager's global version file. */
const COMPANIONS: Record<string, string[]> = {
  '.cargo': ['.rustup'],
  '.pyenv': ['.python-version'],
  '.rbenv': ['.ruby-version'],
  '.nodenv': ['.node-version'],
  '.asdf': ['.tool-versions'],
};
/** Where a manager keeps each version's own configuration, which can hold a registry's token (`*`: each version). */
const VERSION_SECRETS: Record<string, string[]> = {
  '.nvm': ['versions/node/*/etc/npmrc'],
  '.nodenv': ['versions/*/etc/npmrc'],
  '.volta': ['tools/image/node/*/etc/npmrc'],
  '.asdf': ['installs/nodejs/*/etc/npmrc', 'installs/python/*/pip.conf'],
  '.pyenv': ['versions/*/pip.conf', 'versions/*/etc/pip.conf'],
  miniconda3: ['.condarc', 'envs/*/.condarc'],
  anaconda3: ['.condarc', 'envs/*/.condarc'],
  miniforge3: ['.condarc', 'envs/*/.condarc'],
};
/** A shown folder's configuration files that may hold a registry token beside build settings (cargo's `[registry] token = …`): hidden again when they do. */
const TOKEN_CONFIGS = ['config.toml', 'config'];
const TOKEN_LINE = /^\s*token\s*=/m;

/** Whether the file `p` (not in an avoided place) holds a token line. */
const holdsToken = (p: string): boolean => TOKEN_LINE.test(look.read(p) ?? '');

/** Run-time folders (sockets of the user's agents, dbus, docker): never shown, whatever names them. */
const RUNTIME = ['/run', '/var/run'];
/** FUSE's file system type: a vault's mount (or another FUSE server's) is never read for tools. */
const FUSE_MAGIC = 0x65735546;

/** Environment variables that name a tool's folder (GOPATH may name several). */
export const TOOL_VARS = [
  'PYENV_ROOT', 'RBENV_ROOT', 'NODENV_ROOT', 'NVM_DIR', 'FNM_DIR', 'VOLTA_HOME', 'ASDF_DIR', 'ASDF_DATA_DIR', 'SDKMAN_DIR', 'RUSTUP_HOME', 'CARGO_HOME',
  'GOROOT', 'GOPATH', 'CONDA_PREFIX', 'VIRTUAL_ENV', 'PIPX_HOME', 'BUN_INSTALL', 'DENO_INSTALL', 'PNPM_HOME', 'JAVA_HOME',
];

export interface ToolFolders {
  /** Shown read-only, outermost first (none inside another). */
  shown: string[];
  /** Secrets inside a shown folder, covered again: a directory by an empty tmpfs, a file by an unreadable one. */
  hiddenAgain: Array<{ path: string; dir: boolean }>;
  /** PATH folders named through a link that the sandbox would hide (~/bin → ~/.dotfiles/bin): made again inside, to their shown target. */
  links: Array<{ path: string; target: string }>;
}

export interface ToolFoldersInput {
  /** The caller's environment (not what a request adds): its PATH and the TOOL_VARS. */
  env: Record<string, string | undefined>;
  /** The home the sandbox makes private (its real path), or null. */
  home: string | null;
  /** The home's secret places and the avfs home (secrets.ts). */
  secrets: Secrets;
  /** The other places the sandbox covers (plan.ts's hidden()). */
  hide: string[];
  /** Never looked into: the run's mount (this very process may serve it) and the avfs socket folder. */
  avoid: string[];
}

/** The folders that hold the tool of `dir` (absolute, links resolved): its own, and what it reads beside it. */
function foldersOf(dir: string, home: string | null, covered: string[]): string[] {
  if (home && within(dir, home) && dir !== home) {
    const parts = dir.slice(home.length + 1).split('/');
    const top = parts[0]!;
    if (top === '.local' && parts.length === 2 && parts[1] === 'bin') return [dir, ...LOCAL_PROGRAM_DIRS.map((p) => join(home, p))];
    if (MANAGERS.has(top)) return [join(home, top), ...(COMPANIONS[top] ?? []).map((c) => join(home, c))];
  }
  const prefix = dirname(dir);
  // A prefix's bin shows its program parts, unless the prefix is a place the sandbox covers whole (/tmp, the home) or the home's ~/.local.
  if (!LEAVES.has(basename(dir)) || covered.some((c) => within(c, prefix)) || (home !== null && prefix === join(home, '.local'))) return [dir];
  return [dir, ...PREFIX_PARTS.map((p) => join(prefix, p))];
}

/** (Never a place the plan avoids: the run's mount, which this process may serve; look.isDir does not enter one.) */
const isDir = look.isDir;

/** Whether `p` lies on a FUSE file system (a vault's mount): what is there is the agent's to write. */
const onFuse = (p: string) => {
  try {
    return statfsSync(p).type === FUSE_MAGIC;
  } catch {
    return true;
  }
};

/** Whether a folder holds a socket right inside it (an agent's, a multiplexer's): connecting needs no write. */
const holdsSocket = (dir: string) => look.list(dir)?.some((d) => d.isSocket()) ?? true;

/** The `home` of a Python virtual environment's pyvenv.cfg: the folder of the interpreter it was made from. */
function venvBase(folder: string): string | null {
  const m = /^\s*home\s*=\s*(.+?)\s*$/m.exec(look.read(join(folder, 'pyvenv.cfg')) ?? '');
  return m && isAbsolute(m[1]!) ? m[1]! : null;
}

/** `pattern` under `root` with each `*` one level of folders (one readdir each). */
function expand(root: string, pattern: string): string[] {
  let paths = [root];
  for (const part of pattern.split('/')) {
    if (part !== '*') paths = paths.map((p) => join(p, part));
    else paths = paths.flatMap((p) => (look.list(p) ?? []).map((d) => join(p, d.name)));
  }
  return paths;
}

export function toolFolders(i: ToolFoldersInput): ToolFolders {
  const home = i.home;
  const covered = ['/tmp', ...(home ? [home] : []), ...i.hide];
  const avfs = i.secrets.avfsHome;
  const runtime = [...RUNTIME, ...(i.env.XDG_RUNTIME_DIR && isAbsolute(i.env.XDG_RUNTIME_DIR) ? [normPath(i.env.XDG_RUNTIME_DIR)] : [])];
  const avoid = i.avoid.map(normPath);
  const never = [avfs, ...avoid, ...runtime];
  /** Whether `p` is in a place never shown (or, `around`, holds one); one of `avoid` met is told to the plan cache (secrets.ts metAvoided). */
  const isNever = (p: string, around = false) => {
    for (const n of never) {
      if (!within(p, n) && !(around && within(n, p))) continue;
      if (avoid.includes(n)) metAvoided();
      return true;
    }
    return false;
  };
  const isSecret = (p: string) => home !== null && secretIn(p, i.secrets) !== null;
  const starts = TOOL_VARS.flatMap((v) => (i.env[v] ?? '').split(':'));
  const candidates: string[] = [];
  const pathLinks: Array<{ path: string; target: string }> = [];
  const outsideLinks: Array<{ path: string; target: string }> = [];
  // The prefix of each `bin` named (a Node under ~/.nvm/versions/node/v22 keeps npm's global config in its etc/npmrc).
  const prefixes = new Set<string>();
  const seen = new Set<string>();
  const consider = (entry: string, fromPath: boolean) => {
    if (!isAbsolute(entry)) return;
    const lexical = normPath(entry);
    // Before any call that touches it: the run's mount may be served by this very process.
    if (isNever(lexical)) return;
    const dir = realIfThere(lexical);
    if (dir === null || seen.has(dir) || isNever(dir)) return;
    // A PATH folder named through a link the sandbox would hide (~/bin → ~/.dotfiles/bin, or → /opt/tools/bin): linked again inside.
    const linked = fromPath && dir !== lexical && covered.some((c) => within(lexical, c));
    // Only what the sandbox would hide needs showing (/usr/bin is in sight already).
    if (!covered.some((c) => within(dir, c))) {
      if (linked && isDir(dir)) outsideLinks.push({ path: lexical, target: dir });
      return;
    }
    // A folder (a file on PATH shows nothing), nowhere the agent writes.
    if (!isDir(dir) || onFuse(dir)) return;
    seen.add(dir);
    if (linked) pathLinks.push({ path: lexical, target: dir });
    candidates.push(...foldersOf(dir, home, covered));
    if (!LEAVES.has(basename(dir))) return;
    prefixes.add(dirname(dir));
    // A virtual environment's base (its pyvenv.cfg beside its bin): the bin of the interpreter it was made from, taken as a PATH folder of its own.
    const base = covered.some((d) => within(dir, d)) ? venvBase(dirname(dir)) : null;
    if (base && LEAVES.has(basename(base))) consider(base, false);
  };
  for (const entry of (i.env.PATH ?? '').split(':')) consider(entry, true);
  for (const entry of starts) consider(entry, false);

  const shown: string[] = [];
  for (const c of candidates) {
    const f = realIfThere(c);
    if (f === null) continue;
    // Shown only where the sandbox would hide it, never a covered place whole, never what is never shown.
    if (!covered.some((d) => within(f, d)) || covered.some((d) => within(d, f)) || isNever(f, true)) continue;
    // Not a secret place, nor a link to one (a folder holding one is shown, with it hidden again below); no socket inside.
    if (isSecret(c) || isSecret(f) || (isDir(f) && holdsSocket(f))) continue;
    if (shown.some((s) => within(f, s))) continue;
    for (let k = shown.length - 1; k >= 0; k--) if (within(shown[k]!, f)) shown.splice(k, 1);
    shown.push(f);
  }
  shown.sort((a, b) => a.length - b.length || (a < b ? -1 : 1));

  const hiddenAgain: ToolFolders['hiddenAgain'] = [];
  const hideAgain = (p: string) => {
    const target = realIfThere(p);
    if (target === null || !shown.some((s) => within(target, s) && target !== s) || hiddenAgain.some((h) => within(target, h.path))) return;
    hiddenAgain.push({ path: target, dir: isDir(target) });
  };
  if (shown.length > 0) {
    for (const [, path, targetOfPlace] of i.secrets.places) {
      hideAgain(path);
      // What a secret folder's links lead to (~/.ssh/id_ed25519 → ~/.dotfiles/ssh/id_ed25519): hidden wherever it is.
      // (Unreadable: nothing shown from it.)
      if (isDir(targetOfPlace)) for (const d of look.list(targetOfPlace) ?? []) if (d.isSymbolicLink()) hideAgain(real(join(targetOfPlace, d.name)));
    }
    hideAgain(avfs);
    for (const s of new Set([...shown, ...prefixes])) for (const f of SECRET_TOOL_FILES) hideAgain(join(s, f));
    for (const s of shown) for (const f of TOKEN_CONFIGS) if (holdsToken(join(s, f))) hideAgain(join(s, f));
    if (home) for (const [top, patterns] of Object.entries(VERSION_SECRETS)) if (shown.includes(join(home, top))) for (const p of patterns) for (const f of expand(join(home, top), p)) hideAgain(f);
  }
  const links = [...pathLinks.filter((l) => shown.some((s) => within(l.target, s))), ...outsideLinks].filter((l) => !shown.some((s) => within(l.path, s)));
  return { shown, hiddenAgain, links };
}
