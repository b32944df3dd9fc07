/** A word as the shell reads it back: plain when it is, else in single quotes. */
export function shellWord(a: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`;
}
