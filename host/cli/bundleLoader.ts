/**
 * Loads a file of the CLI's bundle with V8's code cache. Compiling the 1.5 MB core costs about
 * as much as starting Node; with the cache V8 made from it at build time (a `.cache` file beside
 * it) that compile is skipped. A cache V8 rejects (another Node, other flags) only costs a file
 * read: the file is then compiled as usual.
 */
import { isAscii } from 'node:buffer';
import { readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Script } from 'node:vm';

export function requireWithCodeCache<T>(file: string): T {
  // The build writes the core in ASCII (scripts/build.mjs), which decodes as Latin-1 in a third of
  // UTF-8's time (~1.5 ms against ~4.5 ms for the 1 MB file); a file that is not ASCII is UTF-8.
  const bytes = readFileSync(file);
  const source = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(`${file}.cache`);
  } catch {
    /* no cache: compile as usual */
  }
  // The bundle holds no import() (scripts/build.mjs lowers it to require), which a vm.Script could not resolve.
  const script = new Script(Module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  const mod = { exports: {} as T };
  (script.runInThisContext() as (...a: unknown[]) => void).call(mod.exports, mod.exports, createRequire(file), mod, file, dirname(file));
  // The build writes the cache (scripts/build.mjs): `exit`, as the call ends, so it also holds
  // what the call compiled as it ran; `1`, right after loading.
  const write = process.env.AVFS_WRITE_CODE_CACHE;
  if (write === '1') writeFileSync(`${file}.cache`, script.createCachedData());
  if (write === 'exit') process.on('exit', () => writeFileSync(`${file}.cache`, script.createCachedData()));
  return mod.exports;
}
