/**
 * Programs that run another program given after their own options: env, nice, timeout, command,
 * exec, sudo, strace, valgrind and friends, and shell text handed to watch, trap, alias, flock,
 * script. The inner command is judged as if typed directly (its own part: what is denied stays
 * denied); transparent wrappers add nothing of their own, others add what they do themselves
 * (privilege, a log file, tracing another process).
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { judgeAssignment } from '../envVars';
import { PRINTS_ENVIRONMENT } from './secrets';
import { dropPrefix, literal, litWord, type Word } from '../words';
import { PACKAGE_TOOLS } from './packages';

/**
 * The words after the wrapper's own options: `valued` letters and `valuedLong` names take a
 * value, `fixed` operands (a duration, a priority) come before the command.
 */
export function commandAfterOptions(cmd: Cmd, valued = '', valuedLong: string[] = [], fixed = 0): Word[] | null {
  let at = 0;
  for (; at < cmd.args.length; at++) {
    const value = cmd.vals[at];
    if (value === null || value === undefined) break;
    if (value === '--') {
      at++;
      break;
    }
    if (!value.startsWith('-') || value === '-') break;
    if (value.startsWith('--')) {
      if (!value.includes('=') && valuedLong.includes(value.slice(2))) at++;
      continue;
    }
    const letters = value.slice(1);
    const valueAt = [...letters].findIndex((letter) => valued.includes(letter));
    if (valueAt >= 0 && valueAt === letters.length - 1) at++;
  }
  const rest = cmd.args.slice(at + fixed);
  return rest.length > 0 ? rest : null;
}

/**
 * Judges `inner` as the command the wrapper runs. `own`: the wrapper reports findings of its own,
 * so it stays a part; otherwise it is transparent. `inShell`: a builtin of this shell (`command`).
 */
export function runInner(cmd: Cmd, inner: Word[] | null, own = false, inShell = false): void {
  if (!own) cmd.transparent = true;
  if (!inner || inner.length === 0) {
    if (!own) {
      cmd.transparent = false;
      cmd.add(['read_only'], `${cmd.prog} with no command`);
    }
    return;
  }
  const outcome = cmd.nested(inner, cmd.stdin, inShell);
  cmd.outputTaint = outcome.outputTaint;
  cmd.outputText = outcome.outputText;
  cmd.outputsWorkspacePaths = outcome.outputsWorkspacePaths;
}

/** A wrapper whose command follows its options (and `fixed` operands such as a duration). */
export function wrapper(valued = '', valuedLong: string[] = [], fixed = 0): Handler {
  return (cmd) => runInner(cmd, commandAfterOptions(cmd, valued, valuedLong, fixed));
}

/** A wrapper that acts on another process when given one of `pidOptions`, else runs its command. */
function processWrapper(pidOptions: RegExp, valued: string, valuedLong: string[], fixed = 0): Handler {
  return (cmd) => {
    if (cmd.vals.some((value) => value !== null && pidOptions.test(value))) {
      cmd.add(['system'], `${cmd.prog} changes another process, which a checkpoint cannot undo`);
      return;
    }
    runInner(cmd, commandAfterOptions(cmd, valued, valuedLong, fixed));
  };
}

/** The value of `-X VALUE`, `-XVALUE`, `--long VALUE` or `--long=VALUE`, wherever it is. */
function optionValues(cmd: Cmd, short: string, long: string): Word[] {
  const found: Word[] = [];
  cmd.args.forEach((word, at) => {
    const text = literal(word) ?? '';
    if (text === `-${short}` || text === `--${long}`) {
      const next = cmd.args[at + 1];
      if (next) found.push(next);
    } else if (short && text.startsWith(`-${short}`) && !text.startsWith('--')) found.push(dropPrefix(word, 2));
    else if (text.startsWith(`--${long}=`)) found.push(dropPrefix(word, long.length + 3));
  });
  return found;
}

