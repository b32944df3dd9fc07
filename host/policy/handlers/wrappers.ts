/**
 * Programs that run another program: env, nice, timeout, command, exec, xargs, sudo and friends,
 * watch, trap, alias. The inner command is judged as its own part; transparent wrappers add
 * nothing of their own, privilege wrappers add `privilege`.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { judgeAssignment } from '../envVars';
import { literal, litWord, taints, type Value, type Word } from '../words';
import { PACKAGE_TOOLS } from './packages';

/** Skips leading options (with the given value-taking ones) and returns the rest. */
function afterOptions(c: Cmd, shortWithValue: string, longWithValue: string[] = [], positionalBefore = 0): Word[] | null {
  let i = 0;
  for (; i < c.args.length; i++) {
    const v = c.vals[i];
    if (v === null || v === undefined) break;
    if (v === '--') {
      i++;
      break;
    }
    if (!v.startsWith('-') || v === '-') break;
    if (v.startsWith('--')) {
      if (!v.includes('=') && longWithValue.includes(v.slice(2))) i++;
      continue;
    }
    const letters = v.slice(1);
    const k = [...letters].findIndex((ch) => shortWithValue.includes(ch));
    if (k >= 0 && k === letters.length - 1) i++;
  }
  const rest = c.args.slice(i + positionalBefore);
  return rest.length > 0 ? rest : null;
}

function run(c: Cmd, inner: Word[] | null, own = false): void {
  if (!own) c.transparent = true;
  if (!inner || inner.length === 0) {
    if (!own) {
      c.transparent = false;
      c.add(['read_only'], `${c.prog} with no command`);
    }
    return;
  }
  const o = c.nested(inner);
  c.outputTaint = o.outputTaint;
  c.outputText = o.outputText;
  c.outputsWorkspacePaths = o.outputsWorkspacePaths;
}

/** A wrapper whose command follows its options (and `skip` fixed operands such as a duration). */
function wrapper(shortWithValue = '', longWithValue: string[] = [], skip = 0): Handler {
  return (c) => run(c, afterOptions(c, shortWithValue, longWithValue, skip));
}

const env: Handler = (c) => {
  let i = 0;
  for (; i < c.args.length; i++) {
    const v = c.vals[i];
    if (v === null || v === undefined) break;
    if (v === '--') {
      i++;
      break;
    }
    if (v === '-u' || v === '--unset') {
      i++;
      continue;
    }
    if (v === '-C' || v === '--chdir') {
      const w = c.args[++i];
      if (w) c.path(w, 'read', 'runs in');
      continue;
    }
    if (v === '-S' || v === '--split-string' || v.startsWith('--split-string=')) {
      const w = v.includes('=') ? litWord(v.slice(v.indexOf('=') + 1)) : c.args[++i];
      const text = w ? literal(w) : null;
      const rest = c.args.slice(i + 1).map((x) => x.raw).join(' ');
      if (text === null) c.add(['obfuscation'], 'env -S runs a computed command');
      else c.script(`${text} ${rest}`.trim(), 'env -S');
      c.transparent = true;
      return;
    }
    if (v.startsWith('-')) continue;
    const eq = v.indexOf('=');
    if (eq > 0) {
      judgeAssignment(c, v.slice(0, eq), litWord(v.slice(eq + 1)));
      continue;
    }
    break;
  }
  const rest = c.args.slice(i);
  if (rest.length === 0) {
    c.add(['read_only'], 'env prints the environment');
    return;
  }
  run(c, rest, c.findings.length > 0);
};

const command: Handler = (c) => {
  if (c.vals.some((v) => v === '-v' || v === '-V')) {
    c.add(['read_only'], `${c.prog} -v only looks a name up`);
    return;
  }
  run(c, afterOptions(c, ''));
};

const exec: Handler = (c) => {
  const rest = afterOptions(c, 'a');
  if (!rest) {
    c.add(['read_only'], 'exec without a command only redirects');
    return;
  }
  run(c, rest);
};

