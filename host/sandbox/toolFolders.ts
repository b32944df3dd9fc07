/**
 * The folders of the tools a run's PATH names that the sandbox would hide (under the home, /tmp or
 * a hidden folder such as /run), to be shown read-only: not only the PATH folder, whose programs
 * are often a version manager's shims or links into a prefix, but the tool's whole folder, so
 * what they call runs too (pyenv's shims exec ~/.pyenv/libexec/pyenv and then a version under
 * ~/.pyenv/versions; nvm's npm links to ../lib/node_modules; rustup's proxies in ~/.cargo/bin read
 * toolchains in ~/.rustup). The secrets inside a shown folder are hidden again. Pure apart from
 * reading the file system (no process, no write); docs/exec.md, "What `workspace` guarantees".
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { realIfThere, SECRET_TOOL_FILES, secretIn, type Secrets, within } from './secrets';

/** PATH folders whose parent is the tool's own prefix. */
const LEAVES = new Set(['bin', 'sbin', 'shims']);
/**
 * Folders of the home that many programs share, or an editor's data with its extensions' state
 * (the XDG places; VS Code's and its forks' servers, which put their CLI on PATH): never shown
 * whole, only a `bin`'s prefix or the PATH folder inside.
 */
const SHARED = new Set(['.local', '.config', '.cache', '.var', '.vscode', '.vscode-server', '.vscode-server-insiders', '.vscode-remote', '.cursor-server', '.windsurf-server']);
/** Beside ~/.local/bin: where pip --user and pipx keep what its programs load. */
const LOCAL_PROGRAM_DIRS = ['.local/lib', '.local/share/pipx', '.local/pipx'];
/** Top folders of the home that are a tool's own though not dot-named (Go's, Android's, conda's defaults). */
const TOP_TOOLS = new Set(['go', 'sdk', 'miniconda3', 'anaconda3', 'miniforge3', 'mambaforge', 'micromamba']);
/** What a tool under the home reads beside its own folder: rustup's toolchains, a version manager's global version file. */
const COMPANIONS: Record<string, string[]> = {
  '.cargo': ['.rustup'],
  '.pyenv': ['.python-version'],
  '.rbenv': ['.ruby-version'],
  '.nodenv': ['.node-version'],
  '.asdf': ['.tool-versions'],
};
/** Environment variables that name a tool's folder (GOPATH may name several). */
export const TOOL_VARS = [
  'PYENV_ROOT', 'RBENV_ROOT', 'NODENV_ROOT', 'NVM_DIR', 'FNM_DIR', 'VOLTA_HOME', 'ASDF_DIR', 'ASDF_DATA_DIR', 'SDKMAN_DIR', 'RUSTUP_HOME', 'CARGO_HOME',
  'GOROOT', 'GOPATH', 'CONDA_PREFIX', 'VIRTUAL_ENV', 'PIPX_HOME', 'BUN_INSTALL', 'DENO_INSTALL', 'PNPM_HOME', 'JAVA_HOME',
];

export interface ToolFolders {
  /** Shown read-only, outermost first (none inside another). */
  shown: string[];
  /** Secrets inside a shown folder, covered again: a directory by an empty tmpfs, a file by an empty one. */
  hiddenAgain: Array<{ path: string; dir: boolean }>;
}

export interface ToolFoldersInput {
  /** The caller's environment (not what a request adds): its PATH and the TOOL_VARS. */
  env: Record<string, string | undefined>;
  /** The home the sandbox makes private, or null. */
  home: string | null;
  /** The home's secret places and the avfs home (secrets.ts). */
  secrets: Secrets;
  /** The other places the sandbox covers (plan.ts's hidden()). */
  hide: string[];
}

