/**
 * One simple command as the classifiers see it (program, argument words, stdin), the services
 * the script walker lends them (nested scripts, nested argv, paths), and what they conclude.
 */
import type { Category } from '../protocol/policy';
import { judgePath, looksRemote, pathFinding, type PathContext, type PathUse, type PathVerdict } from './paths';
import { display, literal, litWord, type Taint, type Value, type Word } from './words';

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

/** The walker's side of a command judgement: recursion and state. */
export interface Judge {
  paths(): PathContext;
  /**
   * Parses and judges shell text that will run (sh -c, eval, trap, alias values); `positional`
   * gives $1… (sh -c 'code' argv0 args); without it they keep the caller's meaning.
   */
  script(text: string, how: string, positional?: (string | Value)[]): void;
  /** Judges a command given as words (wrappers: env, timeout, xargs, find -exec, sudo). */
  argv(words: Word[], text: string, stdin: Stdin): Outcome;
  /** Paths written by network downloads earlier in this command line. */
  downloaded: Set<string>;
  /** Files written earlier on this line with known text (echo … > x.sh), by absolute path. */
  written: Map<string, string>;
  /** Sets the current directory for the commands after this one (null = unknown). */
  chdir(dir: string | null): void;
  /** True when IFS was changed, so unquoted expansions split unpredictably. */
  ifsChanged: boolean;
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

  script(text: string, how: string, positional?: (string | Value)[]): void {
    this.judge.script(text, how, positional);
  }

  /** Runs `words` as a nested command; its findings stay in its own part. */
  nested(words: Word[], stdin: Stdin = this.stdin): Outcome {
    return this.judge.argv(words, words.map((w) => w.raw).join(' '), stdin);
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
 * `longWithValue` long names that do (`--name value` or `--name=value`).
 */
export function parseOpts(args: Word[], shortWithValue = '', longWithValue: string[] = [], stopAtFirstOperand = false): ParsedOpts {
  const flags = new Set<string>();
  const values = new Map<string, Word[]>();
  const operands: Word[] = [];
  const put = (k: string, w: Word) => values.set(k, [...(values.get(k) ?? []), w]);
  for (let i = 0; i < args.length; i++) {
    const w = args[i]!;
    const s = literal(w);
    if (s === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (s === null || !s.startsWith('-') || s === '-') {
      operands.push(w);
      if (stopAtFirstOperand) {
        operands.push(...args.slice(i + 1));
        break;
      }
      continue;
    }
    if (s.startsWith('--')) {
      const eq = s.indexOf('=');
      const name = eq > 0 ? s.slice(2, eq) : s.slice(2);
      if (eq > 0) put(name, litWord(s.slice(eq + 1), false));
      else if (longWithValue.includes(name) && i + 1 < args.length) put(name, args[++i]!);
      else flags.add(name);
      continue;
    }
    for (let k = 1; k < s.length; k++) {
      const c = s[k]!;
      if (shortWithValue.includes(c)) {
        if (k + 1 < s.length) put(c, litWord(s.slice(k + 1), false));
        else if (i + 1 < args.length) put(c, args[++i]!);
        break;
      }
      flags.add(c);
    }
  }
  return { flags, values, operands };
}

export function lits(ws: Word[]): (string | null)[] {
  return ws.map((w) => literal(w));
}
