/**
 * Environment assignments that change what runs, in any form (`NAME=v cmd`, `export`, `declare`,
 * `env NAME=v`, `for NAME in …`, `read NAME`): variables holding a command (GIT_SSH_COMMAND,
 * PAGER, EDITOR …), which are judged as that command; variables that hijack what every later
 * program loads or runs (PATH put first, LD_PRELOAD, BASH_ENV, PYTHONPATH …), which need a person
 * because what runs is no longer what the command line says; git's config-by-environment; and
 * where programs look for their configuration (HOME, XDG_CONFIG_HOME).
 */
import type { Cmd } from './command';
import { judgePath as judgePathWord, programDirectory } from './paths';
import { literal, litWord, splitWord, type Word } from './words';

/** Variables whose value is a command line some program runs. */
const COMMAND_VARS = new Set([
  'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'PAGER', 'MANPAGER', 'EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR',
  'GIT_ASKPASS', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'BROWSER', 'LESSOPEN', 'LESSCLOSE', 'FCEDIT', 'RSYNC_RSH', 'CVS_RSH', 'GIT_PROXY_COMMAND',
  'SYSTEMD_PAGER', 'PSQL_PAGER', 'GH_PAGER', 'GH_EDITOR', 'KUBE_EDITOR', 'npm_config_script_shell', 'NPM_CONFIG_SCRIPT_SHELL', 'SHELL',
  'CC', 'CXX', 'CPP', 'LD', 'AR', 'AS', 'FC', 'RANLIB', 'STRIP', 'NM', 'MAKE', 'RUSTC', 'RUSTC_WRAPPER', 'RUSTC_WORKSPACE_WRAPPER',
  'CARGO_BUILD_RUSTC_WRAPPER', 'CARGO_TARGET_DIR_RUNNER', 'TERMINAL', 'DIFFTOOL', 'MERGETOOL', 'SUDO_EDITOR', 'SVN_EDITOR', 'HGEDITOR',
]);

/** Variables that make programs load code or startup files from elsewhere. */
const HIJACK_VARS =
  new RegExp(
    [
      String.raw`^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|LD_DEBUG_OUTPUT|DYLD_\w+|GLIBC_TUNABLES|BASH_ENV|ENV|ZDOTDIR`,
      String.raw`|PROMPT_COMMAND|PS0|PS1|PS4|BASH_LOADABLES_PATH|NODE_PATH|NODE_REPL_EXTERNAL_MODULE|PYTHONSTARTUP|PYTHONPATH`,
      String.raw`|PYTHONHOME|PYTHONUSERBASE|PYTHONBREAKPOINT|PYTHONINSPECT|PERL5OPT|PERL5LIB|PERLLIB|PERL5DB|RUBYOPT|RUBYLIB`,
      String.raw`|BUNDLE_GEMFILE|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|CLASSPATH|GCONV_PATH|LOCPATH|NLSPATH`,
      String.raw`|HOSTALIASES|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|SHELLOPTS|BASHOPTS|MAKEFLAGS|MFLAGS|GNUMAKEFLAGS|LUA_PATH`,
      String.raw`|LUA_CPATH|TCLLIBPATH|npm_config_\w+|NPM_CONFIG_\w+)$`,
    ].join(''),
  );

/** Variables of options, and the options in them that run a program (its command line in group 1). */
const OPTION_VARS: Record<string, RegExp> = {
  TAR_OPTIONS: /--(?:to-command|use-compress-program|rsh-command|info-script|new-volume-script|checkpoint-action=exec)[= ](\S+)|(?:^|\s)-I\s*(\S+)|(?:^|\s)-F\s*(\S+)/g,
  GOFLAGS: /-(?:toolexec|exec|overlay|modfile)[= ](\S+)/g,
  CARGO_BUILD_RUSTFLAGS: /-C\s*linker=(\S+)/g,
  RUSTFLAGS: /-C\s*linker=(\S+)/g,
  ZIPOPT: /-TT[= ]?(\S+)/g,
  RSYNC_OPTIONS: /(?:-e|--rsh)[= ](\S+)/g,
};

/** Library paths: where an interpreter loads modules from. */
const LIBRARY_PATH_VARS = new Set(['PYTHONPATH', 'NODE_PATH', 'PERL5LIB', 'PERLLIB', 'RUBYLIB', 'LUA_PATH', 'CLASSPATH']);

