/**
 * Programs handed commands as lists: xargs and parallel (a command plus arguments from their
 * input or from `:::`), hyperfine, concurrently, pee and tmux (shell strings), entr, sshpass,
 * nix-shell --run. Each command they would run is judged as if typed directly, with the
 * arguments they would give it: `parallel rm -rf ::: /` is `rm -rf /`.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts, unknownWord } from '../command';
import { hasGlob, literal, litWord, taints, type Value, type Word } from '../words';
import { runInner } from './wrappers';

/** How many composed command lines (command × argument) are judged; more are alike. */
const MAX_COMPOSED = 32;

/** A value quoted for the shell, unless it is plain (a glob stays a glob); a computed one is `"$1"`. */
function shellQuote(word: Word): string {
  const text = literal(word);
  if (text === null) return '"$1"';
  if (/^[\w@%+=:,./-]+$/.test(text) || (hasGlob(word) && /^[\w@%+=:,./*?[\]-]+$/.test(text))) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** What a program reading its input as arguments gets: workspace paths when the producer lists them. */
function inputValue(cmd: Cmd, what: string): Value {
  if (cmd.stdin.kind === 'data' && cmd.stdin.workspacePaths) return { kind: 'workspace' };
  return { kind: 'unknown', taint: cmd.stdin.kind === 'data' ? cmd.stdin.taint : [], what };
}

/** How many input items known literally (a here-string, echo of literal text) are judged one by one. */
const MAX_LITERAL_INPUTS = 32;

/**
 * xargs [options] [command [args]]: the command (echo by default) runs with the input as extra
 * arguments, or, with -I TOKEN, with TOKEN replaced by each input line. Input known literally is
 * used as is; otherwise it is workspace paths (from find ., git ls-files) or unknown.
 */
const xargs: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'IiEeLlnPsdaJR', [
    'replace', 'eof', 'max-lines', 'max-args', 'max-procs', 'max-chars', 'delimiter', 'arg-file', 'process-slot-var',
  ], true);
  if (opts.flags.has('p') || opts.flags.has('interactive')) cmd.add(['interactive'], 'xargs -p asks on the terminal');
  const argFiles = [...(opts.values.get('a') ?? []), ...(opts.values.get('arg-file') ?? [])];
  for (const file of argFiles) cmd.path(file, 'read');
  const inner = opts.operands.length > 0 ? opts.operands : [litWord('echo')];
  const value: Value = argFiles.length > 0 ? { kind: 'unknown', taint: [], what: 'xargs -a input' } : inputValue(cmd, 'xargs input');
  const replaceToken = literal((opts.values.get('I') ?? opts.values.get('replace') ?? opts.values.get('i') ?? [])[0] ?? litWord('')) || null;
  const knownText = argFiles.length === 0 && cmd.stdin.kind === 'data' ? cmd.stdin.text : null;
  cmd.transparent = true;
  if (knownText !== null && replaceToken === null) {
    const delimiter = opts.flags.has('0') || opts.flags.has('null') ? '\0' :
        literal((opts.values.get('d') ?? opts.values.get('delimiter') ?? [])[0] ?? litWord('')) || null;
    const args = xargsItems(knownText, delimiter).map((arg) => litWord(arg));
    cmd.nested([...inner, ...args], { kind: 'inherit' });
    return;
  }
  const valueWord: Word = { raw: '{xargs input}', segs: [{ t: 'val', v: value, q: true }] };
  const inputs = knownText !== null ? knownText.split('\n').filter((line) => line.trim() !== '').slice(0, MAX_LITERAL_INPUTS).map(
      (line) => litWord(line)) : [valueWord];
  for (const input of inputs) runOnce(cmd, inner, input, replaceToken);
};

/**
 * The arguments xargs makes of known input. With -0 or -d the delimiter alone splits (`echo 'rm
 * -rf /' | xargs -0 sh -c` hands sh the whole line as its script); otherwise blanks split, and
 * quotes and backslashes group as in the shell (`echo "'rm -rf /'" | xargs sh -c` does the same).
 */
function xargsItems(text: string, delimiter: string | null): string[] {
  if (delimiter !== null) {
    const sep = delimiter === '\\n' ? '\n' : delimiter === '\\t' ? '\t' : delimiter === '\\0' ? '\0' : delimiter;
    const items = text.split(sep);
    if (items[items.length - 1] === '') items.pop();
    return items;
  }
  const items: string[] = [];
  let current: string | null = null;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else current += c;
    } else if (c === "'" || c === '"') {
      quote = c;
      current ??= '';
    } else if (c === '\\' && i + 1 < text.length) current = (current ?? '') + text[++i];
    else if (/\s/.test(c)) {
      if (current !== null) items.push(current);
      current = null;
    } else current = (current ?? '') + c;
  }
  if (current !== null) items.push(current);
  return items;
}

