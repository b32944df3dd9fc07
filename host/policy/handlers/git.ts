/**
 * git: global options (-C, -c, --git-dir), then the subcommand. Reading history is allowed,
 * changing the work tree gets a checkpoint, talking to remotes needs approval, and anything that
 * makes git run a program later (hooks, core.hooksPath, fsmonitor, aliases with !) is denied.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { literal, litWord, type Word } from '../words';

/** Config keys whose value is a program git will run. */
const EXEC_KEY = /^(core\.(fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|sequence\.editor|diff\.external|diff\.[^.]+\.(textconv|command)|merge\.[^.]+\.driver|filter\.[^.]+\.(clean|smudge|process)|credential\.helper|gpg\.program|gpg\.[^.]+\.program|pager\.[^.]+|uploadpack\.packobjectshook|receive\.procreceiverefs|remote\.[^.]+\.(uploadpack|receivepack)|protocol\.ext\.allow|ssh\.variant|web\.browser|browser\.[^.]+\.cmd|man\.[^.]+\.cmd|interactive\.difffilter|instaweb\.httpd)$/i;

/** Judges one `key=value` git config pair, transient (-c) or persistent (git config). */
function configPair(c: Cmd, key: string, value: string | null, persistent: boolean): void {
  const k = key.toLowerCase();
  if (k === 'core.hookspath') {
    c.add(['persistence'], `${persistent ? 'git config' : 'git -c'} core.hooksPath makes git run hooks from ${value ?? 'an unknown place'}`);
    return;
  }
  const isAlias = k.startsWith('alias.');
  if (EXEC_KEY.test(k) || (isAlias && (value === null || value.startsWith('!')))) {
    if (persistent) {
      c.add(['persistence'], `git config ${key} stores a program git will run later`);
      return;
    }
    if (value === null) c.add(['obfuscation'], `git -c ${key} runs a computed program`);
    else if (k === 'protocol.ext.allow') c.add(['code_execution', 'unknown'], 'git -c protocol.ext.allow lets URLs run programs');
    else c.script(isAlias ? value.slice(1) : value, `git -c ${key}`);
  }
}

function gitConfig(c: Cmd, args: Word[]): void {
  const o = parseOpts(args, 'f', ['file', 'blob', 'type', 'default', 'comment', 'value']);
  const vals = o.operands.map((w) => literal(w));
  const reading = ['get', 'get-all', 'get-regexp', 'list', 'l', 'get-urlmatch', 'name-only', 'show-origin', 'show-scope', 'get-color', 'get-colorbool'].some((f) => o.flags.has(f)) || vals[0] === 'get' || vals[0] === 'list' || (vals.length === 1 && !o.flags.has('unset') && !o.flags.has('unset-all') && !o.flags.has('remove-section') && !o.flags.has('rename-section') && !o.flags.has('edit') && !o.flags.has('e'));
  if (o.flags.has('global') || o.flags.has('system')) {
    if (reading) {
      c.add(['read_only'], 'git config reads the host configuration');
      return;
    }
    c.add(['host_escape'], `git config --${o.flags.has('global') ? 'global' : 'system'} writes the host's git configuration`);
  }
  for (const w of [...(o.values.get('f') ?? []), ...(o.values.get('file') ?? [])]) c.path(w, reading ? 'read' : 'write');
  if (o.flags.has('edit') || o.flags.has('e')) {
    c.add(['interactive', 'persistence'], 'git config --edit opens an editor on the config');
    return;
  }
  if (reading) {
    c.add(['read_only'], 'git config reads a setting');
    return;
  }
  c.add(['mutating'], 'git config changes the repository configuration');
  const ops = vals[0] === 'set' || vals[0] === 'unset' ? vals.slice(1) : vals;
  if (ops[0]) configPair(c, ops[0], ops[1] ?? null, true);
  else if (ops[0] === null) c.add(['unknown'], 'git config of an unknown key');
}

const READ_ONLY = new Set([
  'status', 'log', 'diff', 'show', 'blame', 'annotate', 'shortlog', 'describe', 'rev-parse', 'rev-list', 'ls-files', 'ls-tree', 'cat-file',
  'grep', 'show-ref', 'for-each-ref', 'name-rev', 'merge-base', 'whatchanged', 'count-objects', 'check-ignore', 'check-attr', 'check-ref-format',
  'verify-commit', 'verify-tag', 'version', 'help', 'var', 'cherry', 'range-diff', 'diff-tree', 'diff-files', 'diff-index', 'fsck', 'show-branch',
  'ls-remote-local', 'get-tar-commit-id', 'column', 'hash-object', 'mktree', 'interpret-trailers', 'stripspace', 'request-pull', 'bugreport-dry',
]);
const NETWORK = new Set(['clone', 'fetch', 'pull', 'ls-remote', 'archive-remote']);
const MUTATING = new Set([
  'add', 'commit', 'merge', 'rebase', 'cherry-pick', 'revert', 'am', 'apply', 'mv', 'init', 'notes', 'replace', 'update-index', 'update-ref',
  'switch', 'checkout', 'reset', 'restore', 'stash', 'tag', 'branch', 'remote', 'worktree', 'gc', 'prune', 'repack', 'pack-refs', 'maintenance',
  'sparse-checkout', 'bisect', 'format-patch', 'archive', 'bundle', 'mergetool', 'difftool', 'symbolic-ref', 'read-tree', 'write-tree', 'commit-tree',
  'checkout-index', 'lfs', 'reflog', 'rerere', 'citool', 'clean', 'rm', 'filter-branch', 'filter-repo', 'submodule', 'fast-import', 'fast-export',
  'unpack-objects', 'prune-packed', 'multi-pack-index', 'commit-graph', 'range-diff',
]);

function sub(c: Cmd, name: string, args: Word[]): void {
  const o = parseOpts(args, name === 'commit' ? 'mFCcu' : name === 'log' || name === 'show' || name === 'diff' ? 'nSGL' : 'b', ['message', 'file', 'reuse-message', 'reedit-message', 'output', 'upload-pack', 'receive-pack', 'exec', 'template', 'separate-git-dir', 'reference', 'config', 'origin', 'branch', 'depth', 'output-directory', 'o', 'format', 'pretty', 'author', 'since', 'until', 'grep', 'date', 'max-count', 'tree-filter', 'index-filter', 'msg-filter', 'env-filter', 'commit-filter', 'parent-filter', 'tag-name-filter', 'subdirectory-filter']);
  const has = (...fs: string[]) => fs.some((f) => o.flags.has(f));
  const vals = o.operands.map((w) => literal(w));
  for (const k of ['upload-pack', 'receive-pack', 'exec', 'u']) {
    for (const w of o.values.get(k) ?? []) {
      const v = literal(w);
      if (v === null) c.add(['obfuscation'], `git ${name} --${k} runs a computed program`);
      else c.script(v, `git ${name} --${k}`);
    }
  }
  for (const w of o.values.get('config') ?? []) {
    const v = literal(w);
    const eq = v?.indexOf('=') ?? -1;
    if (v !== null && eq > 0) configPair(c, v.slice(0, eq), v.slice(eq + 1), false);
  }
  for (const k of ['tree-filter', 'index-filter', 'msg-filter', 'env-filter', 'commit-filter', 'parent-filter', 'tag-name-filter']) {
    for (const w of o.values.get(k) ?? []) {
      const v = literal(w);
      if (v === null) c.add(['obfuscation'], `git ${name} --${k} runs a computed command`);
      else c.script(v, `git ${name} --${k}`);
    }
  }
  for (const k of ['output', 'o', 'output-directory']) (o.values.get(k) ?? []).forEach((w) => c.path(w, 'write'));
  for (const k of ['F', 'file', 'template', 'reference']) (o.values.get(k) ?? []).forEach((w) => c.path(w, 'read'));
  for (const w of o.operands) if (/^ext::/.test(literal(w) ?? '')) c.add(['opaque_code'], 'an ext:: URL makes git run a program');

  if (name === 'config') {
    gitConfig(c, args);
    return;
  }
  if (name === 'push' || name === 'send-email' || name === 'svn' && vals[0] === 'dcommit') {
    c.add(['vcs_remote', 'networked'], `git ${name} sends commits to a remote`);
    if (has('force', 'f', 'force-with-lease', 'mirror', 'delete', 'd', 'prune') || vals.some((v) => v !== null && (v.startsWith('+') || v.startsWith(':')))) {
      c.add(['destructive'], `git ${name} can overwrite or delete remote history`);
    }
    return;
  }
  if (NETWORK.has(name) || (name === 'remote' && (vals[0] === 'update' || vals[0] === 'show' || vals[0] === 'prune')) || (name === 'submodule' && /^(update|add|sync|foreach)$/.test(vals[0] ?? ''))) {
    c.add(['networked'], `git ${name}${vals[0] && name !== 'clone' ? ' ' + vals[0] : ''} talks to a remote`);
    if (name === 'clone') {
      c.add(['mutating'], 'git clone creates a checkout');
      const urls = o.operands;
      const dest = urls[1];
      if (dest) c.path(dest, 'write', 'clones into');
      const src = urls[0] && literal(urls[0]);
      if (src && (src.startsWith('/') || src.startsWith('~') || src.startsWith('file://') || src.startsWith('..'))) c.path(litWord(src.replace(/^file:\/\//, ''), false), 'read');
    }
    if (name === 'pull') c.add(['mutating'], 'git pull changes the working tree');
    if (name === 'submodule' && vals[0] === 'foreach') {
      const cmd = o.operands.slice(1).map((w) => literal(w));
      if (cmd.every((x): x is string => x !== null)) c.script(cmd.join(' '), 'git submodule foreach');
      else c.add(['obfuscation'], 'git submodule foreach runs a computed command');
    }
    return;
  }
  if (name === 'clean') {
    if (has('n', 'dry-run')) c.add(['read_only'], 'git clean -n only lists');
    else c.add(['destructive'], 'git clean deletes untracked files');
    return;
  }
  if (name === 'reset') {
    c.add(has('hard', 'merge', 'keep') ? ['destructive'] : ['mutating'], has('hard') ? 'git reset --hard discards changes' : 'git reset moves HEAD');
    return;
  }
  if (name === 'checkout' || name === 'restore') {
    const discards = name === 'restore' ? !(has('staged', 'S') && !has('worktree', 'W')) : args.some((w) => literal(w) === '--') || has('f', 'force') || vals.includes('.');
    c.add(discards ? ['destructive'] : ['mutating'], discards ? `git ${name} overwrites working-tree changes` : `git ${name} switches branches`);
    if (has('p', 'patch')) c.add(['interactive'], `git ${name} -p asks on the terminal`);
    return;
  }
  if (name === 'stash') {
    const s = vals[0];
    if (s === 'list' || s === 'show') c.add(['read_only'], `git stash ${s} only reads`);
    else if (s === 'drop' || s === 'clear') c.add(['destructive'], `git stash ${s} deletes stashed work`);
    else c.add(['mutating'], 'git stash changes the working tree');
    return;
  }
  if (name === 'branch' || name === 'tag') {
    const listing = o.operands.length === 0 && !has('d', 'D', 'delete', 'm', 'M', 'move', 'c', 'C', 'copy', 'f', 'force', 'u', 'set-upstream-to', 'unset-upstream', 'edit-description', 'a', 's', 'annotate', 'sign');
    const listFlags = has('l', 'list', 'r', 'remotes', 'a', 'all', 'v', 'vv', 'show-current', 'contains', 'merged', 'no-merged', 'points-at', 'n');
    if (listing || (listFlags && o.operands.length === 0 && !has('d', 'D', 'delete'))) c.add(['read_only'], `git ${name} lists`);
    else c.add(has('D') || (has('d', 'delete') && has('f', 'force')) ? ['destructive'] : ['mutating'], `git ${name} changes refs`);
    return;
  }
  if (name === 'remote') {
    if (!vals[0] || vals[0] === 'get-url' || vals[0] === '-v' || has('v', 'verbose')) c.add(['read_only'], 'git remote lists remotes');
    else c.add(['mutating'], `git remote ${vals[0]} changes the remotes`);
    return;
  }
  if (name === 'worktree') {
    if (vals[0] === 'list') c.add(['read_only'], 'git worktree list');
    else {
      c.add(['mutating'], `git worktree ${vals[0] ?? ''}`);
      if (vals[0] === 'add' && o.operands[1]) c.path(o.operands[1], 'write', 'adds a worktree at');
    }
    return;
  }
  if (name === 'reflog' && (!vals[0] || vals[0] === 'show')) {
    c.add(['read_only'], 'git reflog lists');
    return;
  }
  if (name === 'hook') {
    c.add(['code_execution', 'mutating'], 'git hook run runs a repository hook');
    return;
  }
  if (name === 'daemon' || name === 'instaweb' || name === 'http-backend' || name === 'credential' || name === 'credential-store' || name === 'credential-cache') {
    c.add(name.startsWith('credential') ? ['host_escape'] : ['networked'], `git ${name} ${name.startsWith('credential') ? 'handles host credentials' : 'serves the repository'}`);
    return;
  }
  if (READ_ONLY.has(name)) {
    c.add(['read_only'], `git ${name} only reads`);
    if ((name === 'diff' || name === 'log' || name === 'show') && has('ext-diff')) c.add(['code_execution'], `git ${name} --ext-diff runs an external diff program`);
    o.operands.forEach((w) => {
      const v = literal(w);
      if (v !== null && (v.startsWith('/') || v.startsWith('~') || v.includes('..') && !/\.\.\.?/.test(v.replace(/\/\.\.(\/|$)/g, '')))) c.maybePath(w, 'read');
    });
    c.outputsWorkspacePaths = name === 'ls-files' || (name === 'diff' && has('name-only'));
    return;
  }
  if (name === 'commit') {
    c.add(['mutating'], 'git commit records changes');
    if (!o.values.has('m') && !o.values.has('message') && !o.values.has('F') && !o.values.has('file') && !o.values.has('C') && !o.values.has('reuse-message') && !has('no-edit') && !has('fixup')) {
      c.add(['interactive'], 'git commit without -m opens an editor');
    }
    return;
  }
  if ((name === 'rebase' && has('i', 'interactive')) || (name === 'add' && has('p', 'patch', 'i', 'interactive', 'e', 'edit'))) {
    c.add(['mutating', 'interactive'], `git ${name} -i asks on the terminal`);
    return;
  }
  if (name === 'rm') {
    c.add(['destructive'], 'git rm deletes files');
    return;
  }
  if (MUTATING.has(name)) {
    c.add(['mutating'], `git ${name} changes the repository`);
    if (name === 'submodule' || name === 'lfs') c.add(['networked'], `git ${name} may fetch`);
    return;
  }
  // An alias from the user's gitconfig, or an external git-<name> program.
  c.add(['mutating', 'code_execution'], `git ${name} is not a known git command (an alias or external program)`);
}

const git: Handler = (c) => {
  let i = 0;
  for (; i < c.args.length; i++) {
    const v = c.vals[i];
    if (v === null || v === undefined || !v.startsWith('-')) break;
    const next = c.args[i + 1];
    if (v === '-C') {
      if (next) {
        const verdict = c.path(next, 'read', 'works in');
        if (verdict.cls !== 'inside') c.add(['host_escape'], `git -C points at ${next.raw}, outside the workspace`);
      }
      i++;
    } else if (v === '-c') {
      const kv = next ? literal(next) : null;
      if (kv === null) c.add(['obfuscation'], 'git -c with a computed setting');
      else {
        const eq = kv.indexOf('=');
        configPair(c, eq > 0 ? kv.slice(0, eq) : kv, eq > 0 ? kv.slice(eq + 1) : 'true', false);
      }
      i++;
    } else if (/^--(git-dir|work-tree|namespace|exec-path|super-prefix|config-env)=?/.test(v)) {
      const eq = v.indexOf('=');
      const w = eq > 0 ? litWord(v.slice(eq + 1), false) : next;
      if (eq < 0) i++;
      if (w && /^--(git-dir|work-tree)/.test(v)) {
        const verdict = c.path(w, 'read', 'uses');
        if (verdict.cls !== 'inside' && verdict.cls !== 'git_control') c.add(['host_escape'], `git ${v.split('=')[0]} points outside the workspace`);
      }
      if (w && /^--exec-path/.test(v) && eq > 0) c.add(['code_execution', 'unknown'], 'git --exec-path runs git programs from another place');
      if (/^--config-env/.test(v)) c.add(['unknown'], 'git --config-env reads a setting from the environment');
    }
  }
  const name = c.vals[i];
  if (name === undefined) {
    c.add(['read_only'], 'git with no command prints help');
    return;
  }
  if (name === null) {
    c.add(['obfuscation'], 'the git subcommand is computed');
    return;
  }
  sub(c, name, c.args.slice(i + 1));
};

export const GIT_TOOLS: Record<string, Handler> = { git };
