/**
 * Git's configuration as git reads it, for the one question the sandbox asks of it: which hosts a
 * `git push` / `fetch` / `pull` / `ls-remote` / `clone` reaches (networkHosts.ts). Pure: the
 * caller reads the files (proxy/gitRemotes.ts) in git's order (system, global, the repository's,
 * then `-c` options) and this resolves the remote as git's remote.c does:
 * - a remote's URLs are its `url` values; fetching uses the first, pushing uses every `pushurl`
 *   when there is one, else every `url`;
 * - `url.<base>.insteadOf` rewrites a URL (or a remote's `url`/`pushurl`) that starts with its
 *   value to start with `<base>` instead, the longest match winning;
 * - `url.<base>.pushInsteadOf` does the same for pushing, to the `url`s of a remote that has no
 *   `pushurl` (each one it rewrites becomes a push URL);
 * - the remote a bare command goes to: `branch.<current>.pushRemote`, `remote.pushDefault`, then
 *   `branch.<current>.remote` for a push; `branch.<current>.remote` for the others; else `origin`.
 * `include.path` is followed, and `includeIf.<condition>.path` where the caller's reader says the
 * condition holds (it knows where git runs: proxy/gitRemotes.ts, with the `GIT_CONFIG_*`
 * environment variables); `gitConfigParameters` reads git's own `GIT_CONFIG_PARAMETERS`.
 */

export interface GitConfigEntry {
  /** `section.name` or `section.subsection.name`: section and name in lower case, the subsection as written. */
  key: string;
  value: string;
}

const MAX_INCLUDE_DEPTH = 10;
const ESCAPES: Record<string, string> = { n: '\n', t: '\t', b: '\b' };

/** One value: quotes removed, escapes read, a comment (`#`, `;`) outside quotes dropped, outer blanks trimmed. */
function valueOf(raw: string): string {
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && i + 1 < raw.length) {
      const n = raw[++i]!;
      out += pendingSpace + (ESCAPES[n] ?? n);
      pendingSpace = '';
      continue;
    }
    if (c === '"') {
      quoted = !quoted;
      out += pendingSpace;
      pendingSpace = '';
      continue;
    }
    if (!quoted && (c === '#' || c === ';')) break;
    if (!quoted && (c === ' ' || c === '\t')) {
      if (out !== '') pendingSpace += c;
      continue;
    }
    out += pendingSpace + c;
    pendingSpace = '';
  }
  return out;
}

/**
 * Reads a file that `include.path` names (as written there): its text and how to read the files it
 * includes in turn (relative to it), or null when it cannot be read. For `includeIf`, `condition`
 * is what follows `includeIf.` (`gitdir:~/work/`, `onbranch:main`…): null too when it does not hold.
 */
export type GitInclude = (path: string, condition?: string) => { text: string; include: GitInclude } | null;

/** The entries of one config file's text, in order; an included file's entries take the include's place, as in git. */
export function parseGitConfig(text: string, include?: GitInclude, depth = 0): GitConfigEntry[] {
  const out: GitConfigEntry[] = [];
  let section: string | null = null;
  // A value continued on the next line (a backslash at its end).
  const lines = text.replace(/\\\r?\n/g, '').split(/\r?\n/);
  for (const raw of lines) {
    let line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    if (line.startsWith('[')) {
      const m = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]/.exec(line);
      if (!m) {
        section = null;
        continue;
      }
      const name = m[1]!;
      if (m[2] !== undefined) section = `${name.toLowerCase()}.${m[2].replace(/\\(.)/g, '$1')}`;
      else {
        // `[section.sub]` (the old form): the subsection in lower case.
        const dot = name.indexOf('.');
        section = dot < 0 ? name.toLowerCase() : `${name.slice(0, dot).toLowerCase()}.${name.slice(dot + 1).toLowerCase()}`;
      }
      line = line.slice(m[0].length).trim();
      if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    }
    if (section === null) continue;
    const kv = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=(.*))?$/.exec(line);
    if (!kv) continue;
    const entry = { key: `${section}.${kv[1]!.toLowerCase()}`, value: kv[2] === undefined ? 'true' : valueOf(kv[2]) };
    out.push(entry);
    const conditional = entry.key.startsWith('includeif.') && entry.key.endsWith('.path');
    if ((entry.key === 'include.path' || conditional) && include && depth < MAX_INCLUDE_DEPTH) {
      const inner = conditional ? include(entry.value, entry.key.slice('includeif.'.length, -'.path'.length)) : include(entry.value);
      if (inner !== null) out.push(...parseGitConfig(inner.text, inner.include, depth + 1));
    }
  }
  return out;
}

/** `-c name=value` as git takes it: the section and name in lower case, the subsection as written. */
export function entryOfOption(option: string): GitConfigEntry | null {
  const eq = option.indexOf('=');
  const key = eq < 0 ? option : option.slice(0, eq);
  const first = key.indexOf('.');
  const last = key.lastIndexOf('.');
  if (first <= 0 || last === key.length - 1) return null;
  const norm = first === last ? key.toLowerCase() : `${key.slice(0, first).toLowerCase()}${key.slice(first, last)}${key.slice(last).toLowerCase()}`;
  return { key: norm, value: eq < 0 ? 'true' : option.slice(eq + 1) };
}

