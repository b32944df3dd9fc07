/**
 * One simple command as the classifiers see it (program, argument words, stdin), the services
 * the script walker lends them (nested scripts, nested argv, paths), and what they conclude.
 */
import type { Category } from '../protocol/policy';
import { judgePath, looksRemote, pathFinding, type PathContext, type PathUse, type PathVerdict } from './paths';
import { display, dropPrefix, literal, literalPrefix, litWord, type Taint, type Value, type Word } from './words';

export interface Finding {
  categories: Category[];
  why: string;
}

/** What feeds a command's standard input. */
export type Stdin =
  /** Whatever the exec gives (a terminal or nothing). */
  | { kind: 'inherit' }
  /** Bytes from a pipe, a here-doc or a here-string; `text` when they are known literally. */
  | { kind: 'data'; text: string | null; taint: Taint[]; from: string; workspacePaths?: boolean };

/** How text handed to `Judge.script` runs relative to the shell that hands it over. */
export type ScriptMode =
  /** In a child shell (sh -c, find -exec sh -c): what it changes stays there. */
  | 'subshell'
  /** In this very shell (eval, source, an alias): its cd, variables and functions carry on. */
  | 'current'
  /** In this shell, at a time nobody knows (trap handlers). */
  | 'later';

export interface ScriptEffect {
  /** The text changed the current directory of the shell it ran in. */
  changedDirectory: boolean;
}

/** The walker's side of a command judgement: recursion and state. */
export interface Judge {
  paths(): PathContext;
  /**
   * Parses and judges shell text that will run (sh -c, eval, trap, alias values); `positional`
   * gives $1… (sh -c 'code' argv0 args); without it they keep the caller's meaning.
   */
  script(text: string, how: string, positional?: (string | Value)[], mode?: ScriptMode, zero?: string | Value): ScriptEffect;
  /**
   * Judges a command given as words (wrappers: env, timeout, xargs, find -exec, sudo). `inShell`
   * when this shell runs it as a builtin (`command cd`), not as a program of that name.
   */
  argv(words: Word[], text: string, stdin: Stdin, inShell?: boolean): Outcome;
  /** Paths written by network downloads earlier in this command line. */
  downloaded: Set<string>;
  /** Files written earlier on this line with known text (echo … > x.sh), by absolute path. */
  written: Map<string, string>;
  /** Lines this command line added to the shell's history (`history -s`), most recent last. */
  history: string[];
  /** The current directory (null when unknown). */
  readonly cwd: string | null;
  /**
   * Sets the current directory for the commands after this one (null = unknown), and OLDPWD.
   * `mayFail`: a cd to a directory that may not exist, so the old one stays possible.
   */
  chdir(dir: string | null, mayFail?: boolean): void;
  /** Directories pushd saved on this line, most recent last; handlers push and pop in place. */
  readonly dirStack: (string | null)[];
  /** A variable's value as the command sees it (its own `NAME=value` prefixes first). */
  variable(name: string): Value | string;
  /**
   * Sets a variable of this shell (read, printf -v, mapfile …), following namerefs; returns
   * what the assignment itself means (PATH, LD_PRELOAD, IFS …) as findings for the caller.
   */
  assign(name: string, value: Word): Finding[];
  /** True when IFS was changed, so unquoted expansions split unpredictably. */
  ifsChanged: boolean;
  /** `set -e` is on: a failing command ends the script. */
  errexit: boolean;
  /** $1… of this shell: `set -- a b` replaces them, `shift` drops the first ('unknown' when not known). */
  positional: (string | Value)[] | 'unknown';
  /** Records `alias name=value` for the commands after this one. */
  alias(name: string, value: string): void;
}

export interface Outcome {
  findings: Finding[];
  /** The command as matched by rules: program base name, then arguments. */
  argv: string[];
  /** What its standard output carries. */
  outputTaint: Taint[];
  /** Its standard output when known literally (echo, printf of literal text). */
  outputText: string | null;
  /** True when the output is a list of workspace paths (find ., git ls-files). */
  outputsWorkspacePaths: boolean;
  /** A transparent wrapper (env, timeout, nice …): only the inner command is reported. */
  transparent: boolean;
}

/** Per-command working state for a classifier. */
export class Cmd {
  readonly findings: Finding[] = [];
  outputTaint: Taint[] = [];
  outputText: string | null = null;
  outputsWorkspacePaths = false;
  transparent = false;
  /** Literal argument values (null where unknown). */
  readonly vals: (string | null)[];

  constructor(
    readonly prog: string,
    readonly args: Word[],
    readonly text: string,
    readonly stdin: Stdin,
    readonly judge: Judge,
    /** Run by the shell itself, so a builtin of this name changes the shell (cd, read …). */
    readonly inShell = true,
  ) {
    this.vals = args.map((a) => literal(a));
  }

