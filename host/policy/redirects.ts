/** Redirections of a command or a compound statement: `> file`, `< file`, here-documents, here-strings. */
import type { Finding, Stdin } from './command';
import type { SyntaxNode } from './parse';
import { judgePath, type PathContext, pathFinding } from './paths';
import { evalWord, literal, litWord, type Taint, type WordScope } from './words';

export const REDIRECT_TYPES = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

export interface Redirects {
  findings: Finding[];
  /** What the command reads instead of its input, when a redirect gives it. */
  stdin?: Stdin;
  /** Workspace files written by `>`/`>>`, for remembering what scripts were written. */
  writes: { path: string; append: boolean }[];
}

/**
 * Judges redirections: where output goes (a path written, like any other), where input comes
 * from (a file, a here-document or here-string, whose text is known when literal).
 */
export function judgeRedirects(nodes: SyntaxNode[], ws: WordScope, paths: PathContext): Redirects {
  const findings: Finding[] = [];
  const writes: { path: string; append: boolean }[] = [];
  let stdin: Stdin | undefined;
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
      // Backticks in an unquoted body run (the grammar leaves them as text).
      const backticks = !quoted && /`[^`]*`/.test(body?.text ?? '');
      if (backticks) ws.backticks?.(body!.text);
      const text = (quoted || exps.length === 0) && !backticks ? (body?.text ?? '') : null;
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
    const v = judgePath(w, paths);
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
