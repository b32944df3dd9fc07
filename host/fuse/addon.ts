/**
 * Finds and loads avfs's native addon (host/fuse/native/, dist/avfs_fuse.node). Apart from
 * binding.ts (which says how to build it when it is missing) so that the command runner can use
 * its `pipe()` without loading the FUSE binding and the error table.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ADDON_FILE = 'avfs_fuse.node';

/** Where the addon may be: beside the bundle (dist/avfs.js), or in dist/ when run from the sources. */
export function addonCandidates(): string[] {
  return [join(__dirname, ADDON_FILE), join(__dirname, '..', '..', 'dist', ADDON_FILE)];
}

let loaded: unknown;

/** The addon's exports, or undefined when it is not built. */
export function loadNativeAddon<T>(): T | undefined {
  if (loaded) return loaded as T;
  const file = addonCandidates().find((f) => existsSync(f));
  if (!file) return undefined;
  const mod = { exports: {} };
  process.dlopen(mod, file);
  return (loaded = mod.exports) as T;
}