  add(categories: Category[], why: string): void {
    this.findings.push({ categories, why });
  }

  has(...cats: Category[]): boolean {
    return this.findings.some((f) => f.categories.some((c) => cats.includes(c)));
  }

  /** Judges a path argument; writing inside the workspace counts as mutating. */
  path(w: Word, use: PathUse, verb = use === 'write' ? 'writes' : use === 'exec' ? 'runs' : 'reads'): PathVerdict {
    const v = judgePath(w, this.judge.paths());
    const f = pathFinding(v, use);
    if (f) this.add(f.categories, f.why);
    else if (use === 'write' && (v.cls === 'inside' || v.cls === 'git_control')) this.add(['mutating'], `${verb} ${display(w)}`);
    return v;
  }

  /** Judges an argument that may be a path (unknown programs): only what could leave the workspace. */
  maybePath(w: Word, use: PathUse): void {
    const s = literal(w);
    if (s !== null) {
      if (looksRemote(s)) return;
      for (const cand of pathCandidates(s)) this.path(litWord(cand, false), use);
      return;
    }
    if (w.segs[0]?.t === 'lit' && w.segs[0].s.startsWith('-') && !w.segs[0].s.includes('=')) return;
    const v = judgePath(w, this.judge.paths());
    const f = pathFinding(v, use);
    if (f) this.add(f.categories, f.why);
  }

  script(text: string, how: string, positional?: (string | Value)[], mode: ScriptMode = 'subshell', zero?: string | Value): ScriptEffect {
    return this.judge.script(text, how, positional, mode, zero);
  }

  /**
   * An argument the tool runs as a command (`sort --compress-program=PROG`, `tar --to-command=CMD`,
   * `rsync -e CMD`, `git difftool -x CMD`): the tool runs code, and the command is judged as if
   * typed here, so what would be denied stays denied. A computed command could be anything.
   */
  runs(w: Word, how: string): void {
    this.add(['code_execution'], `${how} runs ${display(w)}`);
    const text = this.codeText(w, how);
    if (text !== null && text.trim() !== '') this.script(text, how);
  }

  /** The literal text of a word that will run as code, or null (with a finding) when it is computed. */
  codeText(w: Word, how: string): string | null {
    const text = literal(w);
    if (text !== null) return text;
    const taint = new Set<Taint>();
    for (const s of w.segs) if (s.t === 'val' && (s.v.kind === 'unknown' || s.v.kind === 'procsub')) for (const t of s.v.taint) taint.add(t);
    if (taint.size > 0) this.add(['opaque_code'], `${how} runs downloaded or decoded text (${w.raw})`);
    else this.add(['obfuscation'], `${how} runs text computed at run time (${w.raw}), which could be anything`);
    return null;
  }

  /** A filter with no file operands: its output is its input, and keeps the pipe's taint. */
  passesInput(): void {
    if (this.stdin.kind === 'data') this.outputTaint = this.stdin.taint;
  }

  /**
   * Judges the arguments of a program the policy knows little about (a build tool, an unknown
   * program): output options (`-o FILE`, `-oFILE`, `--output=FILE`, `--outdir DIR`, `--log-file F`)
   * write their file, anything else that looks like a path is read.
   */
  argumentPaths(): void {
    for (let at = 0; at < this.args.length; at++) {
      const word = this.args[at]!;
      const start = literalPrefix(word);
      const name = /^--?([A-Za-z][\w-]*)(=|$)/.exec(start);
      if (name && OUTPUT_OPTION.test(name[1]!)) {
        const value = name[2] === '=' ? dropPrefix(word, name[0].length) : literal(word) !== null ? this.args[++at] : undefined;
        if (value) this.path(value, 'write');
        continue;
      }
      if (/^-o[^-]/.test(start) || (start === '-o' && literal(word) === null)) {
        this.path(dropPrefix(word, 2), 'write');
        continue;
      }
      this.maybePath(word, 'read');
    }
  }

  /** The builtin sets these variables from input nobody can know (`read X`, `printf -v X`). */
  assignsUnknown(names: Word[], what: string): void {
    for (const word of names) {
      const name = literal(word);
      if (name === null) {
        this.add(['unknown'], `${what} sets a variable whose name is computed (${word.raw}), which could be PATH or HOME`);
        continue;
      }
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) continue;
      this.findings.push(...this.judge.assign(name, unknownWord(`$${name} (from ${what})`)));
    }
  }

  /**
   * Runs `words` as a nested command; its findings stay in its own part. The wrapper starts it
   * as a program, so a `cd` there changes nothing here, unless `inShell` (`command cd`).
   */
  nested(words: Word[], stdin: Stdin = this.stdin, inShell = false): Outcome {
    return this.judge.argv(words, words.map((w) => w.raw).join(' '), stdin, inShell);
  }

  outcome(): Outcome {
    return {
      findings: this.findings,
      argv: [this.prog, ...this.args.map((a) => display(a))],
      outputTaint: this.outputTaint,
      outputText: this.outputText,
      outputsWorkspacePaths: this.outputsWorkspacePaths,
      transparent: this.transparent,
    };
  }
}

