/**
 * Shell words as the policy sees them: literal text (after quote removal, escapes and ANSI-C
 * decoding) interleaved with expansions whose value is known, partly known, or unknown.
 */
import type { SyntaxNode } from './parse';

/** Where unknown bytes came from: the network, a decoder (base64 -d …), or neither. */
export type Taint = 'remote' | 'decoded';

export type Value =
  /** The user's home directory ($HOME, ~). */
  | { kind: 'home' }
  /** A host path known to be outside the workspace ($TMPDIR, ~other). */
  | { kind: 'host'; path: string }
  /** A path known to stay inside the workspace (a loop over workspace globs, `find .` output). */
  | { kind: 'workspace'; name?: true }
  /**
   * A pipe from a process substitution: `/dev/fd/N`, carrying its producer's taint, and its output
   * when known literally (`<(echo …)`), for a program that runs it as code (`bash <(echo …)`).
   */
  | { kind: 'procsub'; taint: Taint[]; text: string | null; from: string }
  /** Anything at all. */
  | { kind: 'unknown'; taint: Taint[]; what: string };

export type Seg = { t: 'lit'; s: string; q: boolean } | { t: 'val'; v: Value; q: boolean };

export interface Word {
  /** The source text, for messages and rule matching when the value is unknown. */
  raw: string;
  segs: Seg[];
}

/** What word evaluation needs from the walker: variable values and substitutions. */
export interface WordScope {
  lookup(name: string): Value | string;
  /**
   * Runs the backtick substitutions in text the grammar leaves unparsed (a `${x:-…}` default, an
   * unquoted here-document body): each is judged as the shell text it runs.
   */
  backticks?(text: string): void;
  /** Judges text bash evaluates as arithmetic (a `${s:offset}`), and what its variables hold. */
  arithmetic?(text: string): void;
  /** Judges `$(…)` / `` `…` `` / `<(…)` and says what its output is. */
  substitute(node: SyntaxNode): Value;
  /** Judges commands hidden in nodes the word model ignores (arithmetic, subscripts). */
  visit(node: SyntaxNode): void;
}

export function litWord(s: string, quoted = true): Word {
  return { raw: s, segs: [{ t: 'lit', s, q: quoted }] };
}

/** The word's value when it is fully literal, else null. */
export function literal(w: Word): string | null {
  let out = '';
  for (const s of w.segs) {
    if (s.t !== 'lit') return null;
    out += s.s;
  }
  return out;
}

/** The word as one value ($1 after `set -- word`, `sh -c code argv0 word`): its text, or unknown. */
export function wordValue(w: Word): string | Value {
  return literal(w) ?? { kind: 'unknown', taint: [...taints(w)], what: w.raw };
}

/** The literal text before the first expansion. */
export function literalPrefix(w: Word): string {
  let out = '';
  for (const s of w.segs) {
    if (s.t !== 'lit') break;
    out += s.s;
  }
  return out;
}

export function isLiteral(w: Word): boolean {
  return w.segs.every((s) => s.t === 'lit');
}

export function taints(w: Word): Set<Taint> {
  const out = new Set<Taint>();
  for (const s of w.segs) {
    if (s.t === 'val' && (s.v.kind === 'unknown' || s.v.kind === 'procsub')) for (const t of s.v.taint) out.add(t);
  }
  return out;
}

/**
 * The word without its first `n` characters, which must lie in its literal start: the value of
 * `--output=$HOME/x` is the word after `--output=`, whatever follows it.
 */
export function dropPrefix(w: Word, n: number): Word {
  const segs: Seg[] = [];
  let left = n;
  for (const s of w.segs) {
    if (left > 0 && s.t === 'lit') {
      if (s.s.length <= left) {
        left -= s.s.length;
        continue;
      }
      segs.push({ ...s, s: s.s.slice(left) });
      left = 0;
      continue;
    }
    segs.push(s);
  }
  return { raw: w.raw.length > n ? w.raw.slice(n) : '', segs };
}