/** Judges the command xargs runs for one input item (literal, or a value word). */
function runOnce(cmd: Cmd, inner: Word[], input: Word, replaceToken: string | null): void {
  const first = input.segs[0];
  const value: Value = literal(input) !== null ? { kind: 'unknown', taint: [], what: input.raw } : first?.t === 'val' ? first.v :
      { kind: 'unknown', taint: [], what: input.raw };
  const words = replaceToken ? inner.map((word) => (literal(word)?.includes(replaceToken) ? substitute(word, replaceToken, input) : word)) : [...inner, input];
  // A shell run by xargs: its script is judged with the input as $1…, or as code when the
  // replace token lands inside the script text itself.
  const prog = literal(inner[0]!);
  if (prog && /^(sh|bash|zsh|dash|ksh)$/.test(prog)) {
    const codeAt = inner.findIndex((word) => /^-\w*c$/.test(literal(word) ?? ''));
    const code = codeAt >= 0 ? inner[codeAt + 1] : undefined;
    const text = code ? literal(code) : null;
    const inputText = literal(input);
    if (code && text !== null && replaceToken !== null && text.includes(replaceToken)) {
      if (inputText !== null) cmd.script(text.split(replaceToken).join(inputText), `xargs ${prog} -c`);
      else {
        cmd.add(value.kind === 'unknown' && value.taint.length > 0 ? ['opaque_code'] : ['code_execution', 'unknown'],
            `xargs puts its input into the ${prog} -c script, so the input runs as code`);
        cmd.script(text.split(replaceToken).join('"$1"'), `xargs ${prog} -c`, [value]);
      }
    } else if (code && text !== null) cmd.script(text, `xargs ${prog} -c`, Array.from({ length: 9 }, () => (inputText ?? value)));
    else cmd.nested(words, { kind: 'data', text: null, taint: value.kind === 'unknown' ? value.taint : [], from: 'xargs input' });
    return;
  }
  const outcome = cmd.nested(words, { kind: 'inherit' });
  cmd.outputTaint = outcome.outputTaint;
  if (taints(input).size > 0 && outcome.findings.some((f) => f.categories.includes('code_execution'))) {
    cmd.add(['opaque_code'], 'xargs feeds downloaded or decoded input to a program that runs code');
  }
}

/** `word` with the replace token standing for the input (a literal line keeps its text). */
function substitute(word: Word, token: string, input: Word): Word {
  const text = literal(word)!;
  const inputText = literal(input);
  if (inputText !== null) return litWord(text.split(token).join(inputText));
  return text === token ? input : { raw: word.raw,
      segs: [{ t: 'val', v: input.segs[0]?.t === 'val' ? input.segs[0].v : { kind: 'unknown', taint: [], what: word.raw }, q: true }] };
}

