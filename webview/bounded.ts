/**
 * What the Executions page keeps per run (inline diffs, the files opened) is kept for the last few
 * runs looked at only: a long session must not grow it without end. Pure: unit-tested under node:test.
 */

/** How many runs' diffs and open files the page keeps. */
export const KEEP_RUNS = 10;

/** Sets `key` as the newest entry of `map`, and drops the oldest beyond `max`. */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max = KEEP_RUNS): V {
  map.delete(key);
  map.set(key, value);
  for (const oldest of map.keys()) {
    if (map.size <= max) break;
    map.delete(oldest);
  }
  return value;
}