/** The word cut at each `sep` in its literal text (`$HOME/bin:$PATH` → `$HOME/bin`, `$PATH`). */
export function splitWord(w: Word, sep: string): Word[] {
  const pieces: Word[] = [];
  let segs: Seg[] = [];
  for (const s of w.segs) {
    if (s.t !== 'lit' || !s.s.includes(sep)) {
      segs.push(s);
      continue;
    }
    const parts = s.s.split(sep);
    parts.forEach((part, i) => {
      if (i > 0) {
        pieces.push({ raw: segsText(segs), segs });
        segs = [];
      }
      if (part !== '') segs.push({ ...s, s: part });
    });
  }
  pieces.push({ raw: segsText(segs), segs });
  return pieces;
}

/**
 * Bash's field splitting: an unquoted expansion whose known value holds spaces, tabs or newlines
 * (the default IFS) becomes several words. `x="-rf /"; rm $x` is `rm -rf /`, and
 * `x="a /etc/shadow"; cat $x` reads /etc/shadow. Unquoted literal text from the command line holds
 * no such character (the parser ends the word there; `a\ b` is a quoted space), so any found in an
 * unquoted literal came from an expansion. An expansion that leaves nothing leaves no word.
 */
export function splitFields(w: Word): Word[] {
  if (!w.segs.some((s) => s.t === 'lit' && !s.q && /[ \t\n]/.test(s.s))) return [w];
  const fields: Seg[][] = [[]];
  for (const s of w.segs) {
    if (s.t !== 'lit' || s.q) {
      fields[fields.length - 1]!.push(s);
      continue;
    }
    s.s.split(/[ \t\n]+/).forEach((piece, i) => {
      if (i > 0) fields.push([]);
      if (piece !== '') fields[fields.length - 1]!.push({ ...s, s: piece });
    });
  }
  return fields.filter((segs) => segs.length > 0).map((segs) => ({ raw: w.raw, segs }));
}

function segsText(segs: Seg[]): string {
  return segs.map((s) => (s.t === 'lit' ? s.s : s.v.kind === 'unknown' ? s.v.what : `$${s.v.kind}`)).join('');
}

/** Unquoted glob characters: the word names whatever files match. */
export function hasGlob(w: Word): boolean {
  return w.segs.some((s) => s.t === 'lit' && !s.q && /[*?[]/.test(s.s));
}

/** A printable rendering: literal text with `$…` placeholders where values are unknown. */
export function display(w: Word): string {
  if (isLiteral(w)) return literal(w) ?? w.raw;
  return w.raw;
}

const MAX_BRACE_WORDS = 256;
/** Characters scanned per word: plenty for real words, a bound for `{a,b}` repeated a thousand times. */
const MAX_BRACE_WORK = 1 << 20;

export interface BraceExpansion {
  words: string[];
  /** False when the expansion was cut short (too many words or steps): the words are a sample. */
  complete: boolean;
}

/**
 * Brace expansion (`{a,b}c`, `{1..3}`) on a literal word: bash does it before anything else, so
 * `{rm,-rf,/}` in command position is `rm -rf /`. Quoted braces are left alone. Bounded: past
 * MAX_BRACE_WORDS words or MAX_BRACE_WORK characters scanned the result says it is incomplete.
 */
export function braceExpansion(w: Word): BraceExpansion {
  const chars: Ch[] = [];
  for (const s of w.segs) {
    if (s.t !== 'lit') return { words: [literal(w) ?? w.raw], complete: true };
    for (const c of s.s) chars.push({ c, q: s.q });
  }
  if (!chars.some((ch) => ch.c === '{' && !ch.q)) return { words: [chars.map((ch) => ch.c).join('')], complete: true };
  const words: string[] = [];
  // Depth first, alternatives in order, so the first word is the one bash puts first.
  const pending: Ch[][] = [chars];
  let work = 0;
  while (pending.length > 0) {
    const item = pending.pop()!;
    work += item.length;
    if (words.length >= MAX_BRACE_WORDS || work > MAX_BRACE_WORK) return { words, complete: false };
    const alternatives = firstBraceGroup(item);
    if (alternatives === null) words.push(item.map((ch) => ch.c).join(''));
    else for (let i = alternatives.length - 1; i >= 0; i--) pending.push(alternatives[i]!);
  }
  return { words, complete: true };
}

export function expandBraces(w: Word): string[] {
  return braceExpansion(w).words;
}

type Ch = { c: string; q: boolean };

/**
 * The word with its leftmost brace expression expanded (one word per alternative), or null when
 * it has none. One pass: braces are matched with a stack, each group keeping its own commas; an
 * unmatched `{` or a group with neither a comma nor a `..` sequence stays literal.
 */
function firstBraceGroup(chars: Ch[]): Ch[][] | null {
  const open: { at: number; commas: number[] }[] = [];
  let best: { at: number; close: number; commas: number[] } | null = null;
  for (let i = 0; i < chars.length; i++) {
    const ch = chars[i]!;
    if (ch.q) continue;
    if (ch.c === '{') open.push({ at: i, commas: [] });
    else if (ch.c === ',' && open.length > 0) open[open.length - 1]!.commas.push(i);
    else if (ch.c === '}' && open.length > 0) {
      const group = open.pop()!;
      if (best !== null && best.at < group.at) continue;
      const isSequence = group.commas.length === 0 && i - group.at < 48 && SEQUENCE.test(chars.slice(group.at + 1, i).map((x) => x.c).join(''));
      if (group.commas.length > 0 || isSequence) best = { at: group.at, close: i, commas: group.commas };
    }
  }
  if (best === null) return null;
  const pre = chars.slice(0, best.at);
  const post = chars.slice(best.close + 1);
  let alternatives: Ch[][];
  if (best.commas.length > 0) {
    alternatives = [];
    let from = best.at + 1;
    for (const comma of [...best.commas, best.close]) {
      alternatives.push(chars.slice(from, comma));
      from = comma + 1;
    }
  } else {
    const seq = SEQUENCE.exec(chars.slice(best.at + 1, best.close).map((x) => x.c).join(''))!;
    alternatives = sequence(seq[1]!, seq[2]!).map((s) => [...s].map((c) => ({ c, q: true })));
  }
  return alternatives.map((alt) => [...pre, ...alt, ...post]);
}

const SEQUENCE = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.-?\d+)?$/;