/** GNU parallel's replacement strings: `{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`, `{%}`, `{1}` … */
const REPLACEMENT = /\{(\d+)?(\.|\/|\/\/|\/\.|#|%)?\}/g;

/** Composes and judges the shell lines `template` becomes for each argument. */
function judgeComposed(cmd: Cmd, template: Word[], args: Word[], how: string): void {
  if (template.length === 0) {
    // No command: each argument is a command line.
    for (const arg of args.slice(0, MAX_COMPOSED)) {
      const text = cmd.codeText(arg, how);
      if (text !== null) cmd.script(text, how);
    }
    return;
  }
  const texts = template.map((word) => cmd.codeText(word, how));
  if (texts.some((text) => text === null)) return;
  const line = texts.join(' ');
  if (/\{=.*=\}/.test(line)) cmd.add(['code_execution', 'unknown'], `${how} runs perl code in {= =}`);
  const composed = new Map<string, Value | string>();
  for (const arg of args.length > 0 ? args : [unknownWord('input')]) {
    const quoted = shellQuote(arg);
    const text = line.search(REPLACEMENT) >= 0 ? line.replace(REPLACEMENT, quoted) : `${line} ${quoted}`;
    // A computed argument reaches the line as "$1", carrying what is known of it (workspace paths, taint).
    const first = arg.segs[0];
    composed.set(text, arg.segs.length === 1 && first?.t === 'val' ? first.v : { kind: 'unknown', taint: [...taints(arg)], what: arg.raw });
    if (composed.size >= MAX_COMPOSED) break;
  }
  for (const [text, value] of composed) cmd.script(text, how, [value]);
}

const PARALLEL_VALUED = 'jSaIidECNnLlJ';
const PARALLEL_VALUED_LONG = [
  'jobs', 'sshlogin', 'sshloginfile', 'slf', 'arg-file', 'replace', 'delimiter', 'eof', 'colsep', 'max-args', 'max-lines', 'joblog', 'results',
  'res', 'tmpdir', 'tempdir', 'workdir', 'wd', 'env', 'basefile', 'bf', 'return', 'delay', 'timeout', 'retries', 'halt', 'memfree', 'load',
  'tagstring', 'block', 'recstart', 'recend', 'ssh', 'rpl', 'profile', 'nice', 'id', 'sqlmaster', 'sqlworker', 'termseq', 'limit', 'hostgroups',
];

/**
 * GNU parallel [options] [command] (::: args | :::: files)…: each argument (or each combination)
 * makes a command line run by a shell; without a command, each argument is one. moreutils'
 * parallel (`parallel cmd -- args`) reads the same way.
 */
const parallel: Handler = (cmd) => {
  const how = cmd.prog;
  const separator = cmd.vals.findIndex((value) => value !== null && /^::::?\+?$/.test(value));
  const head = separator >= 0 ? cmd.args.slice(0, separator) : cmd.args;
  const opts = parseOpts(head, PARALLEL_VALUED, PARALLEL_VALUED_LONG, true);
  for (const key of ['joblog', 'results', 'res', 'tmpdir', 'tempdir']) for (const file of opts.values.get(key) ?? []) cmd.path(file, 'write');
  for (const key of ['a', 'arg-file', 'sshloginfile', 'slf', 'basefile', 'bf']) for (const file of opts.values.get(key) ?? []) cmd.path(file, 'read');
  if (opts.values.has('profile') || opts.values.has('J')) cmd.add(['host_escape'], `${how} --profile reads ~/.parallel`);
  if (opts.values.has('S') || opts.values.has('sshlogin') || opts.values.has('sshloginfile') || opts.values.has('slf') || opts.flags.has('onall') ||
      opts.flags.has('nonall')) {
    cmd.add(['networked'], `${how} -S runs the commands on other machines`);
  }
  for (const ssh of opts.values.get('ssh') ?? []) cmd.runs(ssh, `${how} --ssh`);
  if (opts.values.has('rpl')) cmd.add(['code_execution', 'unknown'], `${how} --rpl defines replacement strings in perl`);
  let template = opts.operands;
  if (how === 'sem') {
    // sem (parallel --semaphore) runs its one command line, no arguments added.
    judgeComposed(cmd, [], [litWord(template.map((word) => word.raw).join(' '))], how);
    cmd.transparent = cmd.findings.length === 0;
    return;
  }
  const args: Word[] = [];
  let fromInput = separator < 0;
  if (separator >= 0) {
    let files = false;
    for (const [at, word] of cmd.args.slice(separator).entries()) {
      const value = cmd.vals[separator + at];
      if (value !== null && value !== undefined && /^::::?\+?$/.test(value)) {
        files = value.startsWith('::::');
        continue;
      }
      if (files) {
        cmd.path(word, 'read');
        fromInput = true;
      } else args.push(word);
    }
  } else {
    const dash = template.findIndex((word) => literal(word) === '--');
    if (dash >= 0) {
      args.push(...template.slice(dash + 1));
      template = template.slice(0, dash);
      fromInput = false;
    }
  }
  if (fromInput) {
    const value = inputValue(cmd, `${how} input`);
    args.push({ raw: `{${how} input}`, segs: [{ t: 'val', v: value, q: true }] });
    if (template.length === 0 && value.kind === 'unknown') {
      if (value.taint.length > 0) cmd.add(['opaque_code'], `${how} runs downloaded or decoded command lines from its input`);
      else cmd.add(['code_execution', 'unknown'], `${how} runs command lines read from its input`);
      return;
    }
  }
  judgeComposed(cmd, template, args, how);
  cmd.transparent = cmd.findings.length === 0;
};

/** hyperfine 'cmd' … [--prepare CMD] [-L name a,b]: every command string runs in a shell. */
const hyperfine: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'wmMrpcsSnDuo', [
    'warmup', 'min-runs', 'max-runs', 'runs', 'prepare', 'cleanup', 'setup', 'conclude', 'shell', 'style', 'sort', 'time-unit', 'command-name',
    'parameter-step-size', 'output', 'input', 'export-asciidoc', 'export-csv', 'export-json', 'export-markdown', 'export-orgmode',
  ]);
  cmd.add(['code_execution'], 'hyperfine runs the commands it times');
  for (const key of [
    'export-asciidoc', 'export-csv', 'export-json', 'export-markdown', 'export-orgmode',
  ]) for (const file of opts.values.get(key) ?? []) cmd.path(file, 'write');
  for (const shell of [...(opts.values.get('S') ?? []), ...(opts.values.get('shell') ?? [])]) if (
      literal(shell) !== 'none') cmd.runs(shell, 'hyperfine --shell');
  // -L NAME VALUES and -P NAME MIN MAX take their values as the next operands.
  const operands = [...opts.operands];
  const lists: { name: string; values: string[] }[] = [];
  cmd.args.forEach((word, at) => {
    const flag = literal(word);
    if (flag === '-L' || flag === '--parameter-list') {
      const name = literal(cmd.args[at + 1] ?? litWord('')) ?? '';
      const values = (literal(cmd.args[at + 2] ?? litWord('')) ?? '').split(',');
      lists.push({ name, values });
      for (const used of [cmd.args[at + 1], cmd.args[at + 2]]) operands.splice(operands.indexOf(used!), 1);
    } else if (flag === '-P' || flag === '--parameter-scan') {
      const name = literal(cmd.args[at + 1] ?? litWord('')) ?? '';
      lists.push({ name, values: [literal(cmd.args[at + 2] ?? litWord('0')) ?? '0'] });
      for (const used of [cmd.args[at + 1], cmd.args[at + 2], cmd.args[at + 3]]) operands.splice(operands.indexOf(used!), 1);
    }
  });
  const strings = [...operands, ...['p', 'prepare', 'c', 'cleanup', 's', 'setup', 'conclude'].flatMap((key) => opts.values.get(key) ?? [])];
  for (const word of strings) {
    const text = cmd.codeText(word, 'hyperfine');
    if (text === null) continue;
    const variants = new Set([text]);
    for (const { name, values } of lists) {
      for (const current of [...variants]) {
        variants.delete(current);
        for (const value of values) variants.add(current.split(`{${name}}`).join(value));
      }
    }
    for (const variant of [...variants].slice(0, MAX_COMPOSED)) cmd.script(variant, 'hyperfine');
  }
};

