/**
 * git: global options (-C, -c, --git-dir), then the subcommand. Reading history is allowed,
 * changing the work tree gets a checkpoint, talking to remotes needs approval, and anything that
 * makes git run a program later (hooks, core.hooksPath, fsmonitor, aliases with !) is denied.
 * Programs git runs now (-c core.pager=…, rebase --exec, bisect run, difftool -x, grep -O) are
 * judged as if typed directly; files it writes or reads through options are judged as paths.
 */
import type { Handler } from '../classify';
import { Cmd, type ParsedOpts, parseOpts } from '../command';
import { dropPrefix, literal, litWord, tildeAsHome, type Word } from '../words';

/** Config keys whose value is a program (or shell text) git will run. */
const EXEC_KEY = new RegExp(
  '^(' +
    [
      'core\\.(fsmonitor|sshcommand|pager|editor|askpass|gitproxy|alternaterefscommand)',
      'sequence\\.editor',
      'diff\\.external',
      'diff\\.[^.]+\\.(textconv|command)',
      'merge\\.[^.]+\\.driver',
      '(diff|merge)tool\\.[^.]+\\.(cmd|path)',
      'filter\\.[^.]+\\.(clean|smudge|process)',
      'credential\\.(.+\\.)?helper',
      'gpg\\.program',
      'gpg\\.[^.]+\\.program',
      'pager\\.[^.]+',
      'uploadpack\\.packobjectshook',
      'receive\\.procreceiverefs',
      'remote\\.[^.]+\\.(uploadpack|receivepack|vcs)',
      'protocol\\.ext\\.allow',
      'ssh\\.variant',
      'web\\.browser',
      'browser\\.[^.]+\\.(cmd|path)',
      'man\\.[^.]+\\.(cmd|path)',
      'interactive\\.difffilter',
      'instaweb\\.httpd',
      'sendemail\\.(tocmd|cccmd|headercmd|sendmailcmd|smtpserver)',
      'trailer\\.[^.]+\\.(cmd|command)',
      'imap\\.tunnel',
    ].join('|') +
    ')$',
  'i',
);

/** Keys whose value is a file git reads (or, for cookies, writes). */
const FILE_KEY =
  /^(core\.(excludesfile|attributesfile)|commit\.template|blame\.ignorerevsfile|mailmap\.file|gpg\.ssh\.allowedsignersfile|gpg\.ssh\.revocationfile|http\.(.+\.)?(sslcert|sslkey|sslcainfo|sslcapath|cookiefile)|fetch\.bundleuri|core\.sparsecheckoutfile)$/;

/** Judges one `key=value` git config pair, transient (-c) or persistent (git config). */
function configPair(cmd: Cmd, key: string, value: string | null, persistent: boolean): void {
  const lower = key.toLowerCase();
  const how = persistent ? 'git config' : 'git -c';
  if (lower === 'core.hookspath' || lower === 'init.templatedir') {
    cmd.add(['persistence'], `${how} ${key} makes git run hooks from ${value ?? 'an unknown place'}`);
    return;
  }
  // Where git reads and writes the working tree and the repository: every later git command
  // (add, checkout, clean, reset --hard) acts there.
  if (lower === 'core.worktree' || lower === 'core.gitdir') {
    if (value === null) cmd.add(['unknown'], `${how} ${key} points git at a computed directory`);
    else cmd.path(tildeAsHome(litWord(value, false)), 'write', `${how} ${key} makes later git commands work in`);
    return;
  }
  if (lower === 'include.path' || /^includeif\..+\.path$/.test(lower)) {
    cmd.add(['code_execution', 'unknown'], `${how} ${key} pulls in another configuration file, with whatever programs it names`);
    if (value !== null) cmd.path(litWord(value, false), 'read');
    return;
  }
  if (FILE_KEY.test(lower)) {
    // Git reads (http.cookieFile: and writes) the file a key names: `-c core.excludesFile=~/.ssh/id_rsa`.
    if (value === null) cmd.add(['unknown'], `${how} ${key} names a computed file`);
    else cmd.path(tildeAsHome(litWord(value, false)), lower.endsWith('cookiefile') ? 'write' : 'read');
    return;
  }
  const isAlias = lower.startsWith('alias.');
  if (!EXEC_KEY.test(lower) && !(isAlias && (value === null || value.startsWith('!')))) return;
  if (persistent) {
    cmd.add(['persistence'], `git config ${key} stores a program git will run later`);
    return;
  }
  if (value === null) cmd.add(['obfuscation'], `git -c ${key} runs a computed program`);
  else if (lower === 'protocol.ext.allow') cmd.add(['code_execution', 'unknown'], 'git -c protocol.ext.allow lets URLs run programs');
  else cmd.runs(litWord(isAlias || value.startsWith('!') ? value.slice(1) : value), `git -c ${key}`);
}