const env: Handler = (cmd) => {
  let at = 0;
  for (; at < cmd.args.length; at++) {
    const value = cmd.vals[at];
    if (value === null || value === undefined) break;
    if (value === '--') {
      at++;
      break;
    }
    if (value === '-u' || value === '--unset' || value === '-a' || value === '--argv0') {
      at++;
      continue;
    }
    if (value === '-C' || value === '--chdir' || value.startsWith('--chdir=') || /^-C./.test(value)) {
      const dir = value === '-C' || value === '--chdir' ? cmd.args[++at] : dropPrefix(cmd.args[at]!, value.startsWith('--') ? 8 : 2);
      if (dir) cmd.path(dir, 'read', 'runs in');
      continue;
    }
    if (value === '-P') {
      cmd.add(['code_execution', 'unknown'], 'env -P looks the program up in another PATH');
      at++;
      continue;
    }
    if (value === '-S' || value === '--split-string' || value.startsWith('--split-string=') || /^-S./.test(value)) {
      const split = value === '-S' || value === '--split-string' ? cmd.args[++at] : dropPrefix(cmd.args[at]!, value.startsWith('--') ? 15 : 2);
      const text = split ? cmd.codeText(split, 'env -S') : null;
      const rest = cmd.args.slice(at + 1).map((word) => word.raw).join(' ');
      if (text !== null) cmd.script(`${text} ${rest}`.trim(), 'env -S');
      cmd.transparent = cmd.findings.length === 0;
      return;
    }
    if (value.startsWith('-')) continue;
    const eq = value.indexOf('=');
    if (eq > 0) {
      judgeAssignment(cmd, value.slice(0, eq), dropPrefix(cmd.args[at]!, eq + 1));
      continue;
    }
    break;
  }
  const rest = cmd.args.slice(at);
  if (rest.length === 0) {
    cmd.add(['host_escape'], `env ${PRINTS_ENVIRONMENT}`);
    return;
  }
  runInner(cmd, rest, cmd.findings.length > 0);
};

/** `command cd`, `builtin cd`: the builtin of this very shell, so `cd` moves it. */
const command: Handler = (cmd) => {
  if (cmd.vals.some((value) => value === '-v' || value === '-V')) {
    cmd.add(['read_only'], `${cmd.prog} -v only looks a name up`);
    return;
  }
  runInner(cmd, commandAfterOptions(cmd, ''), false, true);
};

const exec: Handler = (cmd) => {
  const rest = commandAfterOptions(cmd, 'a');
  if (!rest) {
    cmd.add(['read_only'], 'exec without a command only redirects');
    return;
  }
  runInner(cmd, rest);
};

/** `time [-o FILE] [-a] cmd`: the report goes to FILE. */
const time: Handler = (cmd) => {
  for (const file of optionValues(cmd, 'o', 'output')) cmd.path(file, 'write');
  runInner(cmd, commandAfterOptions(cmd, 'fo', ['format', 'output']), cmd.findings.length > 0);
};

/** strace, ltrace: tracing a child is harmless; -p attaches to a host process. */
const tracer: Handler = (cmd) => {
  if (cmd.vals.some((value) => value !== null && /^(-p|--attach|--attach=.*|-p\d+)$/.test(value))) {
    cmd.add(['system'], `${cmd.prog} -p attaches to a host process`);
    return;
  }
  if (cmd.vals.some((value) => value === '-u' || value === '--user')) cmd.add(['privilege'], `${cmd.prog} -u runs the command as another user`);
  for (const file of optionValues(cmd, 'o', 'output')) cmd.path(file, 'write');
  runInner(cmd, commandAfterOptions(cmd, 'oeEpPsSuabIXU', ['output', 'user', 'trace', 'signal', 'status', 'string-limit']), cmd.findings.length > 0);
};

/** valgrind [--tool=X --log-file=F …] PROGRAM ARGS: the program is what runs. */
const valgrind: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, '', [], true);
  for (const key of ['log-file', 'xml-file', 'callgrind-out-file', 'massif-out-file', 'cachegrind-out-file', 'dhat-out-file']) {
    for (const file of opts.values.get(key) ?? []) cmd.path(file, 'write');
  }
  for (const file of opts.values.get('suppressions') ?? []) cmd.path(file, 'read');
  runInner(cmd, opts.operands.length > 0 ? opts.operands : null, cmd.findings.length > 0);
};