/** concurrently 'cmd1' 'npm:build' …: each argument is a shell command (npm:x is `npm run x`). */
const concurrently: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'ncpstlPmi', [
    'names', 'prefix-colors', 'prefix', 'success', 'timestamp-format', 'prefix-length', 'max-processes', 'restart-tries', 'restart-after',
    'default-input-target', 'name-separator', 'kill-signal', 'passthrough-arguments',
  ]);
  cmd.add(['code_execution'], `${cmd.prog} runs commands side by side`);
  for (const word of opts.operands) {
    const text = cmd.codeText(word, cmd.prog);
    if (text === null) continue;
    const npmScript = /^(npm|yarn|pnpm|bun):(.+)$/.exec(text);
    cmd.script(npmScript ? `${npmScript[1]} run ${npmScript[2]}` : text, cmd.prog);
  }
};

/** pee 'cmd1' 'cmd2': its input goes to each shell command. */
const pee: Handler = (cmd) => {
  cmd.add(['read_only'], 'pee copies its input to commands');
  for (const word of cmd.args) {
    if ((literal(word) ?? '').startsWith('-')) continue;
    const text = cmd.codeText(word, 'pee');
    if (text !== null) cmd.script(text, 'pee');
  }
};

/** entr [-s] UTILITY [ARGS]: runs the utility (or, with -s, a shell command) when files change. */
const entr: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, '', [], true);
  cmd.add(['code_execution'], 'entr runs a command whenever files change');
  if (opts.flags.has('s')) {
    const text = opts.operands[0] ? cmd.codeText(opts.operands[0], 'entr -s') : null;
    if (text !== null) cmd.script(text, 'entr -s');
    return;
  }
  const words = opts.operands.map((word) =>
      (literal(word) === '/_' ? { raw: '/_', segs: [{ t: 'val' as const, v: inputValue(cmd, 'a changed file'), q: true }] } : word));
  if (words.length > 0) cmd.nested(words, { kind: 'inherit' });
};

