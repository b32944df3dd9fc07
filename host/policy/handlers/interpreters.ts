/**
 * Programs that run code: shells (their -c string is parsed and judged in turn), eval and source,
 * and language interpreters (inline code is scanned; scripts run with a checkpoint; code read
 * from a pipe of downloaded or decoded bytes is denied).
 */
import { posix } from 'node:path';
import type { Handler } from '../classify';
import { Cmd, parseOpts } from '../command';
import { literal, litWord, taints, type Word, wordValue } from '../words';
import { scanInlineCode } from './inlineCode';
import { PACKAGE_TOOLS } from './packages';

/** The text of a word that will be run as code, or null (and a finding) when it is computed. */
function codeText(cmd: Cmd, word: Word, what: string): string | null {
  const value = literal(word);
  if (value !== null) return value;
  if (taints(word).size > 0) cmd.add(['opaque_code'], `${what} runs downloaded or decoded text (${word.raw})`);
  else cmd.add(['obfuscation'], `${what} runs text computed at run time (${word.raw}), which could be anything`);
  return null;
}

/** Code read from standard input: parse it, scan it, or judge where it came from. */
function codeFromStdin(cmd: Cmd, what: string, onText: (text: string) => void): void {
  const input = cmd.stdin;
  if (input.kind === 'inherit') {
    cmd.add(['interactive'], `${what} with no script reads commands from the terminal`);
    return;
  }
  if (input.taint.length > 0) {
    cmd.add(['opaque_code'], `${what} runs ${input.taint.includes('remote') ? 'downloaded' : 'decoded'} bytes from ${input.from}`);
    return;
  }
  if (input.text !== null) onText(input.text);
  else cmd.add(['code_execution', 'unknown'], `${what} runs code produced by ${input.from}, which the policy cannot read`);
}

const JS_RUNTIMES = new Set(['node', 'nodejs']);

/** A script file about to run: where it lives, and whether this command line downloaded it. */
function scriptFile(cmd: Cmd, word: Word, what: string): void {
  cmd.add(['code_execution'], `${what} runs the script ${word.raw}`);
  for (const seg of word.segs) {
    if (seg.t !== 'val' || seg.v.kind !== 'procsub') continue;
    if (seg.v.taint.length > 0) cmd.add(['opaque_code'], `${what} runs the output of a download or decoder (${word.raw})`);
    // `bash <(echo 'rm -rf /')` is `echo 'rm -rf /' | bash`: the text is judged, or is unknown code.
    else if (seg.v.text !== null) runText(cmd, seg.v.text, `${what} of the output of ${seg.v.from}`);
    else cmd.add(['unknown'], `${what} runs code produced by ${seg.v.from}, which the policy cannot read`);
  }
  const verdict = cmd.path(word, 'exec');
  // avfs's own bundles (`node …/dist/avfs.js approve 1`) are avfs itself: see handlers/host.ts.
  if (verdict.cls !== 'inside' && /^avfs(-[\w-]+)?\.(c|m)?js$/.test(posix.basename(verdict.shown))) {
    cmd.add(['privilege'], `${what} runs avfs itself (${word.raw}), which controls the policy, approvals and rules from outside the run`);
  }
  if (cmd.judge.downloaded.has(verdict.shown)) cmd.add(['opaque_code'], `${what} runs ${word.raw}, which this command line downloaded`);
  const text = cmd.judge.written.get(verdict.shown);
  if (text !== undefined) runText(cmd, text, `${word.raw}, written earlier on this line`);
  if (verdict.cls === 'inside') cmd.add(['mutating'], `the script may change the workspace`);
}

/** Code a script-running command will run, known as text: shell text is walked, other languages scanned. */
function runText(cmd: Cmd, text: string, what: string): void {
  // `source`/`.` run the file in this very shell; `bash file` in a child.
  if (/^(source|\.)$/.test(cmd.prog)) cmd.script(text, what, undefined, cmd.inShell ? 'current' : 'subshell');
  else if (/^(sh|bash|zsh|dash|ksh|ash|mksh|yash|posh|oksh|loksh|bosh)$/.test(cmd.prog)) cmd.script(text, what);
  else scanInlineCode(cmd, text, what);
}

