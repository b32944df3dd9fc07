/**
 * Programs that run code: shells (their -c string is parsed and judged in turn), eval and source,
 * and language interpreters (inline code is scanned; scripts run with a checkpoint; code read
 * from a pipe of downloaded or decoded bytes is denied).
 */
import type { Handler } from '../classify';
import { Cmd, parseOpts } from '../command';
import { literal, litWord, taints, type Value, type Word } from '../words';
import { scanInlineCode } from './inlineCode';
import { PACKAGE_TOOLS } from './packages';

/** The text of a word that will be run as code, or null (and a finding) when it is computed. */
function codeText(c: Cmd, w: Word, what: string): string | null {
  const v = literal(w);
  if (v !== null) return v;
  if (taints(w).size > 0) c.add(['opaque_code'], `${what} runs downloaded or decoded text (${w.raw})`);
  else c.add(['obfuscation'], `${what} runs text computed at run time (${w.raw}), which could be anything`);
  return null;
}

/** Code read from standard input: parse it, scan it, or judge where it came from. */
function codeFromStdin(c: Cmd, what: string, onText: (text: string) => void): void {
  const s = c.stdin;
  if (s.kind === 'inherit') {
    c.add(['interactive'], `${what} with no script reads commands from the terminal`);
    return;
  }
  if (s.taint.length > 0) {
    c.add(['opaque_code'], `${what} runs ${s.taint.includes('remote') ? 'downloaded' : 'decoded'} bytes from ${s.from}`);
    return;
  }
  if (s.text !== null) onText(s.text);
  else c.add(['code_execution', 'unknown'], `${what} runs code produced by ${s.from}, which the policy cannot read`);
}

/** A script file about to run: where it lives, and whether this command line downloaded it. */
function scriptFile(c: Cmd, w: Word, what: string): void {
  c.add(['code_execution'], `${what} runs the script ${w.raw}`);
  for (const s of w.segs) {
    if (s.t === 'val' && s.v.kind === 'procsub' && s.v.taint.length > 0) c.add(['opaque_code'], `${what} runs the output of a download or decoder (${w.raw})`);
  }
  const v = c.path(w, 'exec');
  if (c.judge.downloaded.has(v.shown)) c.add(['opaque_code'], `${what} runs ${w.raw}, which this command line downloaded`);
  const text = c.judge.written.get(v.shown);
  if (text !== undefined) {
    // `source`/`.` run the file in this very shell; `bash file` in a child.
    if (/^(source|\.)$/.test(c.prog)) c.script(text, `${w.raw}, written earlier on this line`, undefined, c.inShell ? 'current' : 'subshell');
    else if (/^(sh|bash|zsh|dash|ksh)$/.test(c.prog)) c.script(text, `${w.raw}, written earlier on this line`);
    else scanInlineCode(c, text, `${w.raw}, written earlier on this line`);
  }
  if (v.cls === 'inside') c.add(['mutating'], `the script may change the workspace`);
}

const SHELL_VALUE_OPTS = new Set(['-o', '+o', '-O', '+O', '--rcfile', '--init-file', '-C']);

const shell: Handler = (c) => {
  let i = 0;
  let command = false;
  let readStdin = false;
  for (; i < c.args.length; i++) {
    const v = c.vals[i];
    if (v === null || v === undefined) break;
    if (v === '--' || v === '-') {
      i++;
      break;
    }
    if (SHELL_VALUE_OPTS.has(v)) {
      if (v === '--rcfile' || v === '--init-file') scriptFile(c, c.args[i + 1] ?? litWord(''), `${c.prog} ${v}`);
      i++;
      continue;
    }
    if (/^--/.test(v)) {
      if (v === '--version' || v === '--help') {
        c.add(['read_only'], `${c.prog} ${v} only prints`);
        return;
      }
      continue;
    }
    if (/^[-+][A-Za-z]+$/.test(v)) {
      if (v.startsWith('-') && v.includes('c')) command = true;
      if (v.startsWith('-') && v.includes('s')) readStdin = true;
      if (v.startsWith('-') && v.includes('i')) c.add(['interactive'], `${c.prog} -i is an interactive shell`);
      continue;
    }
    break;
  }
  const rest = c.args.slice(i);
  const what = `${c.prog}${command ? ' -c' : ''}`;
  if (command) {
    const w = rest[0];
    if (!w) {
      c.add(['unknown'], `${c.prog} -c without a command`);
      return;
    }
    const text = codeText(c, w, what);
    const positional: (string | Value)[] = rest.slice(2).map((a) => literal(a) ?? { kind: 'unknown', taint: [...taints(a)], what: a.raw });
    if (text !== null) {
      c.transparent = c.findings.length === 0;
      c.script(text, what, positional);
    }
    return;
  }
  const script = rest[0];
  if (!script || readStdin || literal(script) === '/dev/stdin') {
    codeFromStdin(c, c.prog, (t) => c.script(t, `${c.prog} reading its input`));
    return;
  }
  scriptFile(c, script, c.prog);
  rest.slice(1).forEach((w) => c.maybePath(w, 'read'));
};