/** sshpass [-p PASS | -f FILE | -e] CMD …: supplies a password to the command it runs. */
const sshpass: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'pfdP', [], true);
  for (const file of opts.values.get('f') ?? []) cmd.path(file, 'read');
  runInner(cmd, opts.operands.length > 0 ? opts.operands : null, cmd.findings.length > 0);
};

/** tmux: new sessions, windows and panes run a shell command; send-keys types into one. */
const tmux: Handler = (cmd) => {
  cmd.add(['interactive'], 'tmux needs a terminal');
  const shellMode = cmd.vals.indexOf('-c');
  if (shellMode >= 0 && cmd.args[shellMode + 1] && cmd.vals.slice(0, shellMode).every((value) => (value ?? '').startsWith('-'))) {
    const text = cmd.codeText(cmd.args[shellMode + 1]!, 'tmux -c');
    if (text !== null) cmd.script(text, 'tmux -c');
    return;
  }
  const subAt = cmd.vals.findIndex((value) => value === null || !value.startsWith('-'));
  const sub = subAt >= 0 ? cmd.vals[subAt] : undefined;
  if (sub === null) {
    cmd.add(['obfuscation'], 'the tmux command is computed');
    return;
  }
  if (sub === undefined) return;
  if (/^(send-keys|send|paste-buffer|pasteb)$/.test(sub)) {
    cmd.add(['code_execution', 'unknown'], `tmux ${sub} types into a shell the policy cannot see`);
    return;
  }
  if (!new RegExp(
    [
      String.raw`^(new-session|new|new-window|neww|split-window|splitw|respawn-pane|respawnp|respawn-window|respawnw|run-shell`,
      String.raw`|run|if-shell|if|display-popup|popup|pipe-pane|pipep)$`,
    ].join(''),
  ).test(sub)) return;
  // Value-taking letters of these subcommands (-d detaches, -h/-v split: flags).
  const opts = parseOpts(cmd.args.slice(subAt + 1), 'cCeEfFlnsStTxywbB', [], false);
  const text = opts.operands.map((word) => cmd.codeText(word, `tmux ${sub}`));
  if (text.length > 0 && text.every((part): part is string => part !== null)) cmd.script(text.join(' '), `tmux ${sub}`);
};