const SHELL_VALUE_OPTS = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file', '-C']);

const shell: Handler = (cmd) => {
  let at = 0;
  let command = false;
  let readStdin = false;
  for (; at < cmd.args.length; at++) {
    const value = cmd.vals[at];
    if (value === null || value === undefined) break;
    if (value === '--' || value === '-') {
      at++;
      break;
    }
    if (SHELL_VALUE_OPTS.has(value)) {
      if (value === '--rcfile' || value === '--init-file') scriptFile(cmd, cmd.args[at + 1] ?? litWord(''), `${cmd.prog} ${value}`);
      at++;
      continue;
    }
    if (/^--/.test(value)) {
      if (value === '--version' || value === '--help') {
        cmd.add(['read_only'], `${cmd.prog} ${value} only prints`);
        return;
      }
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(value)) {
      if (value.startsWith('-') && value.includes('c')) command = true;
      if (value.startsWith('-') && value.includes('s')) readStdin = true;
      if (value.startsWith('-') && value.includes('i')) cmd.add(['interactive'], `${cmd.prog} -i is an interactive shell`);
      continue;
    }
    break;
  }
  const rest = cmd.args.slice(at);
  const what = `${cmd.prog}${command ? ' -c' : ''}`;
  if (command) {
    const arg = rest[0];
    if (!arg) {
      cmd.add(['unknown'], `${cmd.prog} -c without a command`);
      return;
    }
    const text = codeText(cmd, arg, what);
    const positional = rest.slice(2).map(wordValue);
    // `sh -c 'text' NAME args…`: NAME is $0 (a script that runs "$0" runs NAME).
    const zero = rest[1] ? wordValue(rest[1]) : undefined;
    if (text !== null) {
      cmd.transparent = cmd.findings.length === 0;
      cmd.script(text, what, positional, 'subshell', zero);
    }
    return;
  }
  const script = rest[0];
  if (!script || readStdin || literal(script) === '/dev/stdin') {
    codeFromStdin(cmd, cmd.prog, (value) => cmd.script(value, `${cmd.prog} reading its input`));
    return;
  }
  scriptFile(cmd, script, cmd.prog);
  rest.slice(1).forEach((word) => cmd.maybePath(word, 'read'));
};

const source: Handler = (cmd) => {
  const word = cmd.args[0];
  if (!word) {
    cmd.add(['unknown'], `${cmd.prog} without a file`);
    return;
  }
  if (literal(word) === '/dev/stdin' || literal(word) === '-') {
    codeFromStdin(cmd, cmd.prog, (value) => cmd.script(value, `${cmd.prog} of its input`, undefined, cmd.inShell ? 'current' : 'subshell'));
    return;
  }
  scriptFile(cmd, word, cmd.prog);
};

const evalH: Handler = (cmd) => {
  if (cmd.args.length === 0) {
    cmd.add(['read_only'], 'eval with nothing to run');
    return;
  }
  const texts = cmd.args.map((word) => codeText(cmd, word, 'eval'));
  if (texts.every((value): value is string => value !== null)) {
    cmd.transparent = true;
    // eval runs in this very shell: its cd and variables carry on.
    cmd.script(texts.join(' '), 'eval', undefined, cmd.inShell ? 'current' : 'subshell');
  }
};

/**
 * compgen and complete: -C runs shell text, -F calls a function, and the -W word list is expanded
 * (its `$(…)` run). compgen does it now; complete when the user presses tab, in an interactive
 * shell, so at a time nobody knows.
 */