/** The value xargs appends: workspace paths when the producer lists them, else unknown. */
function stdinValue(c: Cmd): Value {
  if (c.stdin.kind === 'data' && c.stdin.workspacePaths) return { kind: 'workspace' };
  return { kind: 'unknown', taint: c.stdin.kind === 'data' ? c.stdin.taint : [], what: 'xargs input' };
}

const xargs: Handler = (c) => {
  const o = parseOpts(c.args, 'IiEeLlnPsdaJR', ['replace', 'eof', 'max-lines', 'max-args', 'max-procs', 'max-chars', 'delimiter', 'arg-file', 'process-slot-var'], true);
  if (o.flags.has('p') || o.flags.has('interactive')) c.add(['interactive'], 'xargs -p asks on the terminal');
  for (const w of [...(o.values.get('a') ?? []), ...(o.values.get('arg-file') ?? [])]) c.path(w, 'read');
  const inner = o.operands.length > 0 ? o.operands : [litWord('echo')];
  const value = stdinValue(c);
  // Input known literally (a here-string, echo of literal text): those are the arguments.
  if (c.stdin.kind === 'data' && c.stdin.text !== null && !o.values.has('I') && !o.values.has('replace') && !o.values.has('i')) {
    const args = c.stdin.text.split(/\s+/).filter(Boolean).map((a) => litWord(a));
    c.transparent = true;
    c.nested([...inner, ...args], { kind: 'inherit' });
    return;
  }
  const token = literal((o.values.get('I') ?? o.values.get('replace') ?? o.values.get('i') ?? [])[0] ?? litWord('')) || null;
  const valueWord: Word = { raw: '{xargs input}', segs: [{ t: 'val', v: value, q: true }] };
  const words = token
    ? inner.map((w) => (literal(w)?.includes(token) ? valueWord : w))
    : [...inner, valueWord];
  // A shell run by xargs gets its arguments from the input.
  const prog = literal(inner[0]!);
  if (prog && /^(sh|bash|zsh|dash)$/.test(prog)) {
    c.transparent = true;
    const ci = inner.findIndex((w) => /^-\w*c$/.test(literal(w) ?? ''));
    const code = ci >= 0 ? inner[ci + 1] : undefined;
    const text = code ? literal(code) : null;
    if (code && text !== null) c.script(text, `xargs ${prog} -c`, Array.from({ length: 9 }, () => value));
    else c.nested(words, { kind: 'data', text: null, taint: value.kind === 'unknown' ? value.taint : [], from: 'xargs input' });
    return;
  }
  c.transparent = true;
  const out = c.nested(words, { kind: 'inherit' });
  c.outputTaint = out.outputTaint;
  if (taints(valueWord).size > 0 && out.findings.some((f) => f.categories.includes('code_execution'))) c.add(['opaque_code'], 'xargs feeds downloaded or decoded input to a program that runs code');
};

/** sudo, doas, su -c …: privilege, plus the command they run. */
function privileged(shortWithValue: string, longWithValue: string[] = []): Handler {
  return (c) => {
    c.add(['privilege'], `${c.prog} runs a command as another user`);
    if (c.prog === 'su' || c.prog === 'runuser') {
      const ci = c.vals.findIndex((v) => v === '-c' || v === '--command');
      const code = ci >= 0 ? c.args[ci + 1] : undefined;
      if (code) {
        const text = literal(code);
        if (text === null) c.add(['obfuscation'], `${c.prog} -c runs a computed command`);
        else c.script(text, `${c.prog} -c`);
        return;
      }
    }
    if (c.vals.some((v) => v === '-s' || v === '-i' || v === '--shell' || v === '--login') && (c.prog === 'sudo' || c.prog === 'doas')) {
      c.add(['interactive'], `${c.prog} -s opens a root shell`);
    }
    const rest = c.prog === 'su' ? null : afterOptions(c, shortWithValue, longWithValue);
    if (rest) {
      const o = c.nested(rest);
      c.outputTaint = o.outputTaint;
    }
  };
}

