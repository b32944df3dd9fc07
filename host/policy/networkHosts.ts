/**
 * The hosts a command's network use goes to, as the policy read it: what a sandboxed run whose
 * network part was let run may reach (docs/exec.md, "Network by host"). Pure: from the judged
 * parts of a decision. The filtering proxy carries HTTP and HTTPS, so a part in the `networked`
 * category names its hosts by
 * - an http(s) URL among its words (`https://host/…`, also after `=`: `--registry=https://host/`);
 * - its program: a package manager reaches its registry (npm, npx, pnpm, yarn: registry.npmjs.org
 *   and registry.yarnpkg.com; pip, pipx, uv, poetry, pdm: pypi.org and files.pythonhosted.org).
 * - a git command's remote (`git push`, `git fetch upstream`, `git pull`, `git ls-remote`; the
 *   remote git would pick when none is named) or URL operand (`git clone gh:org/app`), resolved
 *   as git resolves it from the repository's configuration (gitConfig.ts: `insteadOf`,
 *   `pushInsteadOf`, `pushurl`, every URL a push goes to, `-c` options of the command), which the
 *   caller reads (`git`);
 * A networked part that names no host this way (an unknown remote, a script), or that also
 * speaks something the proxy does not carry (an `ssh://`, `git://` or `ftp://` URL, a
 * `user@host:path` remote over ssh), makes the answer null: the hosts are not known, and the run
 * gets the whole network as before.
 */
import { posix } from 'node:path';
import type { DecisionPart } from '../protocol/policy';
import { entryOfOption, GitRemoteConfig } from './gitConfig';

const REGISTRIES: Record<string, string[]> = {
  npm: ['registry.npmjs.org'],
  npx: ['registry.npmjs.org'],
  pnpm: ['registry.npmjs.org'],
  yarn: ['registry.yarnpkg.com', 'registry.npmjs.org'],
  pip: ['pypi.org', 'files.pythonhosted.org'],
  pipx: ['pypi.org', 'files.pythonhosted.org'],
  uv: ['pypi.org', 'files.pythonhosted.org'],
  poetry: ['pypi.org', 'files.pythonhosted.org'],
  pdm: ['pypi.org', 'files.pythonhosted.org'],
};

const URL_HOST = /(?:^|=)([a-z][a-z0-9+.-]*):\/\/(?:[^@/?#\s]*@)?(\[[0-9a-f:.]+\]|[^/:?#\s]+)/i;
const SCP_HOST = /^(?:[\w.-]+@)?([a-z0-9-]+(?:\.[a-z0-9-]+)+|localhost):(?!\/\/)/i;

/** A host as the proxy compares it: lower case, no trailing dot, IPv6 without brackets. */
export function normalHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '').replace(/^\[(.*)\]$/, '$1');
}

/** The configuration of the repository the command runs in (read when first asked), or null when there is none. */
export type GitLookup = () => GitRemoteConfig | null;

const GIT_VERBS = new Set(['push', 'fetch', 'pull', 'ls-remote', 'clone']);
/** Options of those verbs that take the next word as their value (so it is no operand). */
const GIT_VALUE_OPTIONS = new Set([
  '--depth', '--deepen', '--shallow-since', '--shallow-exclude', '-j', '--jobs', '--upload-pack', '--receive-pack', '--exec', '--refmap',
  '-o', '--server-option', '--push-option', '--negotiation-tip', '--filter', '-b', '--branch', '--origin', '--reference', '--reference-if-able',
  '--separate-git-dir', '-u', '--template', '--repo', '--bundle-uri', '-c', '--config',
]);

/**
 * `git [opts] push|fetch|pull|ls-remote|clone …`: the URLs it reaches, resolved as git would, or
 * undefined when the part is no such command; null when one of them cannot be known (a remote
 * with no URL configured, no repository to read).
 */