function sequence(a: string, b: string): string[] {
  const na = Number(a);
  const nb = Number(b);
  const out: string[] = [];
  if (Number.isInteger(na) && Number.isInteger(nb)) {
    const step = na <= nb ? 1 : -1;
    for (let i = na; out.length < MAX_BRACE_WORDS; i += step) {
      out.push(String(i));
      if (i === nb) break;
    }
    return out;
  }
  const ca = a.charCodeAt(0);
  const cb = b.charCodeAt(0);
  const step = ca <= cb ? 1 : -1;
  for (let i = ca; out.length < MAX_BRACE_WORDS; i += step) {
    out.push(String.fromCharCode(i));
    if (i === cb) break;
  }
  return out;
}

/** Decodes the body of an ANSI-C string `$'…'`. */
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\' || i === body.length - 1) {
      out += c;
      continue;
    }
    const n = body[++i]!;
    const simple: Record<string, string> = { a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', "'":
        "'", '"': '"', '?': '?' };
    if (n in simple) out += simple[n];
    else if (n === 'x') {
      const m = /^[0-9a-fA-F]{1,2}/.exec(body.slice(i + 1));
      if (m) {
        out += String.fromCharCode(parseInt(m[0], 16));
        i += m[0].length;
      } else out += '\\x';
    } else if (n === 'u' || n === 'U') {
      const m = (n === 'u' ? /^[0-9a-fA-F]{1,4}/ : /^[0-9a-fA-F]{1,8}/).exec(body.slice(i + 1));
      if (m) {
        const cp = parseInt(m[0], 16);
        out += cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
        i += m[0].length;
      } else out += '\\' + n;
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(body.slice(i));
      out += String.fromCharCode(parseInt(m![0], 8) & 0xff);
      i += m![0].length - 1;
    } else if (n === 'c' && i + 1 < body.length) {
      out += String.fromCharCode(body.charCodeAt(++i) & 0x1f);
    } else out += '\\' + n;
  }
  return out;
}

/** Removes backslash escapes from an unquoted word: `\r\m` is `rm`, each escaped char quoted. */
function unquotedSegs(text: string): Seg[] {
  const segs: Seg[] = [];
  let buf = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      if (buf) segs.push({ t: 'lit', s: buf, q: false });
      buf = '';
      const n = text[++i]!;
      if (n !== '\n') segs.push({ t: 'lit', s: n, q: true });
    } else buf += c;
  }
  if (buf) segs.push({ t: 'lit', s: buf, q: false });
  return segs;
}