function gitConfig(cmd: Cmd, args: Word[]): void {
  const opts = parseOpts(args, 'f', ['file', 'blob', 'type', 'default', 'comment', 'value']);
  const operands = opts.operands.map((word) => literal(word));
  const editing = ['unset', 'unset-all', 'remove-section', 'rename-section', 'edit', 'e', 'add', 'replace-all'].some((flag) => opts.flags.has(flag));
  const reading =
    [
      'get', 'get-all', 'get-regexp', 'list', 'l', 'get-urlmatch', 'name-only', 'show-origin', 'show-scope', 'get-color', 'get-colorbool',
    ].some((flag) => opts.flags.has(flag)) ||
    operands[0] === 'get' ||
    operands[0] === 'list' ||
    (operands.length === 1 && !editing);
  if (opts.flags.has('global') || opts.flags.has('system')) {
    if (reading) {
      cmd.add(['read_only'], 'git config reads the host configuration');
      return;
    }
    cmd.add(['host_escape'], `git config --${opts.flags.has('global') ? 'global' : 'system'} writes the host's git configuration`);
  }
  for (const file of [...(opts.values.get('f') ?? []), ...(opts.values.get('file') ?? [])]) cmd.path(file, reading ? 'read' : 'write');
  if (opts.flags.has('edit') || opts.flags.has('e')) {
    cmd.add(['interactive', 'persistence'], 'git config --edit opens an editor on the config');
    return;
  }
  if (reading) {
    cmd.add(['read_only'], 'git config reads a setting');
    return;
  }
  cmd.add(['mutating'], 'git config changes the repository configuration');
  const pair = operands[0] === 'set' || operands[0] === 'unset' ? operands.slice(1) : operands;
  if (pair[0]) configPair(cmd, pair[0], pair[1] ?? null, true);
  else if (pair[0] === null) cmd.add(['unknown'], 'git config of an unknown key');
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

/** Short options that take a value, by subcommand (`-o FILE`, `-x CMD`); others default to -b. */
const SHORT_VALUED: Record<string, string> = {
  commit: 'mFCcut',
  log: 'nSGLO',
  show: 'nSGLO',
  diff: 'nSGLO',
  whatchanged: 'nSGLO',
  archive: 'o',
  'format-patch': 'ov',
  rebase: 'xsX',
  difftool: 'xt',
  mergetool: 't',
  grep: 'efmABC',
  clone: 'obcju',
  blame: 'SLC',
  tag: 'mFu',
  merge: 'mFsX',
  notes: 'mFCc',
  'commit-tree': 'mFp',
  am: 'pSC',
  apply: 'pC',
};

const LONG_VALUED = [
  'message', 'file', 'reuse-message', 'reedit-message', 'output', 'upload-pack', 'receive-pack', 'exec', 'template', 'separate-git-dir', 'reference',
  'config', 'origin', 'branch', 'depth', 'output-directory', 'format', 'pretty', 'author', 'since', 'until', 'grep', 'date', 'max-count', 'tree-filter',
  'index-filter', 'msg-filter', 'env-filter', 'commit-filter', 'parent-filter', 'tag-name-filter', 'subdirectory-filter', 'extcmd', 'tool',
  'directory', 'prefix', 'index-output', 'export-marks', 'import-marks', 'ignore-revs-file', 'contents', 'smtp-server', 'to-cmd', 'cc-cmd',
  'header-cmd', 'sendmail-cmd', 'httpd', 'open-files-in-pager', 'strategy', 'strategy-option',
];

/** Options whose value git runs as a program or shell text. */
const RUNS = [
  'upload-pack', 'receive-pack', 'exec', 'u', 'tree-filter', 'index-filter', 'msg-filter', 'env-filter', 'commit-filter', 'parent-filter',
  'tag-name-filter', 'to-cmd', 'cc-cmd', 'header-cmd', 'sendmail-cmd', 'httpd',
];

/** Judges what a subcommand's options run, write and read. */
function optionEffects(cmd: Cmd, name: string, opts: ParsedOpts): void {
  for (const key of RUNS) for (const word of opts.values.get(key) ?? []) cmd.runs(word, `git ${name} --${key}`);
  // rebase -x/--exec, difftool -x/--extcmd: run for each commit, each file pair.
  if (name === 'rebase' || name === 'difftool') for (const word of [...(opts.values.get('x') ?? []),
      ...(name === 'difftool' ? opts.values.get('extcmd') ?? [] : [])]) cmd.runs(word, `git ${name} -x`);
  if (name === 'send-email') for (const word of opts.values.get('smtp-server') ?? []) if (
      (literal(word) ?? '/').startsWith('/')) cmd.runs(word, 'git send-email --smtp-server');
  if (name === 'grep') for (const word of opts.values.get('open-files-in-pager') ?? []) cmd.runs(word, 'git grep -O');
  for (const word of opts.values.get('config') ?? []) {
    const pair = literal(word);
    const eq = pair?.indexOf('=') ?? -1;
    if (pair !== null && eq > 0) configPair(cmd, pair.slice(0, eq), pair.slice(eq + 1), false);
  }
  const writes = ['output', 'output-directory', 'index-output', 'export-marks', 'separate-git-dir', 'directory'];
  if (name === 'archive' || name === 'format-patch') writes.push('o');
  if (name === 'checkout-index') writes.push('prefix');
  for (const key of writes) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'write');
  const reads = ['F', 'file', 'reference', 'import-marks', 'ignore-revs-file', 'contents'];
  if (name === 'commit') reads.push('t');
  if (name === 'log' || name === 'show' || name === 'diff') reads.push('O');
  if (name === 'blame') reads.push('S');
  if (name === 'grep') reads.push('f');
  for (const key of reads) for (const word of opts.values.get(key) ?? []) cmd.path(word, 'read');
  for (const template of opts.values.get('template') ?? []) {
    if (name === 'commit') cmd.path(template, 'read');
    else cmd.add(['persistence'], `git ${name} --template copies hooks from ${template.raw} into the repository`);
  }
  for (const word of opts.operands) if (/^ext::/.test(literal(word) ?? '')) cmd.add(['opaque_code'], 'an ext:: URL makes git run a program');
}

