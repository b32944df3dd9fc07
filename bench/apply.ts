/**
 * npm run bench -- apply [--quick]
 * `avfs apply` (the project/apply operation, in-process) of a vault made from a project folder of
 * 1,000 and 10,000 files, with 100 files changed in the vault each round: the whole apply, and the
 * same apply less the time it takes just to read those 100 files on both sides (the vault's
 * version and the project's, which a three-way apply cannot avoid). Target: O(changes), ≤ 100 ms
 * past reading the 100 files at 10,000.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpsContext } from '../host/ops/context';
import { projectOps } from '../host/ops/project';
import { oneShotVaults } from '../host/ops/vaultAccess';
import { createPolicyEngine } from '../host/policy/engine';
import { METHODS } from '../host/protocol/methods';
import { AvfsHome } from '../host/store/home';
import { Vfs } from '../host/vfs/vfs';

const quick = process.argv.includes('--quick');
const REPS = quick ? 3 : 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));

console.log(`$ npm run bench -- apply${quick ? ' --quick' : ''}`);
console.log(`node ${process.version}, ${cpus().length} cpus (${cpus()[0]?.model ?? '?'}), load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, medians of ${REPS} runs\n`);

const dir = mkdtempSync(join(tmpdir(), 'avfs-bench-apply-'));
const home = new AvfsHome(join(dir, 'home'));
const ctx: OpsContext = { home, surface: 'cli', vaults: oneShotVaults(home), engine: () => createPolicyEngine() };
const rows: string[][] = [['files', 'apply ms (100 changed)', 'reading the 100 files ms', 'apply past reading ms', 'target (10,000)']];
try {
  for (const n of [1_000, 10_000]) {
    const proj = join(dir, `p${n}`);
    for (let i = 0; i < n; i++) {
      if (i % 100 === 0) mkdirSync(join(proj, `d${i / 100}`), { recursive: true });
      writeFileSync(join(proj, `d${Math.floor(i / 100)}`, `f${i}.ts`), `export const v${i} = ${i};\n`);
    }
    const name = `a${n}`;
    projectOps['project/create'](ctx, METHODS['project/create'].params.parse({ name, host_path: proj, use: false }));
    const whole: number[] = [];
    const reading: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const changed = Array.from({ length: 100 }, (_, i) => (i * (n / 100) + r) % n).map((k) => `d${Math.floor(k / 100)}/f${k}.ts`);
      const unique = [...new Set(changed)];
      const v = home.open(name);
      const vfs = new Vfs(v);
      vfs.mutate('/', () => {
        for (const p of unique) vfs.writeFile('/' + p, Buffer.from(`export const changed = ${r};\n`));
      });
      // What a three-way apply must read anyway: each changed file in the vault and in the project.
      const t0 = performance.now();
      for (const p of unique) {
        vfs.readFile('/' + p);
        readFileSync(join(proj, p));
      }
      reading.push(performance.now() - t0);
      v.close();
      const t1 = performance.now();
      const res = projectOps['project/apply'](ctx, METHODS['project/apply'].params.parse({ vault: name }));
      whole.push(performance.now() - t1);
      if (res.applied !== unique.length) throw new Error(`applied ${res.applied} of ${unique.length}`);
    }
    const w = median(whole);
    const rd = median(reading);
    rows.push([n.toLocaleString('en'), fmt(w), fmt(rd), fmt(w - rd), n === 10_000 ? `≤ 100 past reading: ${w - rd <= 100 ? 'met' : 'missed'}` : '']);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  '));