/** perf record|stat|trace … CMD: the command runs; -p, -a and perf top watch the host. */
const perf: Handler = (cmd) => {
  const sub = cmd.vals[0];
  const rest = cmd.args.slice(1);
  const host = cmd.vals.some((value) => value !== null && /^(-p|--pid|-a|--all-cpus|-C|--cpu|-t|--tid|-u|--uid)(=.*)?$/.test(value));
  if (sub === 'top' || host) {
    cmd.add(['system'], `perf ${sub ?? ''} watches host processes`);
    return;
  }
  if (sub === null || sub === undefined || !/^(record|stat|trace|mem|c2c|kmem|kvm|sched|lock|ftrace)$/.test(sub)) {
    cmd.add(['read_only'], `perf ${sub ?? ''} reads profiles`);
    for (const arg of rest) cmd.maybePath(arg, 'read');
    return;
  }
  for (const file of optionValues(cmd, 'o', 'output')) cmd.path(file, 'write');
  const opts = parseOpts(rest, 'oeFcgGmrCptuxjIDT', [
    'output', 'event', 'freq', 'count', 'call-graph', 'cgroup', 'mmap-pages', 'delay', 'repeat', 'field-separator', 'post', 'pre',
  ], true);
  for (const hook of [...(opts.values.get('pre') ?? []), ...(opts.values.get('post') ?? [])]) cmd.runs(hook, `perf ${sub} --pre/--post`);
  runInner(cmd, opts.operands.length > 0 ? opts.operands : null, cmd.findings.length > 0);
};

/** sudo, doas, su -c …: privilege, plus the command they run. */
function privileged(valued: string, valuedLong: string[] = []): Handler {
  return (cmd) => {
    cmd.add(['privilege'], `${cmd.prog} runs a command as another user`);
    if (cmd.prog === 'su' || cmd.prog === 'runuser') {
      const code = [...optionValues(cmd, 'c', 'command'), ...optionValues(cmd, '', 'session-command')][0];
      if (code) {
        const text = cmd.codeText(code, `${cmd.prog} -c`);
        if (text !== null) cmd.script(text, `${cmd.prog} -c`);
        return;
      }
    }
    if (cmd.vals.some((value) => value === '-s' || value === '-i' || value === '--shell' || value === '--login') && (
        cmd.prog === 'sudo' || cmd.prog === 'doas')) {
      cmd.add(['interactive'], `${cmd.prog} -s opens a root shell`);
    }
    const rest = cmd.prog === 'su' ? null : commandAfterOptions(cmd, valued, valuedLong);
    if (rest) cmd.outputTaint = cmd.nested(rest).outputTaint;
  };
}

/** watch [-x] CMD …: redraws a terminal, running CMD through sh -c (or directly with -x). */
const watch: Handler = (cmd) => {
  const rest = commandAfterOptions(cmd, 'nqd', ['interval', 'differences', 'chgexit', 'equexit']);
  cmd.add(['interactive'], 'watch redraws a terminal until stopped');
  if (!rest) return;
  if (cmd.vals.some((value) => value === '-x' || value === '--exec')) {
    cmd.nested(rest);
    return;
  }
  const texts = rest.map((word) => literal(word));
  if (texts.every((text): text is string => text !== null)) cmd.script(texts.join(' '), 'watch');
  else cmd.add(['obfuscation'], 'watch runs a computed command');
};

/** trap 'CODE' SIGNALS: CODE runs later in this shell, at a moment nobody knows. */
const trap: Handler = (cmd) => {
  const first = cmd.vals[0];
  if (first === undefined || first === '-p' || first === '-l' || first === '-' || cmd.args.length === 1) {
    cmd.add(['read_only'], 'trap lists or resets handlers');
    return;
  }
  cmd.add(['read_only'], 'trap sets a handler');
  const code = cmd.codeText(cmd.args[0]!, 'trap');
  if (code === null || code === '') return;
  const effect = cmd.script(code, 'trap', undefined, 'later');
  if (effect.changedDirectory) {
    cmd.add(['unknown'], 'the trap handler changes directory at moments nobody knows, so where later paths lead is unknown');
    if (cmd.inShell) cmd.judge.chdir(null);
  }
};

const alias: Handler = (cmd) => {
  cmd.add(['read_only'], 'alias defines a name');
  for (const [at, value] of cmd.vals.entries()) {
    if (value === null) {
      cmd.add(['obfuscation'], `alias with a computed definition (${cmd.args[at]!.raw})`);
      continue;
    }
    const eq = value.indexOf('=');
    if (eq <= 0) continue;
    const body = value.slice(eq + 1);
    cmd.judge.alias(value.slice(0, eq), body);
    cmd.script(body, `alias ${value.slice(0, eq)}`);
  }
};

/** flock [opts] FILE|DIR CMD… or flock FILE -c 'CMD': the lock file is written, CMD runs. */
const flock: Handler = (cmd) => {
  const shellText = optionValues(cmd, 'c', 'command')[0];
  const rest = commandAfterOptions(cmd, 'wEc', ['timeout', 'wait', 'conflict-exit-code', 'command']);
  if (rest?.[0] && !/^\d+$/.test(literal(rest[0]) ?? '')) cmd.path(rest[0], 'write', 'locks');
  if (shellText) {
    const text = cmd.codeText(shellText, 'flock -c');
    if (text !== null) cmd.script(text, 'flock -c');
    cmd.transparent = cmd.findings.length === 0;
    return;
  }
  runInner(cmd, rest ? rest.slice(1) : null, cmd.findings.length > 0);
};

