/**
 * Finds and loads avfs's native addon (host/fuse/native/, dist/avfs_fuse.node). Apart from
 * binding.ts (which turns a missing or unloadable addon into a MountError saying what to do) so
 * that the command runner can use its `pipe()` without the FUSE binding and the error table.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const ADDON_FILE = 'avfs_fuse.node';

/** Where the addon may be: beside the bundle (dist/avfs.js), or in dist/ when run from the sources. */
export function addonCandidates(): string[] {
  return [join(__dirname, ADDON_FILE), join(__dirname, '..', '..', 'dist', ADDON_FILE)];
}

/** The addon's file, or undefined when it is not built. */
export function addonFile(): string | undefined {
  return addonCandidates().find((f) => existsSync(f));
}

let loaded: unknown;

/** The addon's exports; undefined when it is not built. Throws what dlopen throws (libfuse.so.2 missing, a damaged file). */
export function loadNativeAddon<T>(): T | undefined {
  if (loaded) return loaded as T;
  const file = addonFile();
  if (!file) return undefined;
  const mod = { exports: {} };
  process.dlopen(mod, file);
  return (loaded = mod.exports) as T;
}