/** Option names that, for most build tools and unknown programs, name a file or directory written. */
const OUTPUT_OPTION = new RegExp(
  '^(' +
    [
      'o', 'output', 'out', 'outfile', 'out-file', 'output-file', 'outdir', 'out-dir', 'output-dir', 'output-directory', 'log-file', 'logfile',
      'junitxml', 'junit-xml', 'basetemp', 'cache-dir', 'destdir', 'build-dir', 'target-dir', 'report-dir', 'output-path', 'dist-dir', 'emit-dir',
      'coverage-dir', 'reports-dir', 'prefix', 'install-dir', 'installdir', 'install-prefix', 'pack-destination',
    ].join('|') +
    ')$',
  'i',
);

/** A word whose value nobody knows (`what` says where it came from). */
export function unknownWord(what: string): Word {
  return { raw: what, segs: [{ t: 'val', v: { kind: 'unknown', taint: [], what }, q: true }] };
}

/**
 * The parts of one literal argument that may name a path: the argument itself, the value of
 * `--opt=value`, the tail of `-I/usr/include`, and `~`/`/`/`..` starts only.
 */
export function pathCandidates(s: string): string[] {
  let v = s;
  if (v.startsWith('-')) {
    const eq = v.indexOf('=');
    if (eq > 0) v = v.slice(eq + 1);
    else {
      const m = /^-[A-Za-z](\/.*|~.*)$/.exec(v);
      if (!m) return [];
      v = m[1]!;
    }
  }
  if (looksRemote(v)) return [];
  const out: string[] = [];
  for (const piece of v.split(':')) {
    if (piece.startsWith('/') || piece.startsWith('~') || /(^|\/)\.\.(\/|$)/.test(piece)) out.push(piece);
  }
  return out;
}

export interface ParsedOpts {
  /** Short flags seen (letters) and long flags (without value). */
  flags: Set<string>;
  /** Option values by option name (`-o` → 'o', `--output` → 'output'). */
  values: Map<string, Word[]>;
  operands: Word[];
}

/**
 * A getopt-like reading of arguments. `shortWithValue` lists letters that take a value,
 * `longWithValue` long names that do (`--name value` or `--name=value`). A word whose literal
 * start is an option is read as one even when the rest is computed: the value of
 * `--output=$HOME/x` or `-o$HOME/x` is `$HOME/x`, judged like any other path.
 */
export function parseOpts(args: Word[], shortWithValue = '', longWithValue: string[] = [], stopAtFirstOperand = false): ParsedOpts {
  const flags = new Set<string>();
  const values = new Map<string, Word[]>();
  const operands: Word[] = [];
  const put = (name: string, value: Word) => values.set(name, [...(values.get(name) ?? []), value]);
  for (let i = 0; i < args.length; i++) {
    const word = args[i]!;
    const whole = literal(word);
    const start = whole ?? literalPrefix(word);
    if (whole === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    const computedOption = whole === null && (start.startsWith('--') ? start.includes('=') : start.length > 1 && start.startsWith('-'));
    if ((whole === null && !computedOption) || !start.startsWith('-') || start === '-') {
      operands.push(word);
      if (stopAtFirstOperand) {
        operands.push(...args.slice(i + 1));
        break;
      }
      continue;
    }
    if (start.startsWith('--')) {
      const eq = start.indexOf('=');
      const name = eq > 0 ? start.slice(2, eq) : start.slice(2);
      if (eq > 0) put(name, dropPrefix(word, eq + 1));
      else if (longWithValue.includes(name) && i + 1 < args.length) put(name, args[++i]!);
      else flags.add(name);
      continue;
    }
    let valueTaken = false;
    for (let k = 1; k < start.length; k++) {
      const letter = start[k]!;
      if (shortWithValue.includes(letter)) {
        if (k + 1 < start.length || whole === null) put(letter, dropPrefix(word, k + 1));
        else if (i + 1 < args.length) put(letter, args[++i]!);
        valueTaken = true;
        break;
      }
      flags.add(letter);
    }
    // `-x$VAR` with no value-taking letter before the computed part: the rest could be anything.
    if (whole === null && !valueTaken) operands.push(dropPrefix(word, start.length));
  }
  return { flags, values, operands };
}

export function lits(ws: Word[]): (string | null)[] {
  return ws.map((w) => literal(w));
}