/** script [-c CMD] [FILE]: records a session into FILE (and timing files), running CMD or a shell. */
const script: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'cOITBEt', ['command', 'log-out', 'log-in', 'log-io', 'log-timing', 'logging-format', 'echo', 'timing']);
  cmd.add(['read_only'], 'script records a session');
  const commands = [...(opts.values.get('c') ?? []), ...(opts.values.get('command') ?? [])];
  for (const code of commands) {
    const text = cmd.codeText(code, 'script -c');
    if (text !== null) cmd.script(text, 'script -c');
  }
  if (commands.length === 0) cmd.add(['interactive'], 'script without -c starts an interactive shell');
  for (const key of [
    'O', 'I', 'T', 'B', 'log-out', 'log-in', 'log-io', 'log-timing', 'timing',
  ]) for (const file of opts.values.get(key) ?? []) cmd.path(file, 'write');
  const file = opts.operands[0];
  if (file) cmd.path(file, 'write');
};

/** `uv run X`, `poetry run X`, `bundle exec X` …: the runner sets up an environment, X is what runs. */
function runner(tool: string, sub: string): Handler {
  const fallback = PACKAGE_TOOLS[tool];
  return (cmd) => {
    if (cmd.vals[0] !== sub) {
      fallback?.(cmd);
      return;
    }
    const inner = cmd.args.slice(1);
    // `uv run --with PKG` (or a URL, --with-requirements, --index-url) installs before running.
    if (tool === 'uv') {
      const adds = cmd.vals.find((value) => value !== null && /^--(with|with-requirements|with-editable|index-url|extra-index-url|index|find-links)(=|$)/.test(value));
      if (adds) cmd.add(['package_install', 'networked'], `uv run ${adds.replace(/=.*/, '')} installs packages before running`);
    }
    let at = 0;
    while (at < inner.length && (literal(inner[at]!) ?? 'x').startsWith('-') && literal(inner[at]!) !== '--') at++;
    if (literal(inner[at] ?? litWord('')) === '--') at++;
    const words = inner.slice(at);
    const first = literal(words[0] ?? litWord(''));
    if (first && /\.py$/.test(first)) words.unshift(litWord('python'));
    runInner(cmd, words.length ? words : null);
  };
}

const busybox: Handler = (cmd) => {
  if (cmd.args.length === 0) {
    cmd.add(['read_only'], `${cmd.prog} lists applets`);
    return;
  }
  runInner(cmd, cmd.args);
};

/** Runs its command with a network proxy in between (torsocks, proxychains). */
const proxied: Handler = (cmd) => {
  cmd.add(['networked'], `${cmd.prog} sends the command's traffic through a proxy`);
  runInner(cmd, commandAfterOptions(cmd, 'fqiuPadp'), true);
};

/** Runs its command with host credentials in its environment (aws-vault, op run, doppler run). */
function withSecrets(sub: string | null): Handler {
  return (cmd) => {
    if (sub !== null && cmd.vals[0] !== sub) {
      cmd.add(['host_escape'], `${cmd.prog} handles host credentials`);
      return;
    }
    cmd.add(['host_escape'], `${cmd.prog} hands host credentials to the command`);
    const args = sub === null ? cmd.args : cmd.args.slice(1);
    const dash = args.findIndex((word) => literal(word) === '--');
    runInner(cmd, dash >= 0 ? args.slice(dash + 1) : null, true);
  };
}