/** Backslash escapes inside double quotes only apply before $ ` " \ and newline. */
function dquoteText(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c));
}

function valueSeg(v: Value | string, q: boolean): Seg {
  return typeof v === 'string' ? { t: 'lit', s: v, q } : { t: 'val', v, q };
}

/** Evaluates a word-like node (word, string, concatenation, expansion, …) into a Word. */
export function evalWord(node: SyntaxNode, scope: WordScope): Word {
  const segs: Seg[] = [];
  pushSegs(node, scope, segs, false);
  // A leading unquoted ~ is the home directory (or another user's); bash also expands it after
  // `name=` in any word (`dd of=~/.bashrc`, `make PREFIX=~/x`), though not after `--name=`.
  const first = segs[0];
  if (first && first.t === 'lit' && !first.q) {
    const assign = /^[A-Za-z_][A-Za-z0-9_]*=(?=~)/.exec(first.s);
    const at = assign ? assign[0].length : 0;
    const tilde = first.s.startsWith('~', at) ? tildeSegs(first.s.slice(at)) : null;
    if (tilde) segs.splice(0, 1, ...(at > 0 ? [{ t: 'lit' as const, s: first.s.slice(0, at), q: false }] : []), ...tilde);
  }
  return { raw: node.text, segs: mergeLits(segs) };
}

/**
 * A word whose unquoted text starts with `~`, read as the home directory. Bash leaves `~` alone in
 * `--file=~/x` or a sed `w ~/x`, but whoever wrote it meant home, and a directory really named
 * `~` in the workspace is rarer than a mistake; the cautious reading is home.
 */
export function tildeAsHome(w: Word): Word {
  const first = w.segs[0];
  if (!first || first.t !== 'lit' || first.q || !first.s.startsWith('~')) return w;
  const tilde = tildeSegs(first.s);
  return tilde ? { raw: w.raw, segs: [...tilde, ...w.segs.slice(1)] } : w;
}

/** `~`, `~/x`, `~user/x` as segments, or null when the text is not a tilde prefix (`~x.txt` is). */
function tildeSegs(text: string): Seg[] | null {
  const m = /^~([A-Za-z0-9._+-]*)(.*)$/s.exec(text);
  if (!m) return null;
  const user = m[1]!;
  const rest = m[2]!;
  if (rest !== '' && !rest.startsWith('/')) return null;
  const value: Value =
    user === '' ? { kind: 'home' } : user === '+' || user === '-' ? { kind: 'unknown', taint: [], what: '~' + user } : { kind: 'host', path: `~${user}` };
  return [{ t: 'val', v: value, q: false }, ...(rest ? [{ t: 'lit' as const, s: rest, q: false }] : [])];
}

function mergeLits(segs: Seg[]): Seg[] {
  const out: Seg[] = [];
  for (const s of segs) {
    const last = out[out.length - 1];
    if (s.t === 'lit' && last && last.t === 'lit' && last.q === s.q) out[out.length - 1] = { t: 'lit', s: last.s + s.s, q: s.q };
    else if (s.t !== 'lit' || s.s !== '') out.push(s);
  }
  return out;
}