const source: Handler = (c) => {
  const w = c.args[0];
  if (!w) {
    c.add(['unknown'], `${c.prog} without a file`);
    return;
  }
  if (literal(w) === '/dev/stdin' || literal(w) === '-') {
    codeFromStdin(c, c.prog, (t) => c.script(t, `${c.prog} of its input`, undefined, c.inShell ? 'current' : 'subshell'));
    return;
  }
  scriptFile(c, w, c.prog);
};

const evalH: Handler = (c) => {
  if (c.args.length === 0) {
    c.add(['read_only'], 'eval with nothing to run');
    return;
  }
  const texts = c.args.map((w) => codeText(c, w, 'eval'));
  if (texts.every((t): t is string => t !== null)) {
    c.transparent = true;
    // eval runs in this very shell: its cd and variables carry on.
    c.script(texts.join(' '), 'eval', undefined, c.inShell ? 'current' : 'subshell');
  }
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
  node: { code: ['-e', '--eval', '-p', '--print'], valued: ['-r', '--require', '--import', '--loader', '--experimental-loader', '--input-type', '--conditions', '-C', '--env-file', '--stack-size', '--max-old-space-size', '--title'], info: ['--version', '-v', '--help', '-h'] },
  perl: { code: ['-e', '-E'], valued: ['-I', '-M', '-m', '-x'], info: ['-v', '--version', '-h', '--help', '-V'], inPlace: true },
  ruby: { code: ['-e'], valued: ['-I', '-r', '-C', '-E', '-F'], info: ['-v', '--version', '-h', '--help'], inPlace: true },
  php: { code: ['-r', '-R', '-B', '-E'], valued: ['-c', '-d', '-z', '-t'], info: ['-v', '--version', '-h', '--help', '-m', '-i'] },
  lua: { code: ['-e'], valued: ['-l'], info: ['-v'] },
  luajit: { code: ['-e'], valued: ['-l', '-j', '-O'], info: ['-v'] },
  Rscript: { code: ['-e', '--expr'], valued: [], info: ['--version', '--help'] },
  julia: { code: ['-e', '--eval', '-E', '--print'], valued: ['-p', '-t', '--project', '-J', '-L', '--load'], info: ['-v', '--version', '-h', '--help'] },
  tclsh: { code: [], valued: [], info: [] },
  pwsh: { code: ['-c', '-Command', '-command', '-EncodedCommand', '-e', '-enc'], valued: ['-File', '-f', '-ExecutionPolicy', '-ep'], info: ['-v', '-Version', '--version'] },
  powershell: { code: ['-c', '-Command', '-command', '-EncodedCommand', '-e', '-enc'], valued: ['-File', '-ExecutionPolicy', '-ep'], info: ['-Version'] },
  osascript: { code: ['-e'], valued: ['-l', '-s'], info: [] },
  ghci: { code: ['-e'], valued: [], info: ['--version'] },
  runghc: { code: [], valued: [], info: ['--version'] },
  irb: { code: [], valued: ['-r', '-I'], info: ['-v', '--version'] },
};