const completion: Handler = (cmd) => {
  cmd.add(['read_only'], `${cmd.prog} lists or sets completions`);
  const opts = parseOpts(cmd.args, 'oAGWFCXPS', []);
  const mode = cmd.prog === 'compgen' ? 'subshell' : 'later';
  const texts = [
    ...(opts.values.get('C') ?? []).map((word) => ({ word, text: codeText(cmd, word, `${cmd.prog} -C`) })),
    ...(opts.values.get('F') ?? []).map((word) => ({ word, text: codeText(cmd, word, `${cmd.prog} -F`) })),
    ...(opts.values.get('W') ?? []).map((word) => ({ word, text: ((text) => (text === null ? null : `: ${text}`))(codeText(cmd, word, `${cmd.prog} -W`)) })),
  ];
  for (const { word, text } of texts) if (text !== null) cmd.script(text, `${cmd.prog} ${word.raw}`, undefined, mode);
};

interface Lang {
  /** Options whose value is inline code. */
  code: string[];
  /** Options that take some other value (skipped). */
  valued: string[];
  /** Options that mean "just print something" (version, help). */
  info: string[];
  /** The option that runs a library module as the program (python -m). */
  module?: string;
  /** Options that edit files in place (perl -i, ruby -i). */
  inPlace?: boolean;
}

const LANGS: Record<string, Lang> = {
  python: { code: ['-c'], valued: ['-W', '-X', '-Q'], info: ['--version', '-V', '--help', '-h'], module: '-m' },
  pypy: { code: ['-c'], valued: ['-W', '-X'], info: ['--version', '-V', '--help', '-h'], module: '-m' },
  node: { code: ['-e', '--eval', '-p', '--print'], valued: [
    '-r', '--require', '--import', '--loader', '--experimental-loader', '--input-type', '--conditions', '-C', '--env-file', '--stack-size',
    '--max-old-space-size', '--title',
  ], info: ['--version', '-v', '--help', '-h'] },
  perl: { code: ['-e', '-E'], valued: ['-I', '-M', '-m', '-x'], info: ['-v', '--version', '-h', '--help', '-V'], inPlace: true },
  ruby: { code: ['-e'], valued: ['-I', '-r', '-C', '-E', '-F'], info: ['-v', '--version', '-h', '--help'], inPlace: true },
  php: { code: ['-r', '-R', '-B', '-E'], valued: ['-c', '-d', '-z', '-t'], info: ['-v', '--version', '-h', '--help', '-m', '-i'] },
  lua: { code: ['-e'], valued: ['-l'], info: ['-v'] },
  luajit: { code: ['-e'], valued: ['-l', '-j', '-O'], info: ['-v'] },
  Rscript: { code: ['-e', '--expr'], valued: [], info: ['--version', '--help'] },
  julia: { code: ['-e', '--eval', '-E', '--print'], valued: ['-p', '-t', '--project', '-J', '-L', '--load'], info: ['-v', '--version', '-h', '--help'] },
  tclsh: { code: [], valued: [], info: [] },
  pwsh: { code: [
    '-c', '-Command', '-command', '-EncodedCommand', '-e', '-enc',
  ], valued: ['-File', '-f', '-ExecutionPolicy', '-ep'], info: ['-v', '-Version', '--version'] },
  powershell: { code: ['-c', '-Command', '-command', '-EncodedCommand', '-e', '-enc'], valued: ['-File', '-ExecutionPolicy', '-ep'], info: ['-Version'] },
  osascript: { code: ['-e'], valued: ['-l', '-s'], info: [] },
  ghci: { code: ['-e'], valued: [], info: ['--version'] },
  runghc: { code: [], valued: [], info: ['--version'] },
  irb: { code: [], valued: ['-r', '-I'], info: ['-v', '--version'] },
  // Languages of the JVM, BEAM, Lisps and others: unknown, they were judged as a program with
  // arguments, and `groovy -e '"rm -rf /".execute()'` was allow_with_checkpoint.
  groovy: { code: ['-e'], valued: ['-cp', '-classpath', '--classpath', '-D'], info: ['-v', '--version', '-h', '--help'] },
  scala: { code: ['-e'], valued: ['-cp', '-classpath', '-J'], info: ['-version', '--version', '-help'] },
  kotlin: { code: ['-e', '-expression'], valued: ['-cp', '-classpath'], info: ['-version'] },
  jshell: { code: [], valued: ['--class-path', '--startup', '-R', '-J'], info: ['--version', '-version', '--help'] },
  erl: { code: ['-eval'], valued: ['-pa', '-pz', '-sname', '-name', '-setcookie', '-config', '-s', '-run'], info: ['-version'] },
  elixir: { code: ['-e', '--eval'], valued: ['-r', '--require', '-pa', '-pz', '--erl'], info: ['-v', '--version', '-h', '--help'] },
  iex: { code: ['-e', '--eval'], valued: ['-S', '-r', '--erl'], info: ['-v', '--version', '-h', '--help'] },
  guile: { code: ['-c'], valued: ['-L', '-l', '-e', '-x', '-C'], info: ['-v', '--version', '-h', '--help'] },
  racket: { code: ['-e', '--eval'], valued: ['-l', '--lib', '-t', '--require', '-f', '--load', '-r', '-S'], info: ['-v', '--version', '-h', '--help'] },
  sbcl: { code: ['--eval'], valued: ['--load', '--core', '--dynamic-space-size'], info: ['--version', '--help'] },
  clisp: { code: ['-x'], valued: ['-i', '-M', '-c'], info: ['--version', '--help'] },
  clojure: { code: ['-e', '--eval'], valued: ['-M', '-A', '-X', '-T', '-Sdeps', '-i', '--init'], info: ['--version', '-h', '--help'] },
  bb: { code: ['-e', '--eval'], valued: ['-cp', '--classpath', '-f', '--file', '-m', '--main'], info: ['--version', '-h', '--help'] },
  raku: { code: ['-e'], valued: ['-I', '-M'], info: ['-v', '--version', '-h', '--help'] },
  swipl: { code: ['-g', '--goal', '-t'], valued: ['-f', '-s', '-l', '-x'], info: ['--version', '--help'] },
  nu: { code: ['-c', '--commands'], valued: ['--config', '--env-config'], info: ['-v', '--version', '-h', '--help'] },
  xonsh: { code: ['-c'], valued: ['--rc'], info: ['-V', '--version', '-h', '--help'] },
};