export const WRAPPERS: Record<string, Handler> = {
  env,
  command,
  builtin: command,
  exec,
  nice: wrapper('n', ['adjustment']),
  nohup: wrapper(),
  timeout: wrapper('sk', ['signal', 'kill-after'], 1),
  gtimeout: wrapper('sk', ['signal', 'kill-after'], 1),
  stdbuf: wrapper('ioe', ['input', 'output', 'error']),
  ionice: processWrapper(/^(-p|-P|-u|--pid|--pgid|--uid)(=.*)?$/, 'cnt', ['class', 'classdata']),
  time,
  setsid: wrapper(),
  taskset: (cmd) => (cmd.vals.some((value) => value === '-c' || value === '--cpu-list') ? processWrapper(/^(-p|--pid)$/, 'c', ['cpu-list'])(cmd) :
      processWrapper(/^(-p|--pid)$/, '', [], 1)(cmd)),
  chrt: processWrapper(/^(-p|--pid)$/, 'TPD', ['sched-runtime', 'sched-period', 'sched-deadline'], 1),
  prlimit: processWrapper(/^(-p|--pid)(=.*)?$/, '', []),
  renice: (cmd) => cmd.add(['system'], 'renice changes the priority of host processes'),
  numactl: wrapper('NmCpiw', ['cpunodebind', 'membind', 'physcpubind', 'preferred', 'interleave', 'weighted-interleave']),
  setarch: (cmd) => runInner(cmd, commandAfterOptions(cmd, '', [], literal(cmd.args[0] ?? litWord('-'))?.startsWith('-') ? 0 : 1)),
  linux32: wrapper(),
  linux64: wrapper(),
  cgexec: wrapper('g'),
  'systemd-inhibit': wrapper('', ['what', 'who', 'why', 'mode']),
  chronic: wrapper(),
  ifne: wrapper(),
  faketime: wrapper('f', [], 1),
  catchsegv: wrapper(),
  heaptrack: wrapper('o', ['output']),
  rr: (cmd) => (cmd.vals[0] === 'record' ? runInner(cmd, cmd.args.slice(1)) : cmd.add(['read_only'], 'rr replays a recording')),
  ccache: (cmd) => (cmd.args.length > 0 && !(cmd.vals[0] ?? '-').startsWith('-') ? runInner(cmd, cmd.args) : cmd.add(['mutating'],
      `${cmd.prog} manages its cache`)),
  sccache: (cmd) => (cmd.args.length > 0 && !(cmd.vals[0] ?? '-').startsWith('-') ? runInner(cmd, cmd.args) : cmd.add(['mutating'],
      `${cmd.prog} manages its cache`)),
  unbuffer: wrapper(),
  caffeinate: wrapper('tw'),
  'xvfb-run': wrapper('nslfe', ['server-num', 'server-args', 'auth-file', 'error-file']),
  'dbus-run-session': wrapper(),
  'dbus-launch': wrapper(),
  'ssh-agent': (cmd) => runInner(cmd, commandAfterOptions(cmd, 'aEPt')),
  torsocks: proxied,
  torify: proxied,
  proxychains: proxied,
  proxychains4: proxied,
  'aws-vault': withSecrets('exec'),
  op: withSecrets('run'),
  doppler: withSecrets('run'),
  dotenv: wrapper('ecv'),
  'cross-env': (cmd) => {
    let at = 0;
    while (at < cmd.args.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(cmd.vals[at] ?? '')) {
      const value = cmd.vals[at]!;
      judgeAssignment(cmd, value.slice(0, value.indexOf('=')), dropPrefix(cmd.args[at]!, value.indexOf('=') + 1));
      at++;
    }
    runInner(cmd, cmd.args.slice(at), cmd.findings.length > 0);
  },
  sudo: privileged('ugpChDRTUr', ['user', 'group', 'prompt', 'close-from', 'chdir', 'chroot', 'other-user', 'role', 'type', 'host', 'command-timeout']),
  doas: privileged('uC'),
  su: privileged('cgGs'),
  pkexec: privileged('', ['user']),
  runuser: privileged('ugGc', ['user', 'group', 'command']),
  chroot: (cmd) => {
    cmd.add(['privilege'], 'chroot changes the root directory');
    const rest = commandAfterOptions(cmd, '', ['userspec', 'groups'], 1);
    if (rest) cmd.nested(rest);
  },
  fakeroot: wrapper('lsi'),
  nsenter: privileged('tSGmuinpUCrw', ['target', 'mount', 'uts', 'ipc', 'net', 'pid', 'user', 'cgroup', 'setuid', 'setgid', 'root', 'wd']),
  unshare: privileged('', ['mount', 'uts', 'ipc', 'net', 'pid', 'user', 'cgroup', 'time', 'setuid', 'setgid', 'root', 'wd', 'propagation']),
  sg: (cmd) => {
    cmd.add(['privilege'], 'sg runs a command as another group');
    const code = optionValues(cmd, 'c', 'command')[0] ?? cmd.args[1];
    const text = code ? cmd.codeText(code, 'sg') : null;
    if (text !== null) cmd.script(text, 'sg');
  },
  strace: tracer,
  ltrace: tracer,
  valgrind,
  perf,
  watch,
  trap,
  alias,
  flock,
  script,
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
