/**
 * Walks a shell syntax tree and judges every simple command in it (pipelines, lists, subshells,
 * substitutions, here-docs, functions, loops), following what one command tells the next: the
 * current directory, variables, aliases, what a pipe carries, what was downloaded.
 */
import { classifyCommand } from './classify';
import { Cmd, type Finding, type Judge, type Outcome, type Stdin } from './command';
import { judgeAssignment } from './envVars';
import type { BashParser, SyntaxNode } from './parse';
import { judgePath, type PathContext, pathFinding } from './paths';
import { evalWord, literal, litWord, type Taint, type Value, type Word, type WordScope } from './words';

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

const MAX_DEPTH = 8;
const MAX_TEXT = 64 * 1024;
const MAX_PARTS = 500;

interface Scope {
  cwd: string | null;
  vars: Map<string, Value | string>;
  /** $1… values; 'unknown' inside function bodies. */
  positional: (string | Value)[] | 'unknown';
  aliases: Map<string, string>;
  functions: Set<string>;
  ifsChanged: boolean;
  depth: number;
}

function copyScope(s: Scope, over: Partial<Scope> = {}): Scope {
  return { ...s, vars: new Map(s.vars), aliases: new Map(s.aliases), functions: new Set(s.functions), ...over };
}

const REDIRECT_TYPES = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);
const NUMERIC_VARS = new Set(['#', '?', '$', '!', '-', 'RANDOM', 'LINENO', 'SECONDS', 'BASHPID', 'PPID', 'UID', 'EUID', 'COLUMNS', 'LINES', 'SHLVL', 'EPOCHSECONDS', 'SRANDOM']);

export class ScriptWalker {
  readonly parts: RawPart[] = [];
  private readonly downloaded = new Set<string>();
  private readonly written = new Map<string, string>();
  /** Output taints of commands inside the substitution being judged. */
  private capture: Set<Taint>[] = [];

  constructor(
    private readonly parser: BashParser,
    private readonly ctx: WalkContext,
  ) {}

  rootScope(): Scope {
    return { cwd: this.ctx.cwd, vars: new Map(), positional: [], aliases: new Map(), functions: new Set(), ifsChanged: false, depth: 0 };
  }

  walkText(text: string, scope: Scope, how: string): Outcome | undefined {
    if (scope.depth > MAX_DEPTH) {
      this.addPart(text, [], [{ categories: ['unknown'], why: `${how} nests shells deeper than ${MAX_DEPTH} levels` }]);
      return undefined;
    }
    if (text.length > MAX_TEXT) {
      this.addPart(text.slice(0, 200) + '…', [], [{ categories: ['unknown'], why: `the command is longer than ${MAX_TEXT} characters` }]);
      return undefined;
    }
    return this.parser.parse(text, (root) => {
      if (root.hasError) this.parseFailure(root, text, scope, how);
      return this.walk(root, scope, { kind: 'inherit' });
    });
  }