const watch: Handler = (c) => {
  const rest = afterOptions(c, 'nqd', ['interval', 'differences', 'chgexit']);
  c.add(['interactive'], 'watch redraws a terminal until stopped');
  if (!rest) return;
  const texts = rest.map((w) => literal(w));
  if (texts.every((t): t is string => t !== null)) c.script(texts.join(' '), 'watch');
  else c.add(['obfuscation'], 'watch runs a computed command');
};

const trap: Handler = (c) => {
  const first = c.vals[0];
  if (first === undefined || first === '-p' || first === '-l' || first === '-' || c.args.length === 1) {
    c.add(['read_only'], 'trap lists or resets handlers');
    return;
  }
  c.add(['read_only'], 'trap sets a handler');
  if (first === null) c.add(['obfuscation'], 'trap runs a computed command');
  else if (first !== '') c.script(first, 'trap');
};

const alias: Handler = (c) => {
  c.add(['read_only'], 'alias defines a name');
  for (const [i, v] of c.vals.entries()) {
    if (v === null) {
      c.add(['obfuscation'], `alias with a computed definition (${c.args[i]!.raw})`);
      continue;
    }
    const eq = v.indexOf('=');
    if (eq <= 0) continue;
    const body = v.slice(eq + 1);
    c.judge.alias(v.slice(0, eq), body);
    c.script(body, `alias ${v.slice(0, eq)}`);
  }
};

const flock: Handler = (c) => {
  const ci = c.vals.findIndex((v) => v === '-c' || v === '--command');
  if (ci >= 0) {
    const text = literal(c.args[ci + 1] ?? litWord(''));
    if (text === null) c.add(['obfuscation'], 'flock -c runs a computed command');
    else c.script(text, 'flock -c');
    c.transparent = true;
    return;
  }
  const rest = afterOptions(c, 'wEn', ['timeout', 'conflict-exit-code']);
  if (rest?.[0]) c.path(rest[0], 'write', 'locks');
  run(c, rest ? rest.slice(1) : null, c.findings.length > 0);
};

const scriptCmd: Handler = (c) => {
  const ci = c.vals.findIndex((v) => v === '-c' || v === '--command');
  c.add(['read_only'], 'script records a session');
  if (ci >= 0) {
    const text = literal(c.args[ci + 1] ?? litWord(''));
    if (text === null) c.add(['obfuscation'], 'script -c runs a computed command');
    else c.script(text, 'script -c');
  } else c.add(['interactive'], 'script without -c starts an interactive shell');
  const file = c.args.filter((_, i) => i !== ci + 1 && i !== ci).find((w) => !(literal(w) ?? '-').startsWith('-'));
  if (file) c.path(file, 'write');
};

const tracer: Handler = (c) => {
  c.add(['system'], `${c.prog} traces processes`);
  const ci = c.vals.findIndex((v) => v === '-p');
  if (ci >= 0) return;
  for (const [i, v] of c.vals.entries()) if (v === '-o' && c.args[i + 1]) c.path(c.args[i + 1]!, 'write');
  const rest = afterOptions(c, 'oeEpPsSuabIX', []);
  if (rest) c.nested(rest);
};

/** `uv run X`, `poetry run X`, `bundle exec X` …: the runner sets up an environment, X is what runs. */
function runner(tool: string, sub: string): Handler {
  const fallback = PACKAGE_TOOLS[tool];
  return (c) => {
    if (c.vals[0] === sub) {
      const inner = c.args.slice(1);
      let k = 0;
      while (k < inner.length && (literal(inner[k]!) ?? 'x').startsWith('-') && literal(inner[k]!) !== '--') k++;
      if (literal(inner[k] ?? litWord('')) === '--') k++;
      const words = inner.slice(k);
      const first = literal(words[0] ?? litWord(''));
      if (first && /\.py$/.test(first)) words.unshift(litWord('python'));
      run(c, words.length ? words : null);
      return;
    }
    fallback?.(c);
  };
}

const busybox: Handler = (c) => {
  if (c.args.length === 0) {
    c.add(['read_only'], `${c.prog} lists applets`);
    return;
  }
  run(c, c.args);
};