function gitUrlsOf(argv: string[], git: GitLookup): string[] | null | undefined {
  if (posix.basename(argv[0] ?? '') !== 'git') return undefined;
  // Past git's own options (`-C dir` and `-c name=value` take the next word; `-c` adds to the configuration).
  const options: string[] = [];
  let verbAt = 1;
  while (verbAt < argv.length && argv[verbAt]!.startsWith('-')) {
    if (argv[verbAt] === '-c') options.push(argv[verbAt + 1] ?? '');
    else if (argv[verbAt]!.startsWith('--config-env')) return null;
    verbAt += argv[verbAt] === '-C' || argv[verbAt] === '-c' ? 2 : 1;
  }
  const verb = argv[verbAt];
  if (verb === undefined || !GIT_VERBS.has(verb)) return undefined;
  const operands: string[] = [];
  let all = false;
  for (let i = verbAt + 1; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === '--') {
      operands.push(...argv.slice(i + 1));
      break;
    }
    if (w === '--all' && verb === 'fetch') all = true;
    if (verb === 'clone' && (w === '-c' || w === '--config')) options.push(argv[i + 1] ?? '');
    else if (verb === 'clone' && w.startsWith('--config=')) options.push(w.slice('--config='.length));
    if (GIT_VALUE_OPTIONS.has(w)) i++;
    else if (!w.startsWith('-')) operands.push(w);
  }
  const extra = options.map(entryOfOption).filter((e) => e !== null);
  const config = (git() ?? new GitRemoteConfig([], null, false)).with(extra);
  const push = verb === 'push';
  const isUrl = (w: string) => URL_HOST.test(w) || SCP_HOST.test(w) || config.rewrite(w) !== w;
  if (verb === 'clone') {
    const url = operands[0];
    return url === undefined ? null : config.urlsOfOperand(url, false);
  }
  if (all) return config.repository ? config.allRemoteUrls() : null;
  // The repository (a remote's name, or a URL), then refspecs: only the first names where it goes.
  const target = operands[0] ?? (config.repository ? config.defaultRemote(push) : null);
  if (target === null) return null;
  return (config.repository ? config.remoteUrls(target, push) : null) ?? (isUrl(target) ? config.urlsOfOperand(target, push) : null);
}

/** The hosts of URLs, or null when one of them is not carried by the proxy (ssh, git://, ftp://) or names no host. */
function hostsOfUrls(urls: string[], out: Set<string>): boolean {
  for (const u of urls) {
    const url = URL_HOST.exec(u);
    if (!url || !/^https?$/i.test(url[1]!)) return false;
    out.add(normalHost(url[2]!));
  }
  return true;
}

/** The part's hosts, or null when it reaches something the proxy cannot carry. */
function hostsOfPart(part: DecisionPart, git?: GitLookup): string[] | null {
  const out = new Set<string>();
  const gitUrls = git ? gitUrlsOf(part.argv, git) : undefined;
  if (gitUrls === null) return null;
  if (gitUrls !== undefined) {
    // Git's own reading of its operands replaces the plain one below (an alias is no URL to it).
    return hostsOfUrls(gitUrls, out) ? [...out] : null;
  }
  for (const word of part.argv) {
    const url = URL_HOST.exec(word);
    if (url) {
      if (!/^https?$/i.test(url[1]!)) return null;
      out.add(normalHost(url[2]!));
    } else if (SCP_HOST.test(word)) return null;
  }
  const name = (w: string | undefined) => posix.basename(w ?? '').replace(/\d+(\.\d+)*$/, '');
  // The program, and `python -m pip install …` is pip too.
  const m = part.argv.indexOf('-m');
  for (const prog of [name(part.argv[0]), ...(m > 0 ? [name(part.argv[m + 1])] : [])]) for (const h of REGISTRIES[prog] ?? []) out.add(h);
  return [...out];
}

/** The hosts of every networked part, or null when one of them names none the policy can see. */
export function networkHostsOf(parts: DecisionPart[], git?: GitLookup): string[] | null {
  const all = new Set<string>();
  for (const part of parts) {
    if (!part.categories.includes('networked')) continue;
    const hosts = hostsOfPart(part, git);
    if (!hosts || hosts.length === 0) return null;
    for (const h of hosts) all.add(h);
  }
  return all.size > 0 ? [...all].sort() : null;
}
