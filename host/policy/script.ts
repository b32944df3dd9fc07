/**
 * Walks a shell syntax tree and judges every simple command in it (pipelines, lists, subshells,
 * substitutions, here-docs, functions, loops), following what one command tells the next: the
 * current directory, variables, aliases, functions, what a pipe carries, what was downloaded.
 */
import { classifyCommand } from './classify';
import { Cmd, type Finding, type Judge, type Outcome, type ScriptEffect, type ScriptMode, type Stdin } from './command';
import { judgeAssignment } from './envVars';
import { PRINTS_ENVIRONMENT } from './handlers/secrets';
import { forEachNode, MAX_NESTING, MAX_PARTS, MAX_SHELL_DEPTH, MAX_TEXT, nestedDeeperThan } from './limits';
import type { BashParser, SyntaxNode } from './parse';
import { judgePath, type PathContext } from './paths';
import { judgeRedirects, REDIRECT_TYPES } from './redirects';
import { roughCommands } from './roughRead';
import { adoptScope, copyScope, endlessLoop, type FunctionInfo, resolveName, type Scope, spawnsUnwaited, spawnsWithoutBound } from './shellState';
import { evalWord, literal, litWord, splitFields, type Taint, type Value, type Word, type WordScope } from './words';

/** One judged piece before rules give it an action. */
export interface RawPart {
  command: string;
  argv: string[];
  findings: Finding[];
}

export interface WalkContext {
  mountpoint: string;
  cwd: string;
  home?: string;
}

/** Directories a failed cd may have left the shell in, before the policy calls it unknown. */
const MAX_OTHER_CWDS = 8;

/** How much of an over-long text the plain reading still looks at. */
const MAX_ROUGH_TEXT = 4 * MAX_TEXT;

const NUMERIC_VARS = new Set([
  '#', '?', '$', '!', '-', 'RANDOM', 'LINENO', 'SECONDS', 'BASHPID', 'PPID', 'UID', 'EUID', 'COLUMNS', 'LINES', 'SHLVL', 'EPOCHSECONDS', 'SRANDOM',
]);
/** Builtins for which an `IFS=…` prefix is the ordinary way to split their input. */
const IFS_READERS = new Set(['read', 'mapfile', 'readarray']);
const INHERIT: Stdin = { kind: 'inherit' };

function unknownValue(what: string): Value {
  return { kind: 'unknown', taint: [], what };
}

/** The value a variable takes from a word: its text when literal, a lone expansion's value, or unknown. */
function valueOf(name: string, value: Word): Value | string {
  const text = literal(value);
  if (text !== null) return text;
  const first = value.segs[0];
  return value.segs.length === 1 && first?.t === 'val' ? first.v : unknownValue(value.raw || '$' + name);
}

/** Nodes whose text bash evaluates as arithmetic. */
const ARITHMETIC_NODES = new Set(['arithmetic_expansion', 'c_style_for_statement', 'subscript']);

export class ScriptWalker {
  readonly parts: RawPart[] = [];
  private readonly downloaded = new Set<string>();
  private readonly written = new Map<string, string>();
  /** Lines added to the shell's history on this line (`history -s TEXT`), which `fc` runs again. */
  private readonly history: string[] = [];
  /** Output taints of commands inside the substitution being judged. */
  private capture: Set<Taint>[] = [];
  /** How many new processes deep the walk is (pipes, subshells, substitutions, `&`). */
  private spawnDepth = 0;
  /** Function bodies being walked, innermost last: the calls each makes. */
  private defining: { calls: Map<string, boolean>; spawnDepth: number }[] = [];

  constructor(
    private readonly parser: BashParser,
    private readonly ctx: WalkContext,
  ) {}

  rootScope(): Scope {
    return {
      cwd: this.ctx.cwd,
      otherCwds: [],
      errexit: false,
      dirStack: [],
      vars: new Map(),
      namerefs: new Map(),
      positional: [],
      aliases: new Map(),
      functions: new Map(),
      ifsChanged: false,
      depth: 0,
    };
  }