/** python -m MODULE: some modules are package managers, servers or REPLs. */
function pythonModule(c: Cmd, mod: string, rest: Word[]): void {
  const m = mod.split('.')[0]!;
  if (m === 'pip' || m === 'ensurepip' || m === 'pipx' || m === 'uv') {
    const sub = new Cmd(m === 'ensurepip' ? 'pip' : m, m === 'ensurepip' ? [litWord('install'), ...rest] : rest, c.text, c.stdin, c.judge);
    PACKAGE_TOOLS[sub.prog]?.(sub);
    c.findings.push(...sub.findings);
    return;
  }
  if (/^(http|SimpleHTTPServer|smtpd|ftplib|xmlrpc|socketserver|aiosmtpd|wsgiref)$/.test(m)) {
    c.add(['networked'], `python -m ${mod} serves or uses the network`);
    return;
  }
  if (m === 'venv' || m === 'virtualenv') {
    c.add(['mutating'], `python -m ${m} creates an environment`);
    rest.filter((w) => !(literal(w) ?? '').startsWith('-')).forEach((w) => c.path(w, 'write', 'creates'));
    return;
  }
  if (m === 'json' || m === 'tokenize' || m === 'pydoc' || m === 'site' || m === 'sysconfig' || m === 'platform' || m === 'this') {
    c.add(['read_only'], `python -m ${mod} only prints`);
    rest.forEach((w) => c.maybePath(w, 'read'));
    return;
  }
  if (m === 'pdb' || m === 'code') c.add(['interactive'], `python -m ${m} is interactive`);
  c.add(['code_execution', 'mutating'], `python -m ${mod} runs a module`);
  rest.forEach((w) => c.maybePath(w, 'read'));
}

function interpreter(lang: Lang): Handler {
  return (c) => {
    const what = (flag: string) => `${c.prog} ${flag}`;
    let sawCode = false;
    let i = 0;
    for (; i < c.args.length; i++) {
      const v = c.vals[i];
      if (v === null || v === undefined) break;
      if (v === '--') {
        i++;
        break;
      }
      if (!v.startsWith('-') || v === '-') break;
      if (lang.info.includes(v) && c.args.length === 1) {
        c.add(['read_only'], `${c.prog} ${v} only prints`);
        return;
      }
      const eq = v.indexOf('=');
      const flag = eq > 0 ? v.slice(0, eq) : v;
      if (lang.code.includes(flag)) {
        const w = eq > 0 ? litWord(v.slice(eq + 1)) : c.args[++i];
        if (!w) break;
        sawCode = true;
        const text = codeText(c, w, what(flag));
        if (text !== null) {
          if (/Encoded/i.test(flag) || flag === '-enc' || (flag === '-e' && lang === LANGS.pwsh)) c.add(['opaque_code'], `${what(flag)} runs encoded code`);
          else scanInlineCode(c, text, what(flag));
        }
        continue;
      }
      if (lang.module && (flag === lang.module || v.startsWith(lang.module))) {
        const mod = v.length > 2 ? v.slice(2) : (c.vals[++i] ?? null);
        if (mod === null) c.add(['unknown'], `${c.prog} -m with an unknown module`);
        else pythonModule(c, mod, c.args.slice(i + 1));
        return;
      }
      if (lang.valued.includes(flag) && eq < 0) {
        const val = c.args[++i];
        if (val && (flag === '-r' || flag === '--require' || flag === '--import' || flag === '--loader')) c.maybePath(val, 'read');
        continue;
      }
      // A valued option with its value attached: perl -MLWP::Simple, -I/usr/lib.
      if (lang.valued.some((f) => f.length === 2 && v.startsWith(f) && v.length > 2)) {
        if (/^-[Mm]/.test(v) && /LWP|Net::|IO::Socket|HTTP|Socket|URI::Fetch|Mojo::UserAgent/.test(v)) c.add(['networked'], `${c.prog} loads a network module (${v})`);
        continue;
      }
      // Combined short flags: perl -pie 'code', -ne, ruby -pe; perl -i.bak edits in place.
      if (/^-[A-Za-z]+/.test(v) && !v.startsWith('--')) {
        if (lang.inPlace && /^-[a-zA-Z]*i/.test(v)) c.add(['mutating'], `${c.prog} -i edits files in place`);
        const letters = v.slice(1);
        const codeFlag = lang.code.find((f) => f.length === 2 && letters.includes(f[1]!));
        if (codeFlag && lang.code.length > 0) {
          const at = letters.indexOf(codeFlag[1]!);
          const attached = letters.slice(at + 1);
          const w = attached && !/^[a-zA-Z]*$/.test(attached) ? litWord(attached) : c.args[++i];
          if (w) {
            sawCode = true;
            const text = codeText(c, w, what(codeFlag));
            if (text !== null) scanInlineCode(c, text, what(codeFlag));
          }
          continue;
        }
        if (c.prog === 'php' && letters.startsWith('S')) c.add(['networked'], 'php -S starts a web server');
        if (letters.includes('i') && !lang.inPlace && c.prog !== 'php') c.add(['interactive'], `${c.prog} -i starts a REPL`);
      }
    }
    const rest = c.args.slice(i);
    if (sawCode) {
      const inPlace = c.has('mutating');
      rest.forEach((w) => (inPlace ? c.path(w, 'write', 'edits') : c.maybePath(w, 'read')));
      return;
    }
    const script = rest[0];
    if (!script || literal(script) === '-' || literal(script) === '/dev/stdin') {
      codeFromStdin(c, c.prog, (t) => scanInlineCode(c, t, `${c.prog} reading its input`));
      return;
    }
    const sv = literal(script);
    if (sv !== null && /^https?:\/\//.test(sv)) {
      c.add(['opaque_code', 'networked'], `${c.prog} runs code straight from ${sv}`);
      return;
    }
    if (c.prog === 'osascript') c.add(['host_escape'], 'osascript drives applications on the host');
    scriptFile(c, script, c.prog);
    rest.slice(1).forEach((w) => c.maybePath(w, 'read'));
  };
}

