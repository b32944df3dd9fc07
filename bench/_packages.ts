/** Ten local npm packages of 100 files each, packed as tarballs: what the `npm install` workloads install (from a local cache only). */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Packs the packages under `scratch`; returns the dependencies a project names them by (`file:` tarballs). */
export function localPackages(scratch: string, env: Record<string, string | undefined>): Record<string, string> {
  const pkgs = join(scratch, 'pkgs');
  mkdirSync(pkgs);
  const deps: Record<string, string> = {};
  for (let p = 0; p < 10; p++) {
    const src = join(scratch, `src-${p}`);
    mkdirSync(join(src, 'lib'), { recursive: true });
    writeFileSync(join(src, 'package.json'), JSON.stringify({ name: `bench-dep-${p}`, version: '1.0.0', main: 'lib/f0.js' }));
    for (let i = 0; i < 100; i++) writeFileSync(join(src, 'lib', `f${i}.js`), `module.exports = ${i};\n// ${'x'.repeat(2000)}\n`);
    const r = spawnSync('npm', ['pack', '--silent', '--pack-destination', pkgs], { cwd: src, env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`npm pack failed: ${r.stderr}`);
    deps[`bench-dep-${p}`] = `file:${join(pkgs, r.stdout.trim())}`;
  }
  return deps;
}