/** screen -dm CMD …: runs CMD in a detached session; -X stuff types into one. */
const screen: Handler = (cmd) => {
  cmd.add(['interactive'], 'screen needs a terminal');
  if (cmd.vals.includes('-X')) {
    cmd.add(['code_execution', 'unknown'], 'screen -X sends commands or keystrokes to a session');
    return;
  }
  const opts = parseOpts(cmd.args, 'cehLlpSsTtX', ['logfile'], true);
  if (opts.operands.length > 0) cmd.nested(opts.operands, { kind: 'inherit' });
};

/** nix-shell [-p PKGS] [--run|--command CMD]: fetches packages, evaluates Nix code, runs CMD. */
const nixShell: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'pIAE', ['run', 'command', 'packages', 'include', 'attr', 'expr', 'arg', 'argstr', 'option']);
  cmd.add(['package_install', 'networked', 'code_execution'], 'nix-shell builds or downloads an environment');
  const commands = [...(opts.values.get('run') ?? []), ...(opts.values.get('command') ?? [])];
  for (const word of commands) {
    const text = cmd.codeText(word, 'nix-shell --run');
    if (text !== null) cmd.script(text, 'nix-shell --run');
  }
  if (commands.length === 0) cmd.add(['interactive'], 'nix-shell without --run opens a shell');
};

/**
 * File watchers that rerun a command on each change: nodemon --exec/-x TEXT, and
 * `cargo watch -x SUB` (a cargo subcommand) / `-s TEXT` (shell text). What they run is judged.
 */
const nodemon: Handler = (cmd) => {
  cmd.add(['code_execution', 'mutating'], `${cmd.prog} runs the project and reruns it on changes`);
  const opts = parseOpts(cmd.args, 'xwieV', ['exec', 'watch', 'ignore', 'ext', 'signal', 'config', 'delay']);
  for (const word of [...(opts.values.get('x') ?? []), ...(opts.values.get('exec') ?? [])]) cmd.runs(word, `${cmd.prog} --exec`);
  for (const file of opts.values.get('config') ?? []) cmd.path(file, 'read');
};

export function cargoWatch(cmd: Cmd): void {
  const opts = parseOpts(cmd.args.slice(1), 'xsBwiCdL', ['exec', 'shell', 'watch', 'ignore', 'workdir', 'delay', 'use-shell', 'env-file']);
  for (const word of [...(opts.values.get('x') ?? []), ...(opts.values.get('exec') ?? [])]) {
    const text = cmd.codeText(word, 'cargo watch -x');
    if (text !== null) cmd.script(`cargo ${text}`, 'cargo watch -x');
  }
  for (const word of [...(opts.values.get('s') ?? []), ...(opts.values.get('shell') ?? [])]) cmd.runs(word, 'cargo watch -s');
  for (const dir of [...(opts.values.get('C') ?? []), ...(opts.values.get('workdir') ?? [])]) cmd.path(dir, 'read');
}

export const COMMAND_LISTS: Record<string, Handler> = {
  nodemon,
  xargs,
  parallel,
  sem: parallel,
  hyperfine,
  concurrently,
  pee,
  entr,
  sshpass,
  tmux,
  screen,
  'nix-shell': nixShell,
};