export const WRAPPERS: Record<string, Handler> = {
  env,
  command,
  builtin: wrapper(),
  exec,
  nice: wrapper('n', ['adjustment']),
  nohup: wrapper(),
  timeout: wrapper('sk', ['signal', 'kill-after'], 1),
  gtimeout: wrapper('sk', ['signal', 'kill-after'], 1),
  stdbuf: wrapper('ioe', ['input', 'output', 'error']),
  ionice: (c) => (c.vals.includes('-p') ? c.add(['system'], 'ionice -p changes another process') : wrapper('cnt', ['class', 'classdata'])(c)),
  time: wrapper('fo', ['format', 'output']),
  setsid: wrapper(),
  taskset: (c) => (c.vals.includes('-p') ? c.add(['system'], 'taskset -p changes another process') : c.vals.some((v) => v === '-c' || v === '--cpu-list') ? wrapper('c', ['cpu-list'], 0)(c) : wrapper('', [], 1)(c)),
  chrt: wrapper('', [], 1),
  unbuffer: wrapper(),
  caffeinate: wrapper('tw'),
  'xvfb-run': wrapper('nslfe', ['server-num', 'server-args', 'auth-file', 'error-file']),
  'dbus-run-session': wrapper(),
  dotenv: wrapper('ecv'),
  'cross-env': (c) => {
    let i = 0;
    while (i < c.args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(c.vals[i] ?? '')) {
      const v = c.vals[i]!;
      judgeAssignment(c, v.slice(0, v.indexOf('=')), litWord(v.slice(v.indexOf('=') + 1)));
      i++;
    }
    run(c, c.args.slice(i), c.findings.length > 0);
  },
  xargs,
  parallel: (c) => {
    const sep = c.vals.findIndex((v) => v === ':::' || v === '::::');
    const inner = sep >= 0 ? c.args.slice(0, sep).filter((w) => !(literal(w) ?? '').startsWith('-')) : afterOptions(c, 'jS');
    if (!inner) {
      c.add(['code_execution', 'unknown'], 'parallel runs commands read from its input');
      return;
    }
    const texts = inner.map((w) => literal(w));
    if (texts.every((t): t is string => t !== null)) c.script(texts.join(' ').replace(/\{\}/g, 'x'), 'parallel');
    else c.add(['obfuscation'], 'parallel runs a computed command');
    c.transparent = true;
  },
  sudo: privileged('ugpChDRTUr', ['user', 'group', 'prompt', 'close-from', 'chdir', 'chroot', 'other-user', 'role', 'type', 'host', 'command-timeout']),
  doas: privileged('uC'),
  su: privileged('cgGs'),
  pkexec: privileged('', ['user']),
  runuser: privileged('ugGc', ['user', 'group', 'command']),
  chroot: (c) => {
    c.add(['privilege'], 'chroot changes the root directory');
    const rest = afterOptions(c, '', ['userspec', 'groups'], 1);
    if (rest) c.nested(rest);
  },
  fakeroot: wrapper('lsi'),
  nsenter: privileged('tSGmuinpUCrw', ['target', 'mount', 'uts', 'ipc', 'net', 'pid', 'user', 'cgroup', 'setuid', 'setgid', 'root', 'wd']),
  unshare: privileged('', ['mount', 'uts', 'ipc', 'net', 'pid', 'user', 'cgroup', 'time', 'setuid', 'setgid', 'root', 'wd', 'propagation']),
  strace: tracer,
  ltrace: tracer,
  watch,
  trap,
  alias,
  flock,
  script: scriptCmd,
  busybox,
  toybox: busybox,
  uv: runner('uv', 'run'),
  poetry: runner('poetry', 'run'),
  pipenv: runner('pipenv', 'run'),
  pdm: runner('pdm', 'run'),
  hatch: runner('hatch', 'run'),
  rye: runner('rye', 'run'),
  conda: runner('conda', 'run'),
  bundle: runner('bundle', 'exec'),
};