function pushSegs(node: SyntaxNode, scope: WordScope, segs: Seg[], quoted: boolean): void {
  switch (node.type) {
    case 'word':
    case 'number':
    case 'variable_name':
    case 'file_descriptor':
    case 'heredoc_start':
    case 'special_variable_name':
      if (quoted) segs.push({ t: 'lit', s: node.text, q: true });
      else segs.push(...unquotedSegs(node.text));
      return;
    case 'string_content':
      segs.push({ t: 'lit', s: dquoteText(node.text), q: true });
      return;
    case 'raw_string':
      segs.push({ t: 'lit', s: node.text.slice(1, -1), q: true });
      return;
    case 'ansi_c_string':
      segs.push({ t: 'lit', s: decodeAnsiC(node.text.slice(2, -1)), q: true });
      return;
    case 'string':
    case 'translated_string': {
      const inner = node.type === 'translated_string' ? node.namedChildren[0] : node;
      if (!inner) return;
      // Copy the text between children too, so nothing inside the quotes is lost.
      let pos = inner.startIndex + 1;
      const end = inner.endIndex - 1;
      const base = inner.startIndex;
      const text = inner.text;
      for (const c of inner.namedChildren) {
        if (!c) continue;
        if (c.startIndex > pos) segs.push({ t: 'lit', s: dquoteText(text.slice(pos - base, c.startIndex - base)), q: true });
        pushSegs(c, scope, segs, true);
        pos = c.endIndex;
      }
      if (end > pos) segs.push({ t: 'lit', s: dquoteText(text.slice(pos - base, end - base)), q: true });
      return;
    }
    case 'concatenation':
      for (const c of node.children) if (c) pushSegs(c, scope, segs, quoted);
      return;
    case 'brace_expression':
      // `{1..3}`: keep the text unquoted so brace expansion sees it.
      segs.push({ t: 'lit', s: node.text, q: false });
      return;
    case 'simple_expansion': {
      const name = node.text.slice(1);
      // "$@" is one word per parameter: read as unquoted, it is split (at worst more finely).
      segs.push(valueSeg(scope.lookup(name), quoted && name !== '@'));
      return;
    }
    case 'expansion':
      segs.push(valueSeg(expansionValue(node, scope), quoted));
      return;
    case 'command_substitution':
    case 'process_substitution':
      segs.push({ t: 'val', v: scope.substitute(node), q: quoted });
      return;
    case 'arithmetic_expansion':
      scope.visit(node);
      // A number cannot climb out of the workspace.
      segs.push({ t: 'lit', s: '0', q: true });
      return;
    default:
      if (!node.isNamed) {
        // Anonymous tokens inside words ($ alone, {, }) are literal text.
        segs.push(quoted ? { t: 'lit', s: node.text, q: true } : { t: 'lit', s: node.text, q: false });
        return;
      }
      scope.visit(node);
      segs.push({ t: 'val', v: { kind: 'unknown', taint: [], what: node.text }, q: quoted });
  }
}

/** `${NAME}`, `${NAME:-default}`, `${#NAME}`, `${!NAME}` … */
function expansionValue(node: SyntaxNode, scope: WordScope): Value | string {
  const named = node.namedChildren.filter((c): c is SyntaxNode => !!c);
  const nameNode = named.find((c) => c.type === 'variable_name' || c.type === 'special_variable_name');
  const ops = node.children.filter((c) => c && !c.isNamed && c.type !== '${' && c.type !== '}');
  let ranBackticks = false;
  for (const c of named) {
    if (c === nameNode) continue;
    scope.visit(c);
    if (c.type !== 'command_substitution' && /`[^`]*`/.test(c.text) && scope.backticks) {
      scope.backticks(c.text);
      ranBackticks = true;
    }
  }
  if (!nameNode) return { kind: 'unknown', taint: [], what: node.text };
  if (ranBackticks) return { kind: 'unknown', taint: [], what: node.text };
  // `${s:offset:length}` evaluates offset and length as arithmetic; `${p@P}` expands p's value as a prompt.
  if (/^\$\{[^}:]*:[^-=?+]/.test(node.text)) scope.arithmetic?.(node.text.slice(node.text.indexOf(':') + 1));
  if (/@P\}$/.test(node.text)) {
    const held = scope.lookup(nameNode.text);
    if (typeof held === 'string' && /\$\(|`/.test(held)) scope.backticks?.('`' + `: ${held}`.replace(/`/g, '') + '`');
  }
  const v = scope.lookup(nameNode.text);
  if (ops.length === 0) return v;
  const op = ops[0]!.type;
  if (op === '!') return { kind: 'unknown', taint: [], what: node.text };
  if (op === '#' && ops[0]!.startIndex < nameNode.startIndex) return '0';
  // Home stays home whatever is trimmed off it; a default applies only when the value is empty.
  if (typeof v !== 'string') return v.kind === 'home' || v.kind === 'host' ? v : { kind: 'unknown', taint: v.kind === 'unknown' ? v.taint : [],
      what: node.text };
  if ((op === ':-' || op === '-') && v !== '') return v;
  return { kind: 'unknown', taint: [], what: node.text };
}