  walkText(text: string, scope: Scope, how: string): Outcome | undefined {
    if (scope.depth > MAX_SHELL_DEPTH) {
      this.addPart(text, [], [{ categories: ['unknown'], why: `${how} nests shells deeper than ${MAX_SHELL_DEPTH} levels` }]);
      return undefined;
    }
    if (text.length > MAX_TEXT) {
      this.addPart(text.slice(0, 200) + '…', [], [
          { categories: ['unknown'], why: `the command is longer than ${MAX_TEXT} characters, more than the policy reads` }]);
      this.roughReading(text.slice(0, MAX_ROUGH_TEXT), scope);
      return undefined;
    }
    return this.parser.parse(text, (root) => {
      if (nestedDeeperThan(root, MAX_NESTING)) {
        this.addPart(text.slice(0, 200), [], [
            { categories: ['unknown'], why:
                `${how === 'command' ? 'the command' : how} nests deeper than ${MAX_NESTING} levels, more than the policy reads` }]);
        this.roughReading(text, scope);
        return undefined;
      }
      if (root.hasError) this.parseFailure(root, text, scope, how);
      return this.walk(root, scope, INHERIT);
    });
  }

  walkArgv(argv: string[], scope: Scope): void {
    const words = argv.map((a) => litWord(a));
    this.judgeWords(words, argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' '), INHERIT, scope, []);
  }

  /** Records an `unknown` part: the walk could not finish (a bug, or a limit nobody foresaw). */
  unfinished(text: string, error: unknown): void {
    const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    this.parts.push({ command: text.slice(0, 200), argv: [], findings:
        [{ categories: ['unknown'], why: `the policy could not finish reading the command (${message.slice(0, 200)})` }] });
  }

  private addPart(command: string, argv: string[], findings: Finding[]): void {
    if (this.parts.length >= MAX_PARTS) {
      const last = this.parts[this.parts.length - 1];
      if (last && last.argv.length === 0 && last.command === '…') last.findings.push(...findings);
      else this.parts.push({ command: '…', argv: [], findings: [{ categories: ['unknown'], why: `more than ${MAX_PARTS} commands` }, ...findings] });
      return;
    }
    this.parts.push({ command: command.trim(), argv, findings });
  }

  /** The parser could not read all of it: never allow, and judge the text a second way. */
  private parseFailure(root: SyntaxNode, text: string, scope: Scope, how: string): void {
    const bad: string[] = [];
    forEachNode(root, (node) => {
      if ((node.type === 'ERROR' || node.isMissing) && bad.length === 0) bad.push(node.text || `missing ${node.type}`);
    });
    this.addPart(text, [], [
        { categories: ['unknown'], why:
            `${how === 'command' ? 'the command' : how} does not parse as shell${bad[0] ? ` near ${JSON.stringify(bad[0].slice(0, 40))}` : ''}` }]);
    this.roughReading(text, scope);
  }

  /** A plain reading of the words, so that a parse error or a limit never hides a denied command. */
  private roughReading(text: string, scope: Scope): void {
    for (const words of roughCommands(text)) this.judgeWords(words, words.map((w) => w.raw).join(' '), INHERIT, copyScope(scope), []);
  }

  private judge(scope: Scope, prefixVars?: Map<string, Value | string>): Judge {
    return {
      paths: () => this.paths(scope),
      script: (text, how, positional, mode, zero) => this.runScript(text, scope, how, positional, mode, zero),
      argv: (words, text, stdin, inShell = false) => this.judgeWords(words, text, stdin, scope, [], inShell),
      downloaded: this.downloaded,
      written: this.written,
      history: this.history,
      get cwd() {
        return scope.cwd;
      },
      chdir: (dir, mayFail) => this.chdir(scope, dir, mayFail),
      get dirStack() {
        return scope.dirStack;
      },
      variable: (name) => prefixVars?.get(name) ?? this.lookup(name, scope),
      assign: (name, value) => this.assignVariable(scope, name, value, ''),
      get ifsChanged() {
        return scope.ifsChanged;
      },
      get errexit() {
        return scope.errexit;
      },
      set errexit(on: boolean) {
        scope.errexit = on;
      },
      get positional() {
        return scope.positional;
      },
      set positional(values) {
        scope.positional = values;
      },
      alias: (name, value) => {
        scope.aliases.set(name, value);
      },
    };
  }

  private runScript(text: string, scope: Scope, how: string, positional: (string | Value)[] | undefined, mode: ScriptMode = 'subshell',
      zero?: string | Value): ScriptEffect {
    const inner = copyScope(scope, { depth: scope.depth + 1, ...(positional ? { positional } : {}), ...(zero !== undefined ? { zero } : {}) });
    this.walkText(text, inner, how);
    const changedDirectory = inner.cwd !== scope.cwd;
    if (mode === 'current') adoptScope(scope, inner);
    if (mode === 'later') {
      // Text run at moments nobody knows (`trap 'x=/etc' DEBUG` runs before each command): what
      // it assigns has an unknown value from now on, in this shell.
      for (const [name, value] of inner.vars) if (scope.vars.get(name) !== value) scope.vars.set(name, unknownValue('$' + name));
      if (inner.positional !== scope.positional) scope.positional = 'unknown';
      if (inner.ifsChanged) scope.ifsChanged = true;
    }
    return { changedDirectory };
  }

  private chdir(scope: Scope, dir: string | null, mayFail = false): void {
    const old = scope.cwd;
    scope.vars.set('OLDPWD', old ?? unknownValue('$OLDPWD'));
    scope.vars.delete('PWD');
    if (dir === null || old === null) {
      scope.cwd = null;
      scope.otherCwds = [];
      return;
    }
    // A cd that fails leaves the shell where it was, and the next command still runs.
    if (mayFail && !scope.errexit && old !== dir && !scope.otherCwds.includes(old)) scope.otherCwds.push(old);
    scope.otherCwds = scope.otherCwds.filter((other) => other !== dir);
    if (scope.otherCwds.length > MAX_OTHER_CWDS) {
      scope.cwd = null;
      scope.otherCwds = [];
      return;
    }
    scope.cwd = dir;
  }

  private paths(scope: Scope): PathContext {
    return { mountpoint: this.ctx.mountpoint, cwd: scope.cwd, otherCwds: scope.otherCwds, ...(this.ctx.home ? { home: this.ctx.home } : {}) };
  }

  private wordScope(scope: Scope): WordScope {
    return {
      lookup: (name) => this.lookup(name, scope),
      arithmetic: (text) => this.arithmetic(text, scope, 0),
      backticks: (text) => {
        for (const found of text.matchAll(/`((?:\\.|[^`\\])*)`/g)) {
          this.runScript(found[1]!.replace(/\\([`$\\])/g, '$1'), scope, 'a backtick substitution', undefined, 'subshell');
        }
      },
      substitute: (node) => this.substitute(node, scope),
      visit: (node) => {
        this.walk(node, scope, INHERIT);
      },
    };
  }

  private lookup(requested: string, scope: Scope): Value | string {
    const name = resolveName(scope, requested);
    if (name === null) return unknownValue('$' + requested);
    if (/^[1-9]$|^[@*]$/.test(name)) {
      if (scope.positional === 'unknown') return unknownValue('$' + name);
      if (name === '@' || name === '*') {
        const all = scope.positional;
        return all.every((p): p is string => typeof p === 'string') ? all.join(' ') : unknownValue('$' + name);
      }
      return scope.positional[Number(name) - 1] ?? '';
    }
    if (NUMERIC_VARS.has(name)) return '0';
    if (name === '0') return scope.zero ?? 'bash';
    const value = scope.vars.get(name);
    if (value !== undefined) return scope.ifsChanged && typeof value === 'string' ? unknownValue('$' + name) : value;
    switch (name) {
      case 'HOME':
        return { kind: 'home' };
      case 'PWD':
        return scope.cwd ?? unknownValue('$PWD');
      case 'TMPDIR':
      case 'TMP':
      case 'TEMP':
        return { kind: 'host', path: '/tmp' };
      case 'AVFS_MOUNTPOINT':
        return this.ctx.mountpoint;
      case 'USER':
      case 'LOGNAME':
        return 'user';
      case 'SHELL':
        return '/bin/bash';
      default:
        return unknownValue('$' + name);
    }
  }

  /**
   * Sets a variable of this shell (following namerefs) and judges what the new value does
   * (PATH, LD_PRELOAD, HOME …). Returns the findings; `text` names the part they go to.
   */
  private assignVariable(scope: Scope, name: string, value: Word, text: string): Finding[] {
    const judged = new Cmd('', [], text, INHERIT, this.judge(scope));
    const binding = scope.namerefs.get(name);
    if (binding === '') {
      // `declare -n ref; ref=NAME` binds the reference instead of assigning.
      const target = literal(value);
      scope.namerefs.set(name, target !== null && /^[A-Za-z_][A-Za-z0-9_]*$/.test(target) ? target : null);
      if (target === null) judged.add(['unknown'], `the nameref ${name} is bound to a computed name`);
      return judged.findings;
    }
    const target = resolveName(scope, name);
    if (target === null) {
      judged.add(['unknown'], `${name} is a nameref to a variable the policy cannot name, so the assignment could change anything (PATH, HOME …)`);
      return judged.findings;
    }
    scope.vars.set(target, valueOf(target, value));
    judgeAssignment(judged, target, value);
    if (target === 'IFS') {
      scope.ifsChanged = true;
      judged.add(['unknown'], 'IFS is changed, so every later unquoted expansion splits in ways the policy does not follow');
    }
    return judged.findings;
  }

  private substitute(node: SyntaxNode, scope: Scope): Value {
    const inner = node.namedChildren.filter((c): c is SyntaxNode => !!c);
    const text = inner.map((c) => c.text).join(' ').trim();
    if (node.type === 'command_substitution' && /^(pwd|echo "?\$PWD"?)$/.test(text) && scope.cwd) {
      return { kind: 'workspace' };
    }
    const taint = new Set<Taint>();
    this.capture.push(taint);
    let last: Outcome | undefined;
    try {
      const sub = copyScope(scope);
      this.spawnDepth++;
      for (const c of inner) last = this.walk(c, sub, INHERIT) ?? last;
    } finally {
      this.spawnDepth--;
      this.capture.pop();
    }
    if (node.type === 'process_substitution') return { kind: 'procsub', taint: [...taint], text: last?.outputText ?? null, from: text };
    if (last?.outputsWorkspacePaths && taint.size === 0) return { kind: 'workspace' };
    return { kind: 'unknown', taint: [...taint], what: node.text };
  }

  /**
   * Text bash evaluates as arithmetic (`$(( ))`, `(( ))`, `let`, `[[ … -gt … ]]`, `declare -i`, a
   * C-style for, an array subscript, `${s:offset}`): each variable named in it is evaluated in turn,
   * and an array subscript in its value is expanded, command substitutions included:
   * `x='a[$(cmd)]'; echo $((x))` runs cmd. Such values are judged as the text they run.
   */
  private arithmetic(text: string, scope: Scope, depth: number): void {
    if (depth > 4) return;
    for (const found of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
      const name = resolveName(scope, found[0]) ?? found[0];
      const value = scope.vars.get(name);
      if (typeof value !== 'string' || value === text) continue;
      if (/\[[^\]]*(\$\(|`)/.test(value) || /\$\(|`/.test(value) && /\[/.test(value)) {
        this.runScript(`: ${value}`, scope, `the value of ${name}, evaluated as arithmetic`, undefined, 'subshell');
      } else if (/[A-Za-z_]/.test(value)) this.arithmetic(value, scope, depth + 1);
    }
  }

  /** Walks `node` as a new process (a subshell, a pipe element, a background job). */
  private inNewProcess<T>(walk: () => T): T {
    this.spawnDepth++;
    try {
      return walk();
    } finally {
      this.spawnDepth--;
    }
  }

  /** Walks any node; returns the outcome of the last command run (for pipes and substitutions). */
  walk(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    if (ARITHMETIC_NODES.has(node.type) || (node.type === 'compound_statement' && node.text.startsWith('((')) || (node.type === 'test_command' && /\s-(eq|ne|lt|le|gt|ge)\s/.test(node.text)) ||
        (node.type === 'declaration_command' && /\s-[A-Za-z]*i/.test(node.text)) ||
        (node.type === 'command' && /^\s*(let|printf\s+-v\s+\S*\[)/.test(node.text))) {
      this.arithmetic(node.text, scope, 0);
    }
    switch (node.type) {
      case 'comment':
        return undefined;
      case 'command':
        return this.command(node, [], scope, stdin, node.text);
      case 'command_name': {
        // Only seen alone inside parse errors.
        const word = evalWord(node.namedChildren[0] ?? node, this.wordScope(scope));
        return this.judgeWords([word], node.text, stdin, scope, []);
      }
      case 'redirected_statement':
        return this.redirected(node, scope, stdin);
      case 'pipeline':
        return this.pipeline(node, scope, stdin);
      case 'subshell':
        return this.inNewProcess(() => this.children(node, copyScope(scope), stdin));
      case 'variable_assignment':
        this.assignment(node, scope, true);
        return undefined;
      case 'variable_assignments':
        for (const c of node.namedChildren) if (c) this.assignment(c, scope, true);
        return undefined;
      case 'declaration_command':
        this.declaration(node, scope, stdin);
        return undefined;
      case 'unset_command': {
        const functions = node.namedChildren.some((c) => c?.type === 'word' && /^-\w*f/.test(c.text));
        for (const c of node.namedChildren) {
          if (!c || c.type === 'word' && c.text.startsWith('-')) continue;
          if (functions) scope.functions.delete(c.text);
          else {
            // An unset variable expands to nothing, not to what the policy assumes of it before the
            // line (`unset PWD; cat $PWD/x` reads /x); a computed name could be any of them.
            const name = literal(evalWord(c, this.wordScope(scope)));
            if (name === null) {
              this.addPart(node.text, [], [{ categories: ['unknown'], why: `unset of a computed name (${c.text}), which could be PWD or HOME` }]);
              continue;
            }
            scope.vars.set(resolveName(scope, name) ?? name, '');
            scope.namerefs.delete(name);
          }
        }
        return undefined;
      }
      case 'function_definition':
        this.defineFunction(node, scope);
        return undefined;
      case 'for_statement':
        return this.forLoop(node, scope, stdin);
      case 'while_statement':
      case 'until_statement':
      case 'c_style_for_statement': {
        const body = node.childForFieldName('body');
        if (endlessLoop(node) && body && spawnsUnwaited(body)) {
          this.addPart(node.text.slice(0, 200), [], [
              { categories: ['resource_exhaustion'], why: 'an endless loop starts background processes without waiting for them' }]);
        }
        return this.children(node, scope, stdin);
      }
      case 'command_substitution':
      case 'process_substitution':
        this.substitute(node, scope);
        return undefined;
      case 'list':
        return this.list(node, scope, stdin);
      case 'if_statement':
        return this.ifStatement(node, scope, stdin);
      default:
        return this.children(node, scope, stdin);
    }
  }

  /**
   * `a && b`: b runs only when a succeeded, so a `cd` in a did not fail there; `a || exit`: after
   * the list, a succeeded. What a may have left otherwise stays possible after the list.
   */
  private list(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    const [left, right] = node.namedChildren;
    const operator = node.children.find((c) => c && !c.isNamed)?.type;
    if (!left || !right || (operator !== '&&' && operator !== '||')) return this.children(node, scope, stdin);
    const known = scope.otherCwds.length;
    this.walk(left, scope, stdin);
    if (operator === '&&') {
      const maybe = scope.otherCwds.splice(known);
      const out = this.walk(right, scope, stdin);
      if (scope.cwd !== null) scope.otherCwds.push(...maybe.filter((dir) => dir !== scope.cwd && !scope.otherCwds.includes(dir)));
      return out;
    }
    const out = this.walk(right, scope, stdin);
    if (/^(exit|return)\b/.test(right.text.trim())) scope.otherCwds.splice(known);
    return out;
  }

  /** `if cd dir; then …`: the then-branch runs in dir. */
  private ifStatement(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    let last: Outcome | undefined;
    let known = scope.otherCwds.length;
    let inCondition = true;
    for (let at = 0; at < node.childCount; at++) {
      const child = node.child(at);
      if (!child) continue;
      if (child.type === 'then') {
        scope.otherCwds.splice(known);
        inCondition = false;
      }
      if (!child.isNamed) continue;
      if (inCondition && node.fieldNameForChild(at) === 'condition') known = Math.min(known, scope.otherCwds.length);
      last = this.walk(child, scope, stdin) ?? last;
    }
    return last;
  }

  private children(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    let last: Outcome | undefined;
    for (const child of node.namedChildren) {
      if (!child) continue;
      // `cmd &` runs in a background subshell: what it changes stays there.
      if (child.nextSibling?.type === '&') {
        this.inNewProcess(() => this.walk(child, copyScope(scope), stdin));
        continue;
      }
      last = this.walk(child, scope, stdin) ?? last;
    }
    return last;
  }

  private defineFunction(node: SyntaxNode, scope: Scope): void {
    const name = node.childForFieldName('name')?.text;
    const info: FunctionInfo = { calls: new Map(), changesDirectory: false };
    if (name) scope.functions.set(name, info);
    const body = node.childForFieldName('body');
    if (!body) return;
    // `f(){ …; } > /etc/x` redirects every call of f: judged once, here, like a compound's redirects.
    const redirects = node.namedChildren.filter((c): c is SyntaxNode => !!c && REDIRECT_TYPES.has(c.type));
    if (redirects.length > 0) {
      const r = judgeRedirects(redirects, this.wordScope(scope), this.paths(scope));
      if (r.findings.length > 0) this.addPart(node.text.slice(0, 200), ['(redirect)'], r.findings);
    }
    const inner = copyScope(scope, { positional: 'unknown' });
    this.defining.push({ calls: info.calls, spawnDepth: this.spawnDepth });
    try {
      this.walk(body, inner, INHERIT);
    } finally {
      this.defining.pop();
    }
    info.changesDirectory = inner.cwd !== scope.cwd;
  }

  /** Notes, for the function being defined, that its body runs `name` (and whether in a new process). */
  private recordCall(name: string): void {
    const current = this.defining[this.defining.length - 1];
    if (!current) return;
    current.calls.set(name, (current.calls.get(name) ?? false) || this.spawnDepth > current.spawnDepth);
  }

  /** Calling `name` reaches a function that keeps starting copies of itself. */
  private forkBomb(scope: Scope, name: string): string | null {
    const reachable = [name];
    const seen = new Set(reachable);
    for (let i = 0; i < reachable.length; i++) {
      const current = reachable[i]!;
      if (spawnsWithoutBound(scope.functions, current)) return current;
      for (const callee of scope.functions.get(current)?.calls.keys() ?? []) {
        if (!seen.has(callee) && scope.functions.has(callee)) {
          seen.add(callee);
          reachable.push(callee);
        }
      }
    }
    return null;
  }

  private declaration(node: SyntaxNode, scope: Scope, stdin: Stdin): void {
    const keyword = node.child(0)?.type ?? 'declare';
    // `export`, `export -p`, `declare -x`, `declare -p`, `typeset -px` with no names print variables (the environment).
    const names = node.namedChildren.filter((c) => c && !(c.type === 'word' && /^[-+][A-Za-z]*$/.test(c.text)));
    const flags = node.namedChildren.filter((c) => c?.type === 'word' && /^-[A-Za-z]*$/.test(c.text)).map((c) => c!.text).join('');
    if (names.length === 0 && (keyword === 'export' || keyword === 'declare' || keyword === 'typeset') && (flags === '' || /[px]/.test(flags))) {
      this.addPart(node.text, [keyword], [{ categories: ['host_escape'], why: `${keyword}${flags ? ' ' + flags : ''} ${PRINTS_ENVIRONMENT}` }]);
      return;
    }
    // `declare -n`, `typeset -n`, `local -n`: a nameref (for export, -n removes the export flag).
    const nameref = keyword !== 'export' && node.namedChildren.some((c) => c?.type === 'word' && /^-[A-Za-z]*n/.test(c.text));
    for (const child of node.namedChildren) {
      if (!child) continue;
      if (child.type === 'variable_assignment') {
        if (nameref) this.declareNameref(child, scope);
        else this.assignment(child, scope, true);
      } else if (child.type === 'variable_name') {
        if (nameref) scope.namerefs.set(child.text, '');
      } else if (child.type === 'word' || child.type === 'string' || child.type === 'raw_string' || child.type === 'concatenation' ||
          child.type === 'simple_expansion' || child.type === 'expansion') {
        this.declarationWord(child, scope, keyword);
      } else this.walk(child, scope, stdin);
    }
  }

  /** A word after declare/export that is not a plain name: an option, or an assignment bash reads from a string. */
  private declarationWord(node: SyntaxNode, scope: Scope, keyword: string): void {
    const word = evalWord(node, this.wordScope(scope));
    const text = literal(word);
    if (text !== null && /^[-+]/.test(text)) return;
    if (text !== null && /^[A-Za-z_][A-Za-z0-9_]*$/.test(text)) return;
    const assign = text === null ? null : /^([A-Za-z_][A-Za-z0-9_]*|BASH_FUNC_[^=]+)=/.exec(text);
    if (assign) {
      const findings = this.assignVariable(scope, assign[1]!, litWord(text!.slice(assign[0].length)), node.text);
      if (findings.length > 0) this.addPart(node.text, [keyword, text!], findings);
      return;
    }
    this.addPart(node.text, [keyword, word.raw], [
        { categories: ['unknown'], why: `${keyword} sets a variable whose name is computed (${word.raw}), which could be PATH or HOME` }]);
  }

  private declareNameref(node: SyntaxNode, scope: Scope): void {
    const name = node.childForFieldName('name')?.text;
    const valueNode = node.childForFieldName('value');
    if (!name) return;
    const target = valueNode ? literal(evalWord(valueNode, this.wordScope(scope))) : '';
    if (target !== null && (target === '' || /^[A-Za-z_][A-Za-z0-9_]*$/.test(target))) scope.namerefs.set(name, target);
    else {
      scope.namerefs.set(name, null);
      this.addPart(node.text, [], [{ categories: ['unknown'], why: `the nameref ${name} points at a computed name` }]);
    }
  }

  private forLoop(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    const variable = node.childForFieldName('variable')?.text;
    const values: Word[] = [];
    for (let i = 0; i < node.childCount; i++) {
      if (node.fieldNameForChild(i) === 'value') {
        const c = node.child(i);
        if (c) values.push(...splitFields(evalWord(c, this.wordScope(scope))));
      }
    }
    if (variable) {
      // The loop assigns each value in turn: `for PATH in /tmp` is an assignment to PATH.
      const findings = values.flatMap((w) => this.assignVariable(copyScope(scope), variable, w, node.text));
      if (findings.some((f) => !f.categories.every((c) => c === 'read_only'))) this.addPart(`for ${variable} in …`, [], findings);
      const allInside = values.length > 0 && values.every((w) => literal(w) !== null && judgePath(w, this.paths(scope)).cls === 'inside');
      const allLiteral = values.every((w) => literal(w) !== null && !/[/~.]/.test(literal(w)!));
      const target = resolveName(scope, variable) ?? variable;
      // Plain names (no `/`, `.` or `~`, no glob) keep paths built from them where they are.
      const names = values.length > 0 && values.every((w) => { const v = literal(w); return v !== null && /^[\w@%+=:,-]+$/.test(v); });
      scope.vars.set(target, names ? { kind: 'workspace', name: true } : allInside || (allLiteral && values.length > 0) ? { kind: 'workspace' } : unknownValue('$' + variable));
    }
    const body = node.childForFieldName('body');
    return body ? this.walk(body, scope, stdin) : undefined;
  }

  /** `NAME=value`, alone (it stays for the rest of the line) or before a command (only for it). */
  private assignment(node: SyntaxNode, scope: Scope, standalone: boolean): { name: string; value: Word; findings: Finding[] } | null {
    const nameNode = node.childForFieldName('name');
    const valueNode = node.childForFieldName('value');
    const name = nameNode?.type === 'variable_name' ? nameNode.text : null;
    if (nameNode && nameNode.type !== 'variable_name') this.walk(nameNode, scope, INHERIT);
    const value = valueNode ? evalWord(valueNode, this.wordScope(scope)) : litWord('');
    if (!name) return null;
    if (standalone) {
      const findings = this.assignVariable(scope, name, value, node.text);
      if (findings.length > 0) this.addPart(node.text, [`${name}=${value.raw}`], findings);
      return { name, value, findings };
    }
    const judged = new Cmd('', [], node.text, INHERIT, this.judge(scope));
    const target = resolveName(scope, name);
    if (target === null) judged.add(['unknown'], `${name} is a nameref to a variable the policy cannot name`);
    else judgeAssignment(judged, target, value);
    return { name: target ?? name, value, findings: judged.findings };
  }

  private pipeline(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    let input: Stdin = stdin;
    let last: Outcome | undefined;
    const taintSoFar = new Set<Taint>(stdin.kind === 'data' ? stdin.taint : []);
    for (const c of node.namedChildren) {
      if (!c) continue;
      last = this.inNewProcess(() => this.walk(c, copyScope(scope), input));
      // Bytes keep their taint through every filter downstream.
      for (const t of last?.outputTaint ?? []) taintSoFar.add(t);
      input = {
        kind: 'data',
        text: last?.outputText ?? null,
        taint: [...taintSoFar],
        from: last ? (last.argv[0] ?? 'a command') : 'a command',
        workspacePaths: !!last?.outputsWorkspacePaths,
      };
    }
    return last;
  }

  private redirected(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    const body = node.childForFieldName('body');
    const redirects: SyntaxNode[] = [];
    for (let i = 0; i < node.childCount; i++) {
      const c = node.child(i);
      if (c && REDIRECT_TYPES.has(c.type)) redirects.push(c);
    }
    if (body?.type === 'command') return this.command(body, redirects, scope, stdin, node.text);
    // A compound statement with redirects: judge the redirects as their own part.
    const r = judgeRedirects(redirects, this.wordScope(scope), this.paths(scope));
    if (r.findings.length > 0) this.addPart(node.text.slice(0, 200), ['(redirect)'], r.findings);
    const out = body ? this.walk(body, scope, r.stdin ?? stdin) : undefined;
    // `echo … | base64 -d > job.sh`: the pipeline's output lands in the file, as for one command.
    this.remember(r.writes, out);
    return out;
  }

  /** Files a command's output was written to: downloaded or decoded bytes, or known text, or neither. */
  private remember(writes: { path: string; append: boolean }[], out: Outcome | undefined): void {
    for (const w of writes) {
      if (out && out.outputTaint.length > 0) this.downloaded.add(w.path);
      if (out && out.outputText !== null) this.written.set(w.path, (w.append ? (this.written.get(w.path) ?? '') : '') + out.outputText);
      else this.written.delete(w.path);
    }
  }

  private command(node: SyntaxNode, outer: SyntaxNode[], scope: Scope, stdin: Stdin, text: string): Outcome | undefined {
    const ws = this.wordScope(scope);
    const prefixFindings: Finding[] = [];
    const prefixVars = new Map<string, Value | string>();
    const words: Word[] = [];
    const redirects = [...outer];
    for (let i = 0; i < node.childCount; i++) {
      const child = node.child(i);
      if (!child) continue;
      const field = node.fieldNameForChild(i);
      if (child.type === 'variable_assignment') {
        const assigned = this.assignment(child, scope, false);
        if (assigned) {
          prefixFindings.push(...assigned.findings);
          prefixVars.set(assigned.name, valueOf(assigned.name, assigned.value));
        }
      } else if (REDIRECT_TYPES.has(child.type)) redirects.push(child);
      else if (field === 'name') words.push(...splitFields(evalWord(child.namedChildren[0] ?? child, ws)));
      else if (field === 'argument') words.push(...splitFields(evalWord(child, ws)));
      else if (child.isNamed && child.type !== 'comment') this.walk(child, scope, INHERIT);
    }
    const r = judgeRedirects(redirects, this.wordScope(scope), this.paths(scope));
    const name = words[0] ? literal(words[0]) : null;
    if (prefixVars.has('IFS') && !(name !== null && IFS_READERS.has(name))) {
      prefixFindings.push({ categories: ['unknown'], why:
          'IFS is changed for a command other than read, so its words split in ways the policy does not follow' });
    }
    const extra = [...prefixFindings, ...r.findings];
    if (words.length === 0) {
      if (extra.length > 0) this.addPart(text, [], extra);
      return undefined;
    }
    if (name !== null) this.recordCall(name);
    // An alias defined earlier on the line replaces the first word, in this very shell.
    const alias = name !== null ? scope.aliases.get(name) : undefined;
    if (alias !== undefined) {
      const inner = copyScope(scope, { depth: scope.depth + 1 });
      inner.aliases.delete(name!);
      const out = this.walkText(`${alias} ${words.slice(1).map((w) => w.raw).join(' ')}`, inner, `alias ${name}`);
      adoptScope(scope, inner);
      scope.aliases.set(name!, alias);
      if (extra.length > 0) this.addPart(text, [], extra);
      return out;
    }
    const fn = name !== null ? scope.functions.get(name) : undefined;
    if (fn) return this.callFunction(name!, fn, words, text, stdin, scope, extra);
    const out = this.judgeWords(words, text, r.stdin ?? stdin, scope, extra, true, prefixVars);
    // Downloaded or decoded bytes written to a file are opaque code when run; known text is judged as itself.
    this.remember(r.writes, out);
    return out;
  }

  private callFunction(name: string, fn: FunctionInfo, words: Word[], text: string, stdin: Stdin, scope: Scope, extra: Finding[]): Outcome {
    const call = new Cmd(name, words.slice(1), text, stdin, this.judge(scope));
    call.add(['read_only'], `calls the function ${name} (its body is judged where it is defined)`);
    for (const a of call.args) call.maybePath(a, 'read');
    // While a body is being defined its calls are only being recorded; the real call is judged.
    const bomb = this.defining.length === 0 ? this.forkBomb(scope, name) : null;
    if (bomb !== null) call.add(['resource_exhaustion'],
        `${bomb === name ? name : `${name} reaches ${bomb}, which`} starts copies of itself in new processes without end (a fork bomb)`);
    if (fn.changesDirectory) {
      this.chdir(scope, null);
      call.add(['unknown'], `the function ${name} changes the current directory, so where later paths lead is unknown`);
    }
    this.addPart(text, [name, ...words.slice(1).map((w) => w.raw)], [...call.findings, ...extra]);
    return call.outcome();
  }

  /** Classifies a command given as words and records its part. */
  judgeWords(words: Word[], text: string, stdin: Stdin, scope: Scope, extra: Finding[], inShell = true, prefixVars?: Map<string, Value | string>): Outcome {
    const out = classifyCommand(words, text, stdin, this.judge(scope, prefixVars), inShell);
    const findings = [...out.findings, ...extra];
    // A transparent wrapper (env, nice, xargs …) is reported only when it found something itself.
    if (!out.transparent || findings.length > 0) {
      this.addPart(text, out.argv, findings.length > 0 ? findings : [{ categories: ['mutating'], why: `runs ${out.argv[0] ?? 'a program'}` }]);
    }
    for (const cap of this.capture) for (const t of out.outputTaint) cap.add(t);
    return out;
  }
}
