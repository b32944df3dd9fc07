/**
 * Builtins that move the shell or set its variables: cd, pushd, popd, shopt, read, mapfile,
 * printf -v, getopts. Where the current directory goes is followed so that later relative paths
 * are judged from there; wherever it cannot be known (`cd -` with no earlier cd, CDPATH, a pushd
 * stack from before the line, cdable_vars), the command says so and later paths are unknown.
 */
import { posix } from 'node:path';
import type { Handler } from '../classify';
import { PRINTS_ENVIRONMENT } from './secrets';
import { type Cmd, parseOpts, unknownWord } from '../command';
import { judgePath, pathFinding, type PathVerdict } from '../paths';
import { display, literal, litWord, type Word, wordValue } from '../words';

/** A variable's value as a word, for judging it as a path. */
function variableWord(cmd: Cmd, name: string): Word {
  const value = cmd.judge.variable(name);
  return typeof value === 'string' ? litWord(value) : { raw: '$' + name, segs: [{ t: 'val', v: value, q: true }] };
}


/**
 * Where `cd DIR` may land. A relative DIR that does not start with `.` is looked up in CDPATH
 * first (bash then falls back to the current directory), so with CDPATH set it may land in any
 * of those places; `CDPATH=/ cd etc` is `cd /etc`.
 */
function destinations(cmd: Cmd, target: Word): Word[] {
  const text = literal(target);
  if (text === null || text.startsWith('/') || /^\.\.?(\/|$)/.test(text)) return [target];
  const cdpath = cmd.judge.variable('CDPATH');
  if (typeof cdpath !== 'string') {
    // Never set on this line: bash -lc starts with CDPATH unset unless the user's profile sets it.
    if (cdpath.kind === 'unknown' && cdpath.what === '$CDPATH') return [target];
    return [target, unknownWord(`$CDPATH/${text}`)];
  }
  if (cdpath === '') return [target];
  const entries = cdpath.split(':').map((entry) => litWord(posix.join(entry === '' ? '.' : entry, text)));
  return [...entries, target];
}

/** Moves the shell to `target` (judged as a directory read); `how` names the command in messages. */
function enter(cmd: Cmd, target: Word, how: string): void {
  const verdicts: PathVerdict[] = [];
  for (const dest of destinations(cmd, target)) {
    const verdict = judgePath(dest, cmd.judge.paths());
    const finding = pathFinding(verdict, 'read');
    if (finding) cmd.add(finding.categories, `${how} enters ${finding.why.replace(/^reads /, '')}`);
    verdicts.push(verdict);
  }
  // A wrapper runs an external `cd`, which cannot move this shell.
  if (!cmd.inShell) return;
  const places = new Set(verdicts.map((v) => (v.cls === 'inside' || v.cls === 'git_control' ? v.shown : null)));
  if (places.size === 1 && !places.has(null)) {
    cmd.judge.chdir([...places][0]!, true);
    return;
  }
  if (places.size > 1) cmd.add(['unknown'], `${how} may land in any of ${verdicts.map((v) => v.shown).join(', ')}, so where later paths lead is unknown`);
  cmd.judge.chdir(null);
}

/** The shell moves somewhere the policy cannot follow: later relative paths are unknown. */
function lost(cmd: Cmd, why: string): void {
  cmd.add(['unknown'], `${why}, so where later paths lead is unknown`);
  if (cmd.inShell) cmd.judge.chdir(null);
}

const cd: Handler = (cmd) => {
  cmd.add(['read_only'], 'cd changes directory');
  const opts = parseOpts(cmd.args);
  const target = opts.operands[0];
  if (!target) {
    enter(cmd, variableWord(cmd, 'HOME'), 'cd with no directory (HOME)');
    return;
  }
  if (literal(target) === '-') {
    const previous = cmd.judge.variable('OLDPWD');
    if (typeof previous !== 'string') lost(cmd, 'cd - returns to a directory from before this command line');
    else enter(cmd, litWord(previous), 'cd - (OLDPWD)');
    return;
  }
  enter(cmd, target, `cd ${display(target)}`);
};

/** `pushd DIR` saves the current directory and enters DIR; `pushd` alone swaps the top two. */
const pushd: Handler = (cmd) => {
  cmd.add(['read_only'], 'pushd changes directory');
  const opts = parseOpts(cmd.args);
  const target = opts.operands[0];
  const stack = cmd.judge.dirStack;
  if (target && /^[+-]\d+$/.test(literal(target) ?? '')) {
    lost(cmd, `pushd ${display(target)} rotates the directory stack`);
    return;
  }
  if (opts.flags.has('n')) {
    if (target) judgeOnly(cmd, target, 'pushd -n');
    stack.push(target ? null : cmd.judge.cwd);
    return;
  }
  const here = cmd.judge.cwd;
  if (!target) {
    if (stack.length === 0) {
      lost(cmd, 'pushd swaps with a directory saved before this command line');
      return;
    }
    const top = stack.pop()!;
    stack.push(here);
    if (top === null) lost(cmd, 'pushd returns to a directory the policy could not follow');
    else enter(cmd, litWord(top), 'pushd');
    return;
  }
  if (cmd.inShell) stack.push(here);
  enter(cmd, target, `pushd ${display(target)}`);
};