/** The folders that hold the tool of `dir` (absolute, links resolved): its own, and what it reads beside it. */
function foldersOf(dir: string, home: string | null, covered: string[]): string[] {
  if (home && within(dir, home) && dir !== home) {
    const parts = dir.slice(home.length + 1).split('/');
    const top = parts[0]!;
    if (top === '.local' && parts.length === 2 && parts[1] === 'bin') return [dir, ...LOCAL_PROGRAM_DIRS.map((p) => join(home, p))];
    if (!SHARED.has(top) && (top.startsWith('.') || TOP_TOOLS.has(top))) return [join(home, top), ...(COMPANIONS[top] ?? []).map((c) => join(home, c))];
  }
  const parent = dirname(dir);
  const shared = home !== null && [...SHARED].some((s) => join(home, s) === parent);
  // A prefix's bin shows the prefix, unless that is a place the sandbox covers whole (/tmp, the home).
  if (LEAVES.has(basename(dir)) && !shared && !covered.some((c) => within(c, parent))) return [parent];
  return [dir];
}

const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/** The `home` of a Python virtual environment's pyvenv.cfg: the folder of the interpreter it was made from. */
function venvBase(folder: string): string | null {
  const cfg = join(folder, 'pyvenv.cfg');
  if (!existsSync(cfg)) return null;
  try {
    const m = /^\s*home\s*=\s*(.+?)\s*$/m.exec(readFileSync(cfg, 'utf8'));
    return m && isAbsolute(m[1]!) ? m[1]! : null;
  } catch {
    return null;
  }
}

export function toolFolders(i: ToolFoldersInput): ToolFolders {
  const home = i.home;
  const covered = ['/tmp', ...(home ? [home] : []), ...i.hide];
  const avfs = i.secrets.avfsHome;
  const isSecret = (p: string) => home !== null && secretIn(p, i.secrets) !== null;
  const starts: string[] = (i.env.PATH ?? '').split(':');
  for (const v of TOOL_VARS) starts.push(...(i.env[v] ?? '').split(':'));
  const candidates: string[] = [];
  // The prefix of each `bin` named (a Node under ~/.nvm/versions/node/v22 keeps npm's global config in its etc/npmrc).
  const prefixes = new Set<string>();
  const seen = new Set<string>();
  const consider = (entry: string) => {
    const dir = isAbsolute(entry) ? realIfThere(entry) : null;
    // A folder (a file on PATH shows nothing), never one in the avfs home (its mounts may be served by this very process).
    if (dir === null || seen.has(dir) || within(dir, i.secrets.avfsHome) || !isDir(dir)) return;
    seen.add(dir);
    if (LEAVES.has(basename(dir))) prefixes.add(dirname(dir));
    for (const f of foldersOf(dir, home, covered)) {
      candidates.push(f);
      // A virtual environment's base: the bin of the interpreter it was made from, nothing else.
      const base = covered.some((d) => within(f, d)) ? venvBase(f) : null;
      if (base && LEAVES.has(basename(base))) consider(base);
    }
  };
  for (const entry of starts) consider(entry);

  const shown: string[] = [];
  for (const c of candidates) {
    const f = realIfThere(c);
    if (f === null) continue;
    // Shown only where the sandbox would hide it, never a covered place whole, never in the avfs home.
    if (!covered.some((d) => within(f, d)) || covered.some((d) => within(d, f)) || within(f, avfs)) continue;
    // Not a secret, nor a link to one (a folder holding one is shown, with it hidden again below).
    if (isSecret(c) || isSecret(f)) continue;
    if (shown.some((s) => within(f, s))) continue;
    for (let k = shown.length - 1; k >= 0; k--) if (within(shown[k]!, f)) shown.splice(k, 1);
    shown.push(f);
  }
  shown.sort((a, b) => a.length - b.length || (a < b ? -1 : 1));

  const hiddenAgain: ToolFolders['hiddenAgain'] = [];
  const hideAgain = (p: string) => {
    const target = realIfThere(p);
    if (target === null) return;
    if (!shown.some((s) => within(target, s) && target !== s) || hiddenAgain.some((h) => within(target, h.path))) return;
    hiddenAgain.push({ path: target, dir: statSync(target).isDirectory() });
  };
  if (home) for (const [, path] of i.secrets.places) hideAgain(path);
  hideAgain(avfs);
  for (const s of new Set([...shown, ...prefixes])) for (const f of SECRET_TOOL_FILES) hideAgain(join(s, f));
  return { shown, hiddenAgain };
}