  walkArgv(argv: string[], scope: Scope): void {
    const words = argv.map((a) => litWord(a));
    this.judgeWords(words, argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : JSON.stringify(a))).join(' '), { kind: 'inherit' }, scope, []);
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
    (function find(n: SyntaxNode) {
      if (n.type === 'ERROR' || n.isMissing) bad.push(n.text || `missing ${n.type}`);
      else if (n.hasError) for (const c of n.children) if (c) find(c);
    })(root);
    this.addPart(text, [], [{ categories: ['unknown'], why: `${how === 'command' ? 'the command' : how} does not parse as shell${bad[0] ? ` near ${JSON.stringify(bad[0].slice(0, 40))}` : ''}` }]);
    // A plain reading of the words, so that a parse error never hides a denied command.
    for (const seg of roughCommands(text)) this.judgeWords(seg, seg.map((w) => w.raw).join(' '), { kind: 'inherit' }, copyScope(scope), []);
  }

  private judge(scope: Scope): Judge {
    return {
      paths: () => this.paths(scope),
      script: (text, how, positional) => {
        this.walkText(text, copyScope(scope, { depth: scope.depth + 1, ...(positional ? { positional } : {}) }), how);
      },
      argv: (words, text, stdin) => this.judgeWords(words, text, stdin, scope, []),
      downloaded: this.downloaded,
      written: this.written,
      chdir: (dir) => {
        scope.cwd = dir;
      },
      get ifsChanged() {
        return scope.ifsChanged;
      },
      alias: (name, value) => {
        scope.aliases.set(name, value);
      },
    };
  }

  private paths(scope: Scope): PathContext {
    return { mountpoint: this.ctx.mountpoint, cwd: scope.cwd, ...(this.ctx.home ? { home: this.ctx.home } : {}) };
  }

  private wordScope(scope: Scope): WordScope {
    return {
      lookup: (name) => this.lookup(name, scope),
      substitute: (node) => this.substitute(node, scope),
      visit: (node) => {
        this.walk(node, scope, { kind: 'inherit' });
      },
    };
  }

  private lookup(name: string, scope: Scope): Value | string {
    if (/^[1-9]$|^[@*]$/.test(name)) {
      if (scope.positional === 'unknown') return { kind: 'unknown', taint: [], what: '$' + name };
      if (name === '@' || name === '*') {
        const all = scope.positional;
        return all.every((p): p is string => typeof p === 'string') ? all.join(' ') : { kind: 'unknown', taint: [], what: '$' + name };
      }
      return scope.positional[Number(name) - 1] ?? '';
    }
    if (NUMERIC_VARS.has(name)) return '0';
    if (name === '0') return 'bash';
    const v = scope.vars.get(name);
    if (v !== undefined) return scope.ifsChanged && typeof v === 'string' ? { kind: 'unknown', taint: [], what: '$' + name } : v;
    switch (name) {
      case 'HOME':
        return { kind: 'home' };
      case 'PWD':
        return scope.cwd ?? { kind: 'unknown', taint: [], what: '$PWD' };
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
        return { kind: 'unknown', taint: [], what: '$' + name };
    }
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
      for (const c of inner) last = this.walk(c, sub, { kind: 'inherit' }) ?? last;
    } finally {
      this.capture.pop();
    }
    if (node.type === 'process_substitution') return { kind: 'procsub', taint: [...taint] };
    if (last?.outputsWorkspacePaths && taint.size === 0) return { kind: 'workspace' };
    return { kind: 'unknown', taint: [...taint], what: node.text };
  }

  /** Walks any node; returns the outcome of the last command run (for pipes and substitutions). */
  walk(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    switch (node.type) {
      case 'comment':
        return undefined;
      case 'command':
        return this.command(node, [], scope, stdin, node.text);
      case 'command_name': {
        // Only seen alone inside parse errors.
        const w = evalWord(node.namedChildren[0] ?? node, this.wordScope(scope));
        return this.judgeWords([w], node.text, stdin, scope, []);
      }
      case 'redirected_statement':
        return this.redirected(node, scope, stdin);
      case 'pipeline':
        return this.pipeline(node, scope, stdin);
      case 'subshell':
        return this.children(node, copyScope(scope), stdin);
      case 'variable_assignment':
        this.assignment(node, scope, true);
        return undefined;
      case 'variable_assignments':
        for (const c of node.namedChildren) if (c) this.assignment(c, scope, true);
        return undefined;
      case 'declaration_command':
        for (const c of node.namedChildren) {
          if (c?.type === 'variable_assignment') this.assignment(c, scope, true);
          else if (c && c.type !== 'variable_name' && c.type !== 'word') this.walk(c, scope, stdin);
        }
        return undefined;
      case 'unset_command':
        for (const c of node.namedChildren) if (c) scope.vars.delete(c.text);
        return undefined;
      case 'function_definition': {
        const name = node.childForFieldName('name')?.text;
        if (name) scope.functions.add(name);
        const body = node.childForFieldName('body');
        if (body) this.walk(body, copyScope(scope, { positional: 'unknown' }), { kind: 'inherit' });
        return undefined;
      }
      case 'for_statement':
        return this.forLoop(node, scope, stdin);
      case 'command_substitution':
      case 'process_substitution':
        this.substitute(node, scope);
        return undefined;
      default:
        return this.children(node, scope, stdin);
    }
  }

  private children(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    let last: Outcome | undefined;
    for (const c of node.namedChildren) {
      if (!c) continue;
      // Only the first command of a block reads the block's input.
      last = this.walk(c, scope, stdin) ?? last;
    }
    return last;
  }

  private forLoop(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    const variable = node.childForFieldName('variable')?.text;
    const values: Word[] = [];
    for (let i = 0; i < node.childCount; i++) {
      if (node.fieldNameForChild(i) === 'value') {
        const c = node.child(i);
        if (c) values.push(evalWord(c, this.wordScope(scope)));
      }
    }
    if (variable) {
      const allInside = values.length > 0 && values.every((w) => literal(w) !== null && judgePath(w, this.paths(scope)).cls === 'inside');
      const allLiteral = values.every((w) => literal(w) !== null && !/[/~.]/.test(literal(w)!));
      scope.vars.set(variable, allInside || (allLiteral && values.length > 0) ? { kind: 'workspace' } : { kind: 'unknown', taint: [], what: '$' + variable });
    }
    const body = node.childForFieldName('body');
    return body ? this.walk(body, scope, stdin) : undefined;
  }

  private assignment(node: SyntaxNode, scope: Scope, standalone: boolean): Finding[] {
    const nameNode = node.childForFieldName('name');
    const valueNode = node.childForFieldName('value');
    const name = nameNode?.type === 'variable_name' ? nameNode.text : null;
    if (nameNode && nameNode.type !== 'variable_name') this.walk(nameNode, scope, { kind: 'inherit' });
    const value = valueNode ? evalWord(valueNode, this.wordScope(scope)) : litWord('');
    if (!name) return [];
    const c = new Cmd('', [], node.text, { kind: 'inherit' }, this.judge(scope));
    judgeAssignment(c, name, value);
    if (name === 'IFS') {
      scope.ifsChanged = true;
      c.add(['read_only'], 'IFS changes how words split');
    }
    if (standalone) {
      const lit = literal(value);
      const first = value.segs[0];
      scope.vars.set(name, lit ?? (value.segs.length === 1 && first?.t === 'val' ? first.v : { kind: 'unknown', taint: [], what: '$' + name }));
      if (c.findings.length > 0) this.addPart(node.text, [`${name}=${value.raw}`], c.findings);
    }
    return c.findings;
  }

  private pipeline(node: SyntaxNode, scope: Scope, stdin: Stdin): Outcome | undefined {
    let input: Stdin = stdin;
    let last: Outcome | undefined;
    const taintSoFar = new Set<Taint>(stdin.kind === 'data' ? stdin.taint : []);
    for (const c of node.namedChildren) {
      if (!c) continue;
      last = this.walk(c, copyScope(scope), input);
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
    const r = this.redirects(redirects, scope);
    if (r.findings.length > 0) this.addPart(node.text.slice(0, 200), ['(redirect)'], r.findings);
    return body ? this.walk(body, scope, r.stdin ?? stdin) : undefined;
  }

  /** Judges redirections: where output goes, where input comes from. */
  private redirects(nodes: SyntaxNode[], scope: Scope): { findings: Finding[]; stdin?: Stdin; writes: { path: string; append: boolean }[] } {
    const findings: Finding[] = [];
    const writes: { path: string; append: boolean }[] = [];
    let stdin: Stdin | undefined;
    const ws = this.wordScope(scope);
    const all: SyntaxNode[] = [];
    for (const n of nodes) {
      all.push(n);
      // `cat <<EOF > out` nests the file redirect inside the here-doc one.
      for (const c of n.namedChildren) if (c && REDIRECT_TYPES.has(c.type)) all.push(c);
    }
    for (const n of all) {
      if (n.type === 'heredoc_redirect') {
        const start = n.namedChildren.find((c) => c?.type === 'heredoc_start')?.text ?? '';
        const body = n.namedChildren.find((c) => c?.type === 'heredoc_body');
        const quoted = /['"\\]/.test(start);
        const exps = body ? body.namedChildren.filter((c): c is SyntaxNode => !!c && c.type !== 'heredoc_content') : [];
        const taint = new Set<Taint>();
        if (!quoted) {
          for (const e of exps) {
            const w = evalWord(e, ws);
            for (const s of w.segs) if (s.t === 'val' && (s.v.kind === 'unknown' || s.v.kind === 'procsub')) for (const t of s.v.taint) taint.add(t);
          }
        }
        const text = quoted || exps.length === 0 ? (body?.text ?? '') : null;
        stdin = { kind: 'data', text, taint: [...taint], from: 'a here-document' };
        continue;
      }
      if (n.type === 'herestring_redirect') {
        const wn = n.namedChildren.filter((c): c is SyntaxNode => !!c).pop();
        const w = wn ? evalWord(wn, ws) : litWord('');
        const taint = new Set<Taint>();
        for (const s of w.segs) if (s.t === 'val' && (s.v.kind === 'unknown' || s.v.kind === 'procsub')) for (const t of s.v.taint) taint.add(t);
        const lit = literal(w);
        stdin = { kind: 'data', text: lit === null ? null : lit + '\n', taint: [...taint], from: 'a here-string' };
        continue;
      }
      const dest = n.childForFieldName('destination');
      const op = n.children.find((c) => c && !c.isNamed)?.type ?? '>';
      if (!dest) continue;
      if ((op === '>&' || op === '<&' || op === '>&-' || op === '<&-') && /^(\d+|-)$/.test(dest.text)) continue;
      const w = evalWord(dest, ws);
      const use = op === '<' ? 'read' : 'write';
      const v = judgePath(w, this.paths(scope));
      const f = pathFinding(v, use);
      if (f) findings.push(f);
      else if (use === 'write' && v.cls === 'inside') {
        findings.push({ categories: ['mutating'], why: `writes ${w.raw} (redirect ${op})` });
        writes.push({ path: v.shown, append: op === '>>' || op === '&>>' });
      }
      if (op === '<' || op === '<>') stdin = { kind: 'data', text: null, taint: v.cls === 'socket' ? ['remote'] : [], from: w.raw };
      if (op === '<>' && v.cls === 'socket') findings.push({ categories: ['networked'], why: 'opens a network socket for reading and writing' });
    }
    return { findings, ...(stdin ? { stdin } : {}), writes };
  }

  private command(node: SyntaxNode, outer: SyntaxNode[], scope: Scope, stdin: Stdin, text: string): Outcome | undefined {
    const ws = this.wordScope(scope);
    const assignFindings: Finding[] = [];
    const words: Word[] = [];
    const redirects = [...outer];
    for (let i = 0; i < node.childCount; i++) {
      const c = node.child(i);
      if (!c) continue;
      const field = node.fieldNameForChild(i);
      if (c.type === 'variable_assignment') assignFindings.push(...this.assignment(c, scope, false));
      else if (REDIRECT_TYPES.has(c.type)) redirects.push(c);
      else if (field === 'name') words.push(evalWord(c.namedChildren[0] ?? c, ws));
      else if (field === 'argument') words.push(evalWord(c, ws));
      else if (c.isNamed && c.type !== 'comment') this.walk(c, scope, { kind: 'inherit' });
    }
    const r = this.redirects(redirects, scope);
    const extra = [...assignFindings, ...r.findings];
    if (words.length === 0) {
      if (extra.length > 0) this.addPart(text, [], extra);
      return undefined;
    }
    // An alias defined earlier on the line replaces the first word.
    const name = literal(words[0]!);
    const alias = name !== null ? scope.aliases.get(name) : undefined;
    if (alias !== undefined) {
      scope.aliases.delete(name!);
      const out = this.walkText(`${alias} ${words.slice(1).map((w) => w.raw).join(' ')}`, copyScope(scope, { depth: scope.depth + 1 }), `alias ${name}`);
      scope.aliases.set(name!, alias);
      if (extra.length > 0) this.addPart(text, [], extra);
      return out;
    }
    if (name !== null && scope.functions.has(name)) {
      const c = new Cmd(name, words.slice(1), text, stdin, this.judge(scope));
      c.add(['read_only'], `calls the function ${name} (its body is judged where it is defined)`);
      for (const a of c.args) c.maybePath(a, 'read');
      this.addPart(text, [name, ...words.slice(1).map((w) => w.raw)], [...c.findings, ...extra]);
      return c.outcome();
    }
    const out = this.judgeWords(words, text, r.stdin ?? stdin, scope, extra);
    for (const w of r.writes) {
      if (out.outputTaint.includes('remote')) this.downloaded.add(w.path);
      // Remember scripts written with known text, so running them later is judged by their text.
      if (out.outputText !== null) this.written.set(w.path, (w.append ? (this.written.get(w.path) ?? '') : '') + out.outputText);
      else this.written.delete(w.path);
    }
    return out;
  }

  /** Classifies a command given as words and records its part. */
  judgeWords(words: Word[], text: string, stdin: Stdin, scope: Scope, extra: Finding[]): Outcome {
    const out = classifyCommand(words, text, stdin, this.judge(scope));
    const findings = [...out.findings, ...extra];
    if (!out.transparent || extra.length > 0) {
      this.addPart(text, out.argv, findings.length > 0 ? findings : [{ categories: ['mutating'], why: `runs ${out.argv[0] ?? 'a program'}` }]);
    }
    for (const cap of this.capture) for (const t of out.outputTaint) cap.add(t);
    return out;
  }
}

/**
 * A plain tokenizer for text the parser rejected: splits on unquoted ; | & ( ) ` and newlines,
 * then into words with quotes removed, so each piece can still be judged.
 */
export function roughCommands(text: string): Word[][] {
  const out: Word[][] = [];
  let cmd: Word[] = [];
  let segs: Word['segs'] = [];
  let raw = '';
  const flushWord = () => {
    if (raw !== '') cmd.push({ raw, segs: segs.length ? segs : [{ t: 'lit', s: '', q: true }] });
    segs = [];
    raw = '';
  };
  const flushCmd = () => {
    flushWord();
    if (cmd.length) out.push(cmd);
    cmd = [];
  };
  const lit = (s: string, q: boolean) => segs.push({ t: 'lit', s, q });
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '\\' && i + 1 < text.length) {
      raw += ch + text[i + 1];
      lit(text[++i]!, true);
    } else if (ch === "'" || ch === '"') {
      const end = text.indexOf(ch, i + 1);
      const body = end < 0 ? text.slice(i + 1) : text.slice(i + 1, end);
      raw += ch + body + (end < 0 ? '' : ch);
      if (ch === '"' && /\$|`/.test(body)) segs.push({ t: 'val', v: { kind: 'unknown', taint: [], what: body }, q: true });
      else lit(body, true);
      i = end < 0 ? text.length : end;
    } else if (ch === '$' && text[i + 1] !== undefined && /[A-Za-z_{(@*#?$!0-9]/.test(text[i + 1]!)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_{}]/.test(text[j]!)) j++;
      raw += text.slice(i, j || i + 1);
      segs.push({ t: 'val', v: { kind: 'unknown', taint: [], what: text.slice(i, j) }, q: false });
      i = Math.max(i, j - 1);
    } else if (/[;|&()`\n]/.test(ch)) flushCmd();
    else if (/\s/.test(ch)) flushWord();
    else {
      raw += ch;
      lit(ch, false);
    }
  }
  flushCmd();
  return out.map((c) => c.filter((w) => !/^[<>]|^\d*[<>]/.test(w.raw)));
}

