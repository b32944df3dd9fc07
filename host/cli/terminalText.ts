/**
 * Text from elsewhere (a command an agent sent, a path, a reason) made safe to print on a terminal:
 * control characters (C0, DEL, C1: escape sequences that move the cursor, rewrite the title, clear
 * the screen, or a carriage return that hides what came before it) and the bidirectional controls
 * that reorder what a person reads are shown as visible escapes (`\x1b`, `\r`, `\u202e`) instead
 * of acting. Tabs are kept; a newline is kept only where the caller allows it.
 */
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0', '\x1b': '\\x1b' };

// C0 but tab and newline, DEL, C1; the bidi embeddings, overrides and isolates; LS/PS.
const UNSAFE = /[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/gu;

export function terminalText(text: string, opts: { newlines?: boolean } = {}): string {
  return text.replace(UNSAFE, (c) => {
    if (c === '\n' && opts.newlines) return c;
    const named = NAMED[c];
    if (named) return named;
    const code = c.codePointAt(0)!;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}