function sub(cmd: Cmd, name: string, args: Word[]): void {
  const opts = parseOpts(args, (Object.hasOwn(SHORT_VALUED, name) ? SHORT_VALUED[name]! : 'b'), LONG_VALUED);
  const has = (...flags: string[]) => flags.some((flag) => opts.flags.has(flag));
  const operands = opts.operands.map((word) => literal(word));
  optionEffects(cmd, name, opts);

  if (name === 'config') {
    gitConfig(cmd, args);
    return;
  }
  if (name === 'push' || name === 'send-email' || (name === 'svn' && operands[0] === 'dcommit')) {
    cmd.add(['vcs_remote', 'networked'], `git ${name} sends commits to a remote`);
    if (has('force', 'f', 'force-with-lease', 'mirror', 'delete', 'd', 'prune') || operands.some(
        (v) => v !== null && (v.startsWith('+') || v.startsWith(':')))) {
      cmd.add(['destructive'], `git ${name} can overwrite or delete remote history`);
    }
    return;
  }
  if (name === 'submodule' && /^(status|summary)$/.test(operands[0] ?? '')) {
    cmd.add(['read_only'], `git submodule ${operands[0]} only reads`);
    return;
  }
  if (NETWORK.has(name) || (name === 'remote' && /^(update|show|prune)$/.test(operands[0] ?? '')) || (
      name === 'submodule' && /^(update|add|sync|foreach)$/.test(operands[0] ?? ''))) {
    cmd.add(['networked'], `git ${name}${operands[0] && name !== 'clone' ? ' ' + operands[0] : ''} talks to a remote`);
    if (name === 'clone') {
      cmd.add(['mutating'], 'git clone creates a checkout');
      const dest = opts.operands[1];
      if (dest) cmd.path(dest, 'write', 'clones into');
      const src = operands[0];
      if (src && (src.startsWith('/') || src.startsWith('~') || src.startsWith('file://') || src.startsWith('..'))) cmd.path(litWord(
          src.replace(/^file:\/\//, ''), false), 'read');
    }
    if (name === 'pull') cmd.add(['mutating'], 'git pull changes the working tree');
    if (name === 'submodule' && operands[0] === 'foreach') {
      const foreach = opts.operands.slice(1).map((word) => literal(word));
      if (foreach.every((text): text is string => text !== null)) cmd.script(foreach.join(' '), 'git submodule foreach');
      else cmd.add(['obfuscation'], 'git submodule foreach runs a computed command');
    }
    return;
  }
  if (name === 'maintenance' && operands[0] !== 'run') {
    // start/stop edit the user's crontab or systemd timers; register/unregister the global config.
    if (operands[0] === 'start' || operands[0] === 'stop') cmd.add(['persistence'], `git maintenance ${operands[0]} schedules git on the host`);
    else cmd.add(['host_escape'], `git maintenance ${operands[0] ?? ''} writes the user's global git configuration`.replace(/ {2}/, ' '));
    return;
  }
  if (name === 'archive') {
    // --remote=REPO reads another repository: a host path like any other, a URL over the network.
    const at = args.findIndex((word) => literal(word) === '--remote');
    for (const remote of [...(opts.values.get('remote') ?? []), ...(at >= 0 && args[at + 1] ? [args[at + 1]!] : [])]) {
      const text = literal(remote);
      if (text !== null && /^[a-z][a-z0-9+.-]*:\/\/|^[^/]*@|^[^/:]+:/i.test(text) && !text.startsWith('file://')) {
        cmd.add(['networked'], `git archive --remote ${text} talks to a remote`);
      } else cmd.path(text === null ? remote : litWord(text.replace(/^file:\/\//, ''), false), 'read');
    }
  }
  if (name === 'bisect' && operands[0] === 'run') {
    cmd.add(['mutating'], 'git bisect run checks out commits');
    const command = args.slice(args.findIndex((word) => literal(word) === 'run') + 1);
    if (command.length > 0) cmd.nested(command);
    return;
  }
  if (name === 'clean') {
    if (has('n', 'dry-run')) cmd.add(['read_only'], 'git clean -n only lists');
    else cmd.add(['destructive'], 'git clean deletes untracked files');
    return;
  }
  if (name === 'reset') {
    cmd.add(has('hard', 'merge', 'keep') ? ['destructive'] : ['mutating'], has('hard') ? 'git reset --hard discards changes' : 'git reset moves HEAD');
    return;
  }
  if (name === 'checkout' || name === 'restore') {
    const discards = name === 'restore' ? !(has('staged', 'S') && !has('worktree', 'W')) :
        args.some((word) => literal(word) === '--') || has('f', 'force') || operands.includes('.');
    cmd.add(discards ? ['destructive'] : ['mutating'], discards ? `git ${name} overwrites working-tree changes` : `git ${name} switches branches`);
    if (has('p', 'patch')) cmd.add(['interactive'], `git ${name} -p asks on the terminal`);
    return;
  }
  if (name === 'stash') {
    const action = operands[0];
    if (action === 'list' || action === 'show') cmd.add(['read_only'], `git stash ${action} only reads`);
    else if (action === 'drop' || action === 'clear') cmd.add(['destructive'], `git stash ${action} deletes stashed work`);
    else cmd.add(['mutating'], 'git stash changes the working tree');
    return;
  }
  if (name === 'branch' || name === 'tag') {
    const listing = opts.operands.length === 0 &&
        !has('d', 'D', 'delete', 'm', 'M', 'move', 'c', 'C', 'copy', 'f', 'force', 'u', 'set-upstream-to', 'unset-upstream', 'edit-description', 'a',
            's', 'annotate', 'sign');
    const listFlags = has('l', 'list', 'r', 'remotes', 'a', 'all', 'v', 'vv', 'show-current', 'contains', 'merged', 'no-merged', 'points-at', 'n');
    if (listing || (listFlags && opts.operands.length === 0 && !has('d', 'D', 'delete'))) cmd.add(['read_only'], `git ${name} lists`);
    else cmd.add(has('D') || (has('d', 'delete') && has('f', 'force')) ? ['destructive'] : ['mutating'], `git ${name} changes refs`);
    return;
  }
  if (name === 'remote') {
    if (!operands[0] || operands[0] === 'get-url' || operands[0] === '-v' || has('v', 'verbose')) cmd.add(['read_only'], 'git remote lists remotes');
    else cmd.add(['mutating'], `git remote ${operands[0]} changes the remotes`);
    return;
  }
  if (name === 'worktree') {
    if (operands[0] === 'list') cmd.add(['read_only'], 'git worktree list');
    else {
      cmd.add(['mutating'], `git worktree ${operands[0] ?? ''}`);
      if (operands[0] === 'add' && opts.operands[1]) cmd.path(opts.operands[1], 'write', 'adds a worktree at');
    }
    return;
  }
  if (name === 'init') {
    cmd.add(['mutating'], 'git init creates a repository');
    for (const dir of opts.operands) cmd.path(dir, 'write', 'creates a repository in');
    return;
  }
  if (name === 'apply' || name === 'am') {
    cmd.add(['mutating'], `git ${name} applies patches`);
    for (const patch of opts.operands) cmd.path(patch, 'read');
    if (has('unsafe-paths')) cmd.add(['unknown'], 'git apply --unsafe-paths lets a patch write outside the work tree');
    return;
  }
  if (name === 'bundle') {
    cmd.add(operands[0] === 'create' ? ['mutating'] : ['read_only'], `git bundle ${operands[0] ?? ''}`);
    if (opts.operands[1]) cmd.path(opts.operands[1], operands[0] === 'create' ? 'write' : 'read');
    return;
  }
  if (name === 'reflog' && (!operands[0] || operands[0] === 'show')) {
    cmd.add(['read_only'], 'git reflog lists');
    return;
  }
  if (name === 'hook') {
    cmd.add(['code_execution', 'mutating'], 'git hook run runs a repository hook');
    return;
  }
  if (name === 'daemon' || name === 'instaweb' || name === 'http-backend' || name === 'credential' || name === 'credential-store' ||
      name === 'credential-cache') {
    const credentials = name.startsWith('credential');
    cmd.add(credentials ? ['host_escape'] : ['networked'], `git ${name} ${credentials ? 'handles host credentials' : 'serves the repository'}`);
    return;
  }
  if (name === 'help' && has('w', 'web')) {
    cmd.add(['system'], 'git help --web opens a browser on the host');
    return;
  }
  if (READ_ONLY.has(name)) {
    cmd.add(['read_only'], `git ${name} only reads`);
    if ((name === 'diff' || name === 'log' || name === 'show') && has('ext-diff')) cmd.add(['code_execution'],
        `git ${name} --ext-diff runs an external diff program`);
    if (name === 'grep') grepPager(cmd, args);
    opts.operands.forEach((word) => {
      const text = literal(word);
      if (text !== null && (text.startsWith('/') || text.startsWith('~') ||
          (text.includes('..') && !/\.\.\.?/.test(text.replace(/\/\.\.(\/|$)/g, ''))))) cmd.maybePath(word, 'read');
    });
    cmd.outputsWorkspacePaths = name === 'ls-files' || (name === 'diff' && has('name-only'));
    return;
  }
  if (name === 'commit') {
    cmd.add(['mutating'], 'git commit records changes');
    const message = ['m', 'message', 'F', 'file', 'C', 'reuse-message'].some((key) => opts.values.has(key)) || has('no-edit', 'fixup');
    if (!message) cmd.add(['interactive'], 'git commit without -m opens an editor');
    return;
  }
  if ((name === 'rebase' && has('i', 'interactive')) || (name === 'add' && has('p', 'patch', 'i', 'interactive', 'e', 'edit'))) {
    cmd.add(['mutating', 'interactive'], `git ${name} -i asks on the terminal`);
    return;
  }
  if (name === 'rm') {
    cmd.add(['destructive'], 'git rm deletes files');
    return;
  }
  if (MUTATING.has(name)) {
    cmd.add(['mutating'], `git ${name} changes the repository`);
    if (name === 'difftool' || name === 'mergetool') cmd.add(['code_execution'], `git ${name} runs a diff or merge tool`);
    if (name === 'submodule' || name === 'lfs') cmd.add(['networked'], `git ${name} may fetch`);
    return;
  }
  // An alias from the user's gitconfig, or an external git-<name> program: its arguments are
  // judged as an unknown program's are (`-o FILE` writes FILE, a path is read).
  cmd.add(['mutating', 'code_execution'], `git ${name} is not a known git command (an alias or external program)`);
  const external = new Cmd(`git-${name}`, args, cmd.text, cmd.stdin, cmd.judge);
  external.argumentPaths();
  cmd.findings.push(...external.findings);
}

/** `git grep -O<pager>` / `--open-files-in-pager=<pager>` opens the matches in that program. */
function grepPager(cmd: Cmd, args: Word[]): void {
  for (const word of args) {
    const text = literal(word) ?? '';
    if (/^-[^-]*O./.test(text)) cmd.runs(dropPrefix(word, text.indexOf('O') + 1), 'git grep -O');
  }
}

const git: Handler = (cmd) => {
  let at = 0;
  for (; at < cmd.args.length; at++) {
    const value = cmd.vals[at];
    if (value === null || value === undefined || !value.startsWith('-')) break;
    const next = cmd.args[at + 1];
    if (value === '-C') {
      if (next) {
        const verdict = cmd.path(next, 'read', 'works in');
        if (verdict.cls !== 'inside') cmd.add(['host_escape'], `git -C points at ${next.raw}, outside the workspace`);
      }
      at++;
    } else if (value === '-c') {
      const pair = next ? literal(next) : null;
      if (pair === null) cmd.add(['obfuscation'], 'git -c with a computed setting');
      else {
        const eq = pair.indexOf('=');
        configPair(cmd, eq > 0 ? pair.slice(0, eq) : pair, eq > 0 ? pair.slice(eq + 1) : 'true', false);
      }
      at++;
    } else if (/^--(git-dir|work-tree|namespace|exec-path|super-prefix|config-env)=?/.test(value)) {
      const eq = value.indexOf('=');
      const word = eq > 0 ? dropPrefix(cmd.args[at]!, eq + 1) : next;
      if (eq < 0) at++;
      if (word && /^--(git-dir|work-tree)/.test(value)) {
        const verdict = cmd.path(word, 'read', 'uses');
        if (verdict.cls !== 'inside' && verdict.cls !== 'git_control') cmd.add(['host_escape'], `git ${value.split('=')[0]} points outside the workspace`);
      }
      if (word && /^--exec-path/.test(value) && eq > 0) cmd.add(['code_execution', 'unknown'], 'git --exec-path runs git programs from another place');
      if (/^--config-env/.test(value)) cmd.add(['unknown'], 'git --config-env reads a setting from the environment');
    }
  }
  const name = cmd.vals[at];
  if (name === undefined) {
    cmd.add(['read_only'], 'git with no command prints help');
    return;
  }
  if (name === null) {
    cmd.add(['obfuscation'], 'the git subcommand is computed');
    return;
  }
  sub(cmd, name, cmd.args.slice(at + 1));
};

export const GIT_TOOLS: Record<string, Handler> = { git };