/**
 * Library options (perl -M, ruby -r, node -r, lua -l …) whose value names a network library: the
 * program talks to the network whatever its code says.
 */
const LOAD_OPTIONS = new Set(['-M', '-m', '-r', '--require', '--import', '-l']);
const NETWORK_LIBRARY =
  /LWP|Net::|IO::Socket|HTTP|Socket|URI::Fetch|Mojo::UserAgent|^(node:)?(https?|net|dgram|tls|http2|undici)$|^net\/|^open-uri|^socket|^uri$|faraday|httparty|excon|typhoeus|^openssl$|^ssl|curl|requests|urllib|websocket/i;

function loadsNetworkLibrary(cmd: Cmd, option: string, value: string | null): void {
  if (value !== null && LOAD_OPTIONS.has(option) && NETWORK_LIBRARY.test(value)) {
    cmd.add(['networked'], `${cmd.prog} ${option} loads a network library (${value})`);
  }
}

/** PowerShell reads a bare word as a string: `Remove-Item -Recurse /` names `/` without quotes. */
function powershellPaths(cmd: Cmd, code: string): void {
  const writes = /\b(Remove-Item|Set-Content|Add-Content|Out-File|Copy-Item|Move-Item|New-Item|Rename-Item|Clear-Content|rm|del|ri|cp|mv|ni)\b/i.test(code);
  for (const found of code.matchAll(/(?:^|[\s=,(])((?:\/|~|\.\.\/|[A-Za-z]:\\|\$HOME|\$env:)[^\s;|)'"]*)/g)) {
    cmd.path(litWord(found[1]!.replace(/^\$HOME|^\$env:(USERPROFILE|HOME)/i, '~'), false), writes ? 'write' : 'read');
  }
}

/** python -m MODULE: some modules are package managers, servers or REPLs. */
function pythonModule(cmd: Cmd, mod: string, rest: Word[]): void {
  const root = mod.split('.')[0]!;
  if (root === 'pip' || root === 'ensurepip' || root === 'pipx' || root === 'uv') {
    const sub = new Cmd(root === 'ensurepip' ? 'pip' : root, root === 'ensurepip' ? [litWord('install'), ...rest] : rest, cmd.text, cmd.stdin, cmd.judge);
    PACKAGE_TOOLS[sub.prog]?.(sub);
    cmd.findings.push(...sub.findings);
    return;
  }
  if (/^(http|SimpleHTTPServer|smtpd|ftplib|xmlrpc|socketserver|aiosmtpd|wsgiref|smtplib|nntplib|imaplib|poplib|telnetlib|urllib)$/.test(root) ||
      (root === 'pydoc' && rest.some((word) => /^-[pb]/.test(literal(word) ?? '-p')))) {
    cmd.add(['networked'], `python -m ${mod} serves or uses the network`);
    return;
  }
  if (root === 'webbrowser' || root === 'antigravity') {
    cmd.add(['system'], `python -m ${root} opens the host's browser`);
    return;
  }
  if (root === 'timeit' || root === 'cProfile' || root === 'profile') {
    // timeit's statements and -s setup are inline code; -c/--command for the profilers too.
    const opts = parseOpts(rest, root === 'timeit' ? 'snru' : 'osm', ['setup', 'number', 'repeat', 'unit', 'outfile', 'sort']);
    for (const out of [...(opts.values.get('o') ?? []), ...(opts.values.get('outfile') ?? [])]) cmd.path(out, 'write');
    const code = root === 'timeit' ? [...(opts.values.get('s') ?? []), ...(opts.values.get('setup') ?? []), ...opts.operands] : [];
    for (const word of code) {
      const text = literal(word);
      if (text === null) cmd.add(['unknown'], `python -m timeit runs computed code (${word.raw})`);
      else scanInlineCode(cmd, text, 'python -m timeit');
    }
    if (root !== 'timeit') opts.operands.slice(0, 1).forEach((word) => cmd.path(word, 'exec'));
    cmd.add(['code_execution', 'mutating'], `python -m ${root} runs code`);
    return;
  }
  if (root === 'compileall' || root === 'py_compile') {
    // Both write __pycache__ (or .pyc files) next to the sources they are given.
    cmd.add(['mutating'], `python -m ${root} writes compiled files`);
    rest.filter((word) => !(literal(word) ?? '').startsWith('-')).forEach((word) => cmd.path(word, 'write', 'compiles into'));
    return;
  }
  if (root === 'venv' || root === 'virtualenv') {
    cmd.add(['mutating'], `python -m ${root} creates an environment`);
    rest.filter((word) => !(literal(word) ?? '').startsWith('-')).forEach((word) => cmd.path(word, 'write', 'creates'));
    return;
  }
  if (root === 'json' || root === 'tokenize' || root === 'pydoc' || root === 'site' || root === 'sysconfig' || root === 'platform' || root === 'this') {
    cmd.add(['read_only'], `python -m ${mod} only prints`);
    rest.forEach((word) => cmd.maybePath(word, 'read'));
    return;
  }
  if (/^(pdb|code|asyncio|idlelib|turtledemo|tkinter|sqlite3)$/.test(root) && !(root === 'sqlite3' && rest.length > 1)) {
    cmd.add(['interactive'], `python -m ${root} is interactive`);
  }
  cmd.add(['code_execution', 'mutating'], `python -m ${mod} runs a module`);
  rest.forEach((word) => cmd.maybePath(word, 'read'));
}

function interpreter(lang: Lang): Handler {
  return (cmd) => {
    const what = (flag: string) => `${cmd.prog} ${flag}`;
    let sawCode = false;
    let index = 0;
    for (; index < cmd.args.length; index++) {
      const value = cmd.vals[index];
      if (value === null || value === undefined) break;
      if (value === '--') {
        index++;
        break;
      }
      if (!value.startsWith('-') || value === '-') break;
      if (lang.info.includes(value) && cmd.args.length === 1) {
        cmd.add(['read_only'], `${cmd.prog} ${value} only prints`);
        return;
      }
      const eq = value.indexOf('=');
      const flag = eq > 0 ? value.slice(0, eq) : value;
      if (lang.code.includes(flag)) {
        const arg = eq > 0 ? litWord(value.slice(eq + 1)) : cmd.args[++index];
        if (!arg) break;
        sawCode = true;
        const text = codeText(cmd, arg, what(flag));
        if (text !== null) {
          if (/Encoded/i.test(flag) || flag === '-enc' || (flag === '-e' && lang === LANGS.pwsh)) cmd.add(['opaque_code'], `${what(flag)} runs encoded code`);
          else {
            scanInlineCode(cmd, text, what(flag));
            if (lang === LANGS.pwsh || lang === LANGS.powershell) powershellPaths(cmd, text);
          }
        }
        continue;
      }
      if (lang.module && (flag === lang.module || value.startsWith(lang.module))) {
        const mod = value.length > 2 ? value.slice(2) : (cmd.vals[++index] ?? null);
        if (mod === null) cmd.add(['unknown'], `${cmd.prog} -m with an unknown module`);
        else pythonModule(cmd, mod, cmd.args.slice(index + 1));
        return;
      }
      if (lang.valued.includes(flag) && eq < 0) {
        // A module, an include directory, an env file: read wherever they are.
        const optionValue = cmd.args[++index];
        if (optionValue) cmd.maybePath(optionValue, 'read');
        loadsNetworkLibrary(cmd, flag, cmd.vals[index] ?? null);
        continue;
      }
      // `--env-file=~/.aws/credentials`, `-I/usr/lib`: an attached value that names a file is read.
      cmd.maybePath(cmd.args[index]!, 'read');
      // A valued option with its value attached: perl -MLWP::Simple, -I/usr/lib.
      const attachedTo = lang.valued.find((option) => option.length === 2 && value.startsWith(option) && value.length > 2);
      if (attachedTo) {
        loadsNetworkLibrary(cmd, attachedTo, value.slice(2));
        continue;
      }
      if (eq > 0) loadsNetworkLibrary(cmd, flag, value.slice(eq + 1));
      // Combined short flags: perl -pie 'code', -ne, ruby -pe; perl -i.bak edits in place.
      if (/^-[A-Za-z]+/.test(value) && !value.startsWith('--')) {
        if (lang.inPlace && /^-[a-zA-Z]*i/.test(value)) cmd.add(['mutating'], `${cmd.prog} -i edits files in place`);
        const letters = value.slice(1);
        const codeFlag = lang.code.find((option) => option.length === 2 && letters.includes(option[1]!));
        if (codeFlag && lang.code.length > 0) {
          const at = letters.indexOf(codeFlag[1]!);
          const attached = letters.slice(at + 1);
          const file = attached && !/^[a-zA-Z]*$/.test(attached) ? litWord(attached) : cmd.args[++index];
          if (file) {
            sawCode = true;
            const text = codeText(cmd, file, what(codeFlag));
            if (text !== null) scanInlineCode(cmd, text, what(codeFlag));
          }
          continue;
        }
        if (cmd.prog === 'php' && letters.startsWith('S')) cmd.add(['networked'], 'php -S starts a web server');
        if (letters.includes('i') && !lang.inPlace && cmd.prog !== 'php') cmd.add(['interactive'], `${cmd.prog} -i starts a REPL`);
      }
    }
    const rest = cmd.args.slice(index);
    if (sawCode) {
      const inPlace = cmd.has('mutating');
      rest.forEach((word) => (inPlace ? cmd.path(word, 'write', 'edits') : cmd.maybePath(word, 'read')));
      return;
    }
    const script = rest[0];
    // `node --test [files…]`: the test runner, over the project's test files (no REPL).
    if (JS_RUNTIMES.has(cmd.prog) && cmd.vals.some((value) => value === '--test' || value?.startsWith('--test-') === true)) {
      cmd.add(['code_execution', 'mutating'], `${cmd.prog} --test runs the project's tests`);
      rest.forEach((word) => cmd.maybePath(word, 'read'));
      return;
    }
    if (!script || literal(script) === '-' || literal(script) === '/dev/stdin') {
      codeFromStdin(cmd, cmd.prog, (value) => scanInlineCode(cmd, value, `${cmd.prog} reading its input`));
      return;
    }
    const sv = literal(script);
    if (sv !== null && /^https?:\/\//.test(sv)) {
      cmd.add(['opaque_code', 'networked'], `${cmd.prog} runs code straight from ${sv}`);
      return;
    }
    if (cmd.prog === 'osascript') cmd.add(['host_escape'], 'osascript drives applications on the host');
    scriptFile(cmd, script, cmd.prog);
    rest.slice(1).forEach((word) => cmd.maybePath(word, 'read'));
  };
}

const deno: Handler = (cmd) => {
  const sub = cmd.vals[0];
  const opts = parseOpts(cmd.args.slice(1));
  const perms = [...opts.flags, ...opts.values.keys()];
  if (perms.some((name) => /^(A|allow-all|allow-net|allow-run|allow-ffi|allow-sys)$/.test(name))) cmd.add(['networked'],
      'deno is given network or process permissions');
  if (perms.includes('allow-write') || perms.includes('A') || perms.includes('allow-all')) cmd.add(['mutating'], 'deno may write files');
  switch (sub) {
    case 'eval': {
      const word = opts.operands[0];
      const text = word ? codeText(cmd, word, 'deno eval') : null;
      if (text !== null) scanInlineCode(cmd, text, 'deno eval');
      return;
    }
    case 'run':
    case undefined: {
      const arg = opts.operands[0];
      if (!arg) {
        cmd.add(['interactive'], 'deno with no script is a REPL');
        return;
      }
      const value = literal(arg);
      if (value && /^(https?|npm|jsr):/.test(value)) cmd.add(['opaque_code', 'networked'], `deno runs code straight from ${value}`);
      else scriptFile(cmd, arg, 'deno');
      return;
    }
    case 'install':
    case 'add':
    case 'cache':
      cmd.add(['package_install', 'networked'], `deno ${sub} downloads packages`);
      return;
    case 'fmt':
    case 'lint':
    case 'check':
    case 'doc':
    case 'info':
      cmd.add(opts.flags.has('fix') || (sub === 'fmt' && !opts.flags.has('check')) ? ['mutating'] : ['read_only'], `deno ${sub}`);
      return;
    default:
      cmd.add(['code_execution', 'mutating'], `deno ${sub} runs project code`);
  }
};

export const INTERPRETERS: Record<string, Handler> = {
  sh: shell,
  bash: shell,
  zsh: shell,
  dash: shell,
  ksh: shell,
  mksh: shell,
  ash: shell,
  fish: shell,
  yash: shell,
  posh: shell,
  oksh: shell,
  loksh: shell,
  bosh: shell,
  csh: shell,
  tcsh: shell,
  rbash: shell,
  source,
  '.': source,
  eval: evalH,
  compgen: completion,
  complete: completion,
  deno,
  expect: interpreter({ code: ['-c'], valued: ['-f', '-D'], info: ['-v', '--version'] }),
  ...Object.fromEntries(Object.entries(LANGS).map(([key, language]) => [key, interpreter(language)])),
  python2: interpreter(LANGS.python!),
  python3: interpreter(LANGS.python!),
  nodejs: interpreter(LANGS.node!),
  R: interpreter(LANGS.Rscript!),
  ts_node: interpreter(LANGS.node!),
  'ts-node': interpreter(LANGS.node!),
  tsx: interpreter(LANGS.node!),
};
