/**
 * Text from an agent or a vault (commands, reasons, file names, paths, error messages that quote
 * them) made safe to print on a terminal: every control character (C0 but tab and, where lines are
 * allowed, newline; DEL; C1) and every character that reorders or hides what follows on screen
 * (bidi overrides and isolates, zero-width joiners of no visible width, the BOM) is shown as a
 * visible escape (`\e`, `\r`, `\x07`, `\u202e`), so `\r\033[2K` cannot erase the part of a command
 * a person is approving, and a name holding a newline cannot forge a line of `avfs ls`.
 * The one routine for everything the CLI prints from such text.
 */

const NAMED: Record<string, string> = { '\x1b': '\\e', '\r': '\\r', '\n': '\\n', '\t': '\\t', '\b': '\\b', '\f': '\\f', '\v': '\\v', '\0': '\\0' };

// C0 and DEL and C1; bidi embeddings/overrides/isolates and marks; zero-width and invisible
// formatting characters; line and paragraph separators; the BOM.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;
const UNSAFE_KEEP_LINES = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

function escapeOne(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with what a terminal would act on shown as escapes. One line by default (newlines and
 * tabs escaped too: a table cell, a name, a command); `{ lines: true }` keeps newlines and tabs
 * (a whole rendered page whose fields were escaped already, an error message).
 */
export function terminalText(text: string, opts: { lines?: boolean } = {}): string {
  return text.replace(opts.lines ? UNSAFE_KEEP_LINES : UNSAFE, escapeOne);
}
