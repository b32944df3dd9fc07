/**
 * The hosts a command's network use goes to, as the policy read it: what a sandboxed run whose
 * network part was let run may reach (docs/exec.md, "Network by host"). Pure: from the judged
 * parts of a decision. The filtering proxy carries HTTP and HTTPS, so a part in the `networked`
 * category names its hosts by
 * - an http(s) URL among its words (`https://host/…`, also after `=`: `--registry=https://host/`);
 * - its program: a package manager reaches its registry (npm, npx, pnpm, yarn: registry.npmjs.org
 *   and registry.yarnpkg.com; pip, pipx, uv, poetry, pdm: pypi.org and files.pythonhosted.org).
 * - a git remote named by the part (`git push`, `git fetch upstream`: `origin` when none is
 *   named), whose URL the caller looks up in the repository's config (`remoteUrl`);
 * A networked part that names no host this way (an unknown remote, a script), or that also
 * speaks something the proxy does not carry (an `ssh://`, `git://` or `ftp://` URL, a
 * `user@host:path` remote over ssh), makes the answer null: the hosts are not known, and the run
 * gets the whole network as before.
 */
import { posix } from 'node:path';
import type { DecisionPart } from '../protocol/policy';

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

/** Looks up a git remote's URL (the caller reads the repository's config), or null. */
export type RemoteUrl = (remote: string) => string | null;

const GIT_REMOTE_VERBS = new Set(['push', 'fetch', 'pull', 'ls-remote']);

/** `git [opts] push|fetch|pull|ls-remote [opts] [remote]`: the remote it names, or `origin`; null when it is not one of those or names a URL. */
function gitRemoteOf(argv: string[]): string | null {
  if (posix.basename(argv[0] ?? '') !== 'git') return null;
  // Past git's own options (`-C dir` and `-c name=value` take the next word).
  let verbAt = 1;
  while (verbAt < argv.length && argv[verbAt]!.startsWith('-')) verbAt += argv[verbAt] === '-C' || argv[verbAt] === '-c' ? 2 : 1;
  if (verbAt >= argv.length || !GIT_REMOTE_VERBS.has(argv[verbAt]!)) return null;
  const operand = argv.slice(verbAt + 1).find((w) => !w.startsWith('-'));
  if (operand && (URL_HOST.test(operand) || SCP_HOST.test(operand))) return null;
  return operand ?? 'origin';
}

/** The part's hosts, or null when it reaches something the proxy cannot carry. */
function hostsOfPart(part: DecisionPart, remoteUrl?: RemoteUrl): string[] | null {
  const out = new Set<string>();
  const remote = remoteUrl ? gitRemoteOf(part.argv) : null;
  if (remote) {
    const url = URL_HOST.exec(remoteUrl!(remote) ?? '');
    if (!url || !/^https?$/i.test(url[1]!)) return null;
    out.add(normalHost(url[2]!));
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
export function networkHostsOf(parts: DecisionPart[], remoteUrl?: RemoteUrl): string[] | null {
  const all = new Set<string>();
  for (const part of parts) {
    if (!part.categories.includes('networked')) continue;
    const hosts = hostsOfPart(part, remoteUrl);
    if (!hosts || hosts.length === 0) return null;
    for (const h of hosts) all.add(h);
  }
  return all.size > 0 ? [...all].sort() : null;
}
