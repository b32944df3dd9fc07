/**
 * A plain reading of shell text the parser rejected or the policy will not walk (too deep, too
 * long): no grammar, only quotes, escapes and command separators, so that a denied command
 * cannot hide behind a parse error.
 */
import type { Word } from './words';

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