const deno: Handler = (c) => {
  const sub = c.vals[0];
  const o = parseOpts(c.args.slice(1));
  const perms = [...o.flags, ...o.values.keys()];
  if (perms.some((p) => /^(A|allow-all|allow-net|allow-run|allow-ffi|allow-sys)$/.test(p))) c.add(['networked'], 'deno is given network or process permissions');
  if (perms.includes('allow-write') || perms.includes('A') || perms.includes('allow-all')) c.add(['mutating'], 'deno may write files');
  switch (sub) {
    case 'eval': {
      const w = o.operands[0];
      const text = w ? codeText(c, w, 'deno eval') : null;
      if (text !== null) scanInlineCode(c, text, 'deno eval');
      return;
    }
    case 'run':
    case undefined: {
      const w = o.operands[0];
      if (!w) {
        c.add(['interactive'], 'deno with no script is a REPL');
        return;
      }
      const v = literal(w);
      if (v && /^(https?|npm|jsr):/.test(v)) c.add(['opaque_code', 'networked'], `deno runs code straight from ${v}`);
      else scriptFile(c, w, 'deno');
      return;
    }
    case 'install':
    case 'add':
    case 'cache':
      c.add(['package_install', 'networked'], `deno ${sub} downloads packages`);
      return;
    case 'fmt':
    case 'lint':
    case 'check':
    case 'doc':
    case 'info':
      c.add(o.flags.has('fix') || (sub === 'fmt' && !o.flags.has('check')) ? ['mutating'] : ['read_only'], `deno ${sub}`);
      return;
    default:
      c.add(['code_execution', 'mutating'], `deno ${sub} runs project code`);
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
  csh: shell,
  tcsh: shell,
  rbash: shell,
  source,
  '.': source,
  eval: evalH,
  deno,
  expect: interpreter({ code: ['-c'], valued: ['-f', '-D'], info: ['-v', '--version'] }),
  ...Object.fromEntries(Object.entries(LANGS).map(([k, l]) => [k, interpreter(l)])),
  python2: interpreter(LANGS.python!),
  python3: interpreter(LANGS.python!),
  nodejs: interpreter(LANGS.node!),
  R: interpreter(LANGS.Rscript!),
  ts_node: interpreter(LANGS.node!),
  'ts-node': interpreter(LANGS.node!),
  tsx: interpreter(LANGS.node!),
};