/** Where programs read their configuration (and so their pagers, editors, hooks, aliases) from. */
const CONFIG_HOME_VARS = new Set(['HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'GNUPGHOME', 'npm_config_userconfig', 'CARGO_HOME', 'RUSTUP_HOME', 'GEM_HOME']);

const GIT_CONFIG_VARS = /^(GIT_CONFIG_PARAMETERS|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM)$/;

/**
 * NODE_OPTIONS flags that load no code and open nothing: memory sizes, warnings, source maps.
 * Anything else (--require, --import, --loader, --inspect …) makes every node program run more.
 */
const HARMLESS_NODE_OPTION = new RegExp(
  [
    String.raw`^--(max-old-space-size|max-semi-space-size|stack-size|stack-trace-limit|enable-source-maps|no-warnings`,
    String.raw`|no-deprecation|trace-warnings|trace-deprecation|trace-uncaught|unhandled-rejections|experimental-vm-modules`,
    String.raw`|experimental-specifier-resolution|dns-result-order|use-openssl-ca|use-bundled-ca|preserve-symlinks`,
    String.raw`|preserve-symlinks-main|max-http-header-size|openssl-legacy-provider|no-experimental-fetch|experimental-fetch`,
    String.raw`|experimental-global-webcrypto|title|disable-proto|force-fips|zero-fill-buffers|abort-on-uncaught-exception`,
    String.raw`|trace-exit|trace-sigint|experimental-json-modules|no-addons|pending-deprecation|throw-deprecation`,
    String.raw`|frozen-intrinsics)(=\S*)?$`,
  ].join(''),
);

/** MAKEFLAGS that only tune make (jobs, silence, keep going), not what recipes run. */
const HARMLESS_MAKEFLAGS = new RegExp(
  [
    String.raw`^(\s*(-?j\s*\d*|--jobs(=\d+)?|-?k|--keep-going|-?s|--silent|--quiet|--no-print-directory|-?w|--print-directory`,
    String.raw`|-O\w*|--output-sync(=\w+)?|-l\s*[\d.]+|--load-average(=[\d.]+)?|-?i|--ignore-errors|-?r`,
    String.raw`|--no-builtin-rules)\s*)*$`,
  ].join(''),
);

function pathPieces(value: string): string[] {
  return value.split(/[:\s]+/).filter((piece) => piece !== '' && !piece.startsWith('-'));
}

/** Judges `NAME=value` set for a command (or for the rest of the line when standalone). */
export function judgeAssignment(cmd: Cmd, name: string, value: Word): void {
  const text = literal(value);
  if (COMMAND_VARS.has(name)) {
    if (text === null) cmd.codeText(value, `${name}=`);
    else if (text.trim() !== '') cmd.script(text, `${name}=`);
    return;
  }
  if (name === 'NODE_OPTIONS' && text !== null && text.split(/\s+/).filter(Boolean).every((flag) => HARMLESS_NODE_OPTION.test(flag))) return;
  if (/^(MAKEFLAGS|MFLAGS|GNUMAKEFLAGS)$/.test(name) && text !== null && HARMLESS_MAKEFLAGS.test(text)) return;
  // An exported function (`BASH_FUNC_ls%%=() { …; }`): every bash started below runs it for that name.
  const fn = /^BASH_FUNC_(.+?)(%%|\(\))?$/.exec(name);
  if (fn) {
    cmd.add(['code_execution', 'unknown'], `${name} defines the function ${fn[1]} for every bash started below, so ${fn[1]} no longer runs what its name says`);
    if (text === null) cmd.codeText(value, `${name}=`);
    else cmd.script(text.replace(/^\s*\(\s*\)\s*/, ''), `the function ${fn[1]} exported in ${name}`);
    return;
  }
  // Option variables whose options run programs: tar's --to-command, go's -toolexec/-exec.
  const runs = OPTION_VARS[name];
  if (runs) {
    if (text === null) {
      cmd.add(['code_execution', 'unknown'], `${name} sets options the policy cannot know`);
      return;
    }
    for (const found of text.matchAll(runs)) {
      cmd.add(['code_execution', 'unknown'], `${name} holds an option that runs a program (${found[0]})`);
      const program = (found[1] ?? found[2] ?? found[3] ?? '').replace(/^['"]|['"]$/g, '');
      if (program.trim() !== '') cmd.script(program, `${name} ${found[0].split(/[= ]/)[0]}`);
    }
    return;
  }
  // A library path of workspace directories (`PYTHONPATH=src`) loads the project's own code.
  if (LIBRARY_PATH_VARS.has(name) && text !== null && pathPieces(text).length > 0 &&
      pathPieces(text).every((piece) => judgePathWord(litWord(piece, false), cmd.judge.paths()).cls === 'inside')) {
    cmd.add(['code_execution'], `${name} adds workspace directories to where code is loaded from`);
    return;
  }
  if (name === 'NODE_OPTIONS' || HIJACK_VARS.test(name)) {
    cmd.add(['code_execution', 'unknown'], `${name} changes what code programs load or run, so what runs is not what the command line says`);
    if (text === null) cmd.maybePath(value, 'read');
    else {
      for (const piece of pathPieces(text)) cmd.maybePath(litWord(piece, false), 'read');
      for (const found of text.matchAll(/--(?:require|import|loader|experimental-loader)[= ](\S+)/g)) cmd.maybePath(litWord(found[1]!, false), 'read');
    }
    return;
  }
  if (name === 'PATH') {
    judgePath(cmd, value);
    return;
  }
  if (name === 'CDPATH') {
    // Followed by cd itself (handlers/directories.ts); only an outside entry is worth saying here.
    if (text !== null) for (const piece of text.split(':')) if (piece) cmd.maybePath(litWord(piece, false), 'read');
    return;
  }
  if (GIT_CONFIG_VARS.test(name)) {
    if (text === null) cmd.add(['unknown'], `${name} sets git configuration the policy cannot know`);
    else if (/hookspath/i.test(text)) cmd.add(['persistence'], `${name} points git's hooks somewhere else`);
    else if (new RegExp(
      [
        String.raw`fsmonitor|sshcommand|pager|editor|askpass|external|textconv|filter\.|credential|alias\.|uploadpack|receivepack`,
        String.raw`|gitproxy|include|\.cmd|\.tool|program`,
      ].join(''),
      'i',
    ).test(text)) {
      cmd.add(['code_execution', 'unknown'], `${name} sets a git option that runs programs`);
    }
    if (text !== null && /^(GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM)$/.test(name)) {
      cmd.path(value, 'read');
      cmd.add(['code_execution', 'unknown'], `${name} makes git read its configuration (pagers, hooks, aliases) from ${text}`);
    }
    return;
  }
  if (name === 'GIT_DIR' || name === 'GIT_WORK_TREE' || name === 'GIT_INDEX_FILE' || name === 'GIT_OBJECT_DIRECTORY' || name === 'GIT_COMMON_DIR') {
    cmd.maybePath(value, 'write');
    return;
  }
  if (/^GIT_TRACE\w*$/.test(name)) {
    if (text === null || text.startsWith('/') || text.startsWith('~') || text.includes('..')) cmd.maybePath(value, 'write');
    return;
  }
  if (CONFIG_HOME_VARS.has(name)) {
    cmd.maybePath(value, 'write');
    cmd.add(['unknown'], `${name} is changed, so programs (git, npm, ssh …) read their configuration, with its pagers, hooks and aliases, from there`);
    return;
  }
  if (name === 'TMPDIR' || name === 'XDG_CACHE_HOME' || name === 'XDG_RUNTIME_DIR') cmd.maybePath(value, 'write');
}

/**
 * PATH: appending a directory (`PATH=$PATH:./bin`) only adds programs, so running one is code
 * execution; putting one first or replacing PATH makes every program name resolve there, so the
 * command line no longer says what runs. Each directory is judged as a place programs run from.
 */
function judgePath(cmd: Cmd, value: Word): void {
  const pieces = splitWord(value, ':');
  const isOldPath = (piece: Word) => piece.segs.length === 1 && piece.segs[0]!.t === 'val' && piece.segs[0]!.v.kind === 'unknown' &&
      piece.segs[0]!.v.what === '$PATH';
  if (pieces[0] && isOldPath(pieces[0])) cmd.add(['code_execution'], 'PATH gets another directory at its end, so more programs can run');
  else cmd.add(['code_execution', 'unknown'], 'PATH is replaced or gets a directory first, so program names may resolve anywhere');
  for (const piece of pieces) {
    if (isOldPath(piece) || piece.segs.length === 0) continue;
    const finding = programDirectory(judgePathWord(piece, cmd.judge.paths()));
    if (finding) cmd.add(finding.categories, `PATH ${finding.why}`);
  }
}