/**
 * `GIT_CONFIG_PARAMETERS` (how git hands its `-c` options to the programs it runs, and what a
 * caller may set): single-quoted words, `'key'='value'` or `'key=value'`, apart by spaces; a
 * quote inside a word is written `'\''`. Null when it does not read as that (git refuses it too).
 */
export function gitConfigParameters(text: string): GitConfigEntry[] | null {
  const out: GitConfigEntry[] = [];
  let i = 0;
  /** One single-quoted word from `i` (with its `\'` joins), or null. */
  const word = (): string | null => {
    let w = '';
    for (;;) {
      if (text[i] !== "'") return null;
      const end = text.indexOf("'", i + 1);
      if (end < 0) return null;
      w += text.slice(i + 1, end);
      i = end + 1;
      if (text.startsWith("\\'", i)) {
        w += "'";
        i += 2;
        continue;
      }
      return w;
    }
  };
  while (i < text.length) {
    if (text[i] === ' ') {
      i++;
      continue;
    }
    const key = word();
    if (key === null) return null;
    let entry: GitConfigEntry | null;
    if (text[i] === '=') {
      i++;
      const value = text[i] === "'" ? word() : '';
      if (value === null) return null;
      entry = entryOfOption(`${key}=${value}`);
    } else entry = entryOfOption(key);
    if (entry === null) return null;
    out.push(entry);
  }
  return out;
}

/** The remotes of one repository as git resolves them, from its configuration's entries (in git's order). */
export class GitRemoteConfig {
  private readonly entries: GitConfigEntry[];

  /**
   * `branch`: the branch checked out (from HEAD), or null when detached or unknown; `repository`:
   * false for the files git reads outside any repository (system and global: no remotes of a
   * repository's own).
   */
  constructor(
    entries: GitConfigEntry[],
    private readonly branch: string | null,
    readonly repository = true,
  ) {
    this.entries = entries;
  }

  /** The same configuration with more entries after it (a command's `-c` options). */
  with(more: GitConfigEntry[]): GitRemoteConfig {
    return more.length === 0 ? this : new GitRemoteConfig([...this.entries, ...more], this.branch, this.repository);
  }

  private all(key: string): string[] {
    return this.entries.filter((e) => e.key === key).map((e) => e.value);
  }

  private last(key: string): string | undefined {
    const all = this.all(key);
    return all[all.length - 1];
  }

  /** `url` rewritten by the longest `url.<base>.insteadOf` (`kind` insteadof) or `pushInsteadOf` value it starts with; null when none matches. */
  private alias(url: string, kind: 'insteadof' | 'pushinsteadof'): string | null {
    let best: { base: string; prefix: string } | null = null;
    for (const e of this.entries) {
      if (!e.key.startsWith('url.') || !e.key.endsWith(`.${kind}`)) continue;
      const base = e.key.slice(4, -(kind.length + 1));
      if (e.value !== '' && url.startsWith(e.value) && (!best || e.value.length > best.prefix.length)) best = { base, prefix: e.value };
    }
    return best ? best.base + url.slice(best.prefix.length) : null;
  }

  /** A URL (a command's operand, or a remote's `url`) as git fetches from it. */
  rewrite(url: string): string {
    return this.alias(url, 'insteadof') ?? url;
  }

  /** The URLs git fetches from (`push` false: the first alone) or pushes to for a remote's `urls` and `pushurls`. */
  private resolve(urls: string[], pushurls: string[], push: boolean): string[] {
    if (!push) return urls.slice(0, 1).map((u) => this.rewrite(u));
    if (pushurls.length > 0) return pushurls.map((u) => this.rewrite(u));
    const aliased = urls.map((u) => this.alias(u, 'pushinsteadof')).filter((u): u is string => u !== null);
    return aliased.length > 0 ? aliased : urls.map((u) => this.rewrite(u));
  }

  /** Where pushing to (or fetching from) a URL operand goes. */
  urlsOfOperand(url: string, push: boolean): string[] {
    return this.resolve([url], [], push);
  }

  /** The URLs a configured remote reaches; null when no remote of that name has a URL. */
  remoteUrls(name: string, push: boolean): string[] | null {
    const urls = this.all(`remote.${name}.url`);
    if (urls.length === 0) return null;
    return this.resolve(urls, this.all(`remote.${name}.pushurl`), push);
  }

  /** The URLs `git fetch --all` fetches from: every remote's first. */
  allRemoteUrls(): string[] {
    const names = new Set(this.entries.filter((e) => e.key.startsWith('remote.') && e.key.endsWith('.url')).map((e) => e.key.slice(7, -4)));
    return [...names].flatMap((n) => this.remoteUrls(n, false) ?? []);
  }

  /** The remote a command that names none goes to. */
  defaultRemote(push: boolean): string {
    const b = this.branch;
    const pick = push ? [b && this.last(`branch.${b}.pushremote`), this.last('remote.pushdefault'), b && this.last(`branch.${b}.remote`)] : [b && this.last(`branch.${b}.remote`)];
    // `.` is the repository itself (no network).
    return pick.find((r): r is string => !!r) ?? 'origin';
  }
}
