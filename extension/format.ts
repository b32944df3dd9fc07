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