/** `popd` returns to the directory pushd saved on this line; older ones are unknown. */
const popd: Handler = (cmd) => {
  cmd.add(['read_only'], 'popd changes directory');
  const opts = parseOpts(cmd.args);
  if (opts.operands.length > 0 || opts.flags.has('n')) {
    lost(cmd, 'popd with arguments edits the directory stack');
    return;
  }
  const top = cmd.judge.dirStack.pop();
  if (top === undefined) lost(cmd, 'popd returns to a directory saved before this command line');
  else if (top === null) lost(cmd, 'popd returns to a directory the policy could not follow');
  else enter(cmd, litWord(top), 'popd');
};

function judgeOnly(cmd: Cmd, target: Word, how: string): void {
  const finding = pathFinding(judgePath(target, cmd.judge.paths()), 'read');
  if (finding) cmd.add(finding.categories, `${how}: ${finding.why}`);
}

/** shopt options that turn words into directory changes the policy cannot follow. */
const shopt: Handler = (cmd) => {
  cmd.add(['read_only'], 'shopt sets shell options');
  const setting = cmd.vals.includes('-s');
  for (const value of cmd.vals) {
    if (value === null) cmd.add(['unknown'], 'shopt sets an option whose name is computed');
    else if (setting && (value === 'cdable_vars' || value === 'autocd')) lost(cmd, `shopt -s ${value} turns names into directory changes`);
  }
};

/**
 * `set -e` / `set -o errexit`: a failing command (a cd to a missing directory) ends the script.
 * Words after the options (or after `--` / `-`) replace $1…: `set -- /etc/shadow; cat $1` reads
 * /etc/shadow, so later `$1` is that word; an option word whose value is computed could be either.
 */
const set: Handler = (cmd) => {
  if (cmd.args.length === 0) {
    cmd.add(['host_escape'], `set with no arguments ${PRINTS_ENVIRONMENT} (every variable of the shell)`);
    return;
  }
  cmd.add(['read_only'], 'set sets shell options');
  for (let at = 0; at < cmd.vals.length; at++) {
    const value = cmd.vals[at] ?? null;
    if (value === null) {
      cmd.judge.positional = 'unknown';
      return;
    }
    if (value === '--' || value === '-') {
      cmd.judge.positional = cmd.args.slice(at + 1).map(wordValue);
      return;
    }
    if (!/^[-+]/.test(value)) {
      cmd.judge.positional = cmd.args.slice(at).map(wordValue);
      return;
    }
    const on = value.startsWith('-');
    if (/^[-+]o$/.test(value)) {
      if (cmd.vals[at + 1] === 'errexit') cmd.judge.errexit = on;
      at++;
    } else if (/^[-+][a-zA-Z]*e/.test(value)) cmd.judge.errexit = on;
  }
};

/** `shift [n]` drops $1… in this shell: `set -- a /etc/shadow; shift; cat $1` reads /etc/shadow. */
const shift: Handler = (cmd) => {
  cmd.add(['read_only'], 'shift moves the positional parameters');
  const positional = cmd.judge.positional;
  if (positional === 'unknown') return;
  const count = cmd.args.length === 0 ? '1' : cmd.vals[0];
  cmd.judge.positional = count !== null && count !== undefined && /^\d+$/.test(count) ? positional.slice(Number(count)) : 'unknown';
};

const read: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'adinNptu', [], false);
  cmd.add(['read_only'], 'read sets variables from its input');
  cmd.assignsUnknown([...(opts.values.get('a') ?? []), ...(opts.operands.length > 0 ? opts.operands : [litWord('REPLY')])], 'read');
};

const mapfile: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'dnOsuCc', []);
  cmd.add(['read_only'], `${cmd.prog} sets an array from its input`);
  // -C runs a callback, as shell code, every -c lines.
  for (const callback of opts.values.get('C') ?? []) cmd.runs(callback, `${cmd.prog} -C`);
  cmd.assignsUnknown(opts.operands.length > 0 ? opts.operands.slice(0, 1) : [litWord('MAPFILE')], cmd.prog);
};

const getopts: Handler = (cmd) => {
  cmd.add(['read_only'], 'getopts parses options');
  cmd.assignsUnknown(cmd.args.slice(1, 2), 'getopts');
};

export const DIRECTORY_TOOLS: Record<string, Handler> = {
  cd,
  pushd,
  popd,
  shopt,
  set,
  shift,
  read,
  mapfile,
  readarray: mapfile,
  getopts,
};
