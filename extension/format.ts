// How sizes, counts and times read in the extension's UI. Pure: unit-tested under node:test.

/** 1536 → "1.5 KiB": binary units, as the CLI prints them. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = n / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = value < 10 ? 1 : 0;
  return `${value.toFixed(digits).replace(/\.0$/, '')} ${units[unit]}`;
}

/** 1 → "1 file", 3 → "3 files" (or the plural given: "3 entries"). */
export function plural(n: number, noun: string, nouns = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : nouns}`;
}

/** How long ago `iso` was, as "just now", "5 min ago", "3 h ago", "2 days ago", else the date. */
export function ago(iso: string, now = Date.now()): string {
  const ms = now - Date.parse(iso);
  if (!Number.isFinite(ms)) return iso;
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 45) return 'just now';
  const min = Math.round(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.round(min / 60);
  if (h < 24) return `${h} h ago`;
  const days = Math.round(h / 24);
  if (days < 30) return plural(days, 'day') + ' ago';
  return iso.slice(0, 10);
}

/**
 * Text from a request or the host (a command, a cwd, a reason, an error) for a notification, a
 * modal, the status bar or a tree label. VS Code turns `[label](command:…)` (or `https:`, `file:`)
 * in a notification into a link that runs the command, and `$(name)` into an icon: every such link
 * starts with a bracket, so brackets are shown as look-alikes (⟦ ⟧, in common fonts), as are the `(` of
 * `$(` and backticks (the messages quote with them). So an agent's text can never become a button,
 * while the parentheses commands are full of stay as they are. Control characters become spaces.
 */
export function plainText(text: string): string {
  return text
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .replace(/[[\]`]/g, (c) => LOOK_ALIKE[c] ?? c)
    .replace(/\$\(/g, '$⁽');
}

const LOOK_ALIKE: Record<string, string> = { '[': '⟦', ']': '⟧', '`': 'ˋ' };

/** Text for a MarkdownString, read as itself: every character Markdown or HTML gives a meaning is escaped. */
export function markdownText(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>~&$:]/g, '\\$&').replace(/\r?\n/g, '  \n');
}

/** A fenced code block showing `text` as it is: the fence is longer than any run of backticks in it. */
export function markdownCodeBlock(text: string): string {
  const longest = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}\n${text}\n${fence}`;
}

/** Inline code showing `text` as it is (one line): the delimiters are longer than any run of backticks in it. */
export function markdownCode(text: string): string {
  const one = text.replace(/\r?\n/g, ' ');
  const longest = Math.max(0, ...(one.match(/`+/g) ?? []).map((run) => run.length));
  const tick = '`'.repeat(longest + 1);
  // With backticks inside, spaces keep them apart from the delimiters (Markdown drops one each side).
  const pad = longest > 0 ? ' ' : '';
  return `${tick}${pad}${one}${pad}${tick}`;
}
