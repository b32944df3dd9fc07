/**
 * npm run bench -- apply [--quick]
 * `avfs apply` (the project/apply operation, in-process) of a vault made from a project folder of
 * 1,000 and 10,000 files, with 100 files changed in the vault each round: the whole apply, once on a
 * kept connection (as the host runs it) and once opening and closing the vault (as the CLI does
 * without a host), beside two figures from the same run: the time just to read those 100 files on
 * both sides (the vault's version and the project's, which a three-way apply cannot avoid), and
 * `cp -r` of the same 100 changed files over the project (one process: the plain way to write them,
 * with no check and no way back). Target: O(changes), ≤ 100 ms past reading the 100 files at 10,000.
 * The host's apply is run twice a round: as it writes now (files the project has rewritten in place,
 * their old bytes in the journal) and as it wrote before (AVFS_APPLY_WRITE=staged: each a new file
 * renamed over the old), so the two are measured side by side on the same machine load.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpsContext } from '../host/ops/context';
import { projectOps } from '../host/ops/project';
import { KeptVaults, oneShotVaults } from '../host/ops/vaultAccess';
import { createPolicyEngine } from '../host/policy/engine';
import { METHODS } from '../host/protocol/methods';
import { AvfsHome } from '../host/store/home';
import { Vfs } from '../host/vfs/vfs';

const quick = process.argv.includes('--quick');
const REPS = quick ? 3 : 5;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const load = () => loadavg()[0]!.toFixed(1);

console.log(`$ npm run bench -- apply${quick ? ' --quick' : ''}`);
console.log(`node ${process.version}, ${cpus().length} cpus (${cpus()[0]?.model ?? '?'}), load ${loadavg().map((l) => l.toFixed(2)).join(' ')}, medians of ${REPS} runs\n`);

const dir = mkdtempSync(join(tmpdir(), 'avfs-bench-apply-'));
const home = new AvfsHome(join(dir, 'home'));
const kept = new KeptVaults(home);
const ctxOf = (vaults: OpsContext['vaults']): OpsContext => ({ home, surface: 'cli', vaults, engine: () => createPolicyEngine() });
const modes = [
  { label: 'kept connection (host)', ctx: ctxOf(kept), write: 'in-place' },
  { label: 'one-shot (CLI)', ctx: ctxOf(oneShotVaults(home)), write: 'in-place' },
  { label: 'kept connection (host), staged', ctx: ctxOf(kept), write: 'staged' },
];
const rows: string[][] = [
  ['files', 'load', 'apply ms, host', 'apply ms, CLI', 'host, staged (before)', 'reading the 100 ms', 'cp -r of the 100 ms', 'host past reading ms', 'staged past reading ms', 'target (10,000)'],
];
try {
  for (const n of [1_000, 10_000]) {
    const proj = join(dir, `p${n}`);
    for (let i = 0; i < n; i++) {
      if (i % 100 === 0) mkdirSync(join(proj, `d${i / 100}`), { recursive: true });
      writeFileSync(join(proj, `d${Math.floor(i / 100)}`, `f${i}.ts`), `export const v${i} = ${i};\n`);
    }
    const name = `a${n}`;
    projectOps['project/create'](modes[1]!.ctx, METHODS['project/create'].params.parse({ name, host_path: proj, use: false }));
    const whole = modes.map(() => [] as number[]);
    const reading: number[] = [];
    const copying: number[] = [];
    const loads: string[] = [load()];
    let round = 0;
    for (let r = 0; r < REPS; r++) {
      for (const [m, mode] of modes.entries()) {
        round++;
        const changed = Array.from({ length: 100 }, (_, i) => (i * (n / 100) + round) % n).map((k) => `d${Math.floor(k / 100)}/f${k}.ts`);
        const unique = [...new Set(changed)];
        const v = home.open(name);
        const vfs = new Vfs(v);
        vfs.mutate('/', () => {
          for (const p of unique) vfs.writeFile('/' + p, Buffer.from(`export const changed = ${round};\n`));
        });
        if (m === 0) {
          // What a three-way apply must read anyway: each changed file in the vault and in the project.
          const t0 = performance.now();
          for (const p of unique) {
            vfs.readFile('/' + p);
            readFileSync(join(proj, p));
          }
          reading.push(performance.now() - t0);
        }
        v.close();
        process.env.AVFS_APPLY_WRITE = mode.write;
        const t1 = performance.now();
        const res = projectOps['project/apply'](mode.ctx, METHODS['project/apply'].params.parse({ vault: name }));
        whole[m]!.push(performance.now() - t1);
        delete process.env.AVFS_APPLY_WRITE;
        if (res.applied !== unique.length) throw new Error(`applied ${res.applied} of ${unique.length}`);
        if (m === 1) {
          // The baseline: the same 100 files (as the vault now has them) copied over the project by cp.
          const src = join(dir, `cp-${n}-${r}`);
          for (const p of unique) {
            mkdirSync(join(src, p, '..'), { recursive: true });
            writeFileSync(join(src, p), `export const copied = ${round};\n`);
          }
          const t2 = performance.now();
          const c = spawnSync('cp', ['-r', `${src}/.`, proj]);
          copying.push(performance.now() - t2);
          if (c.status !== 0) throw new Error(`cp failed: ${c.stderr}`);
          rmSync(src, { recursive: true });
          // The project now differs from the vault's base at those paths: bring it back, so the next round has no conflict.
          for (const p of unique) writeFileSync(join(proj, p), `export const changed = ${round};\n`);
        }
      }
    }
    loads.push(load());
    const w = median(whole[0]!);
    const staged = median(whole[2]!);
    const rd = median(reading);
    rows.push([
      n.toLocaleString('en'),
      loads.join('–'),
      fmt(w),
      fmt(median(whole[1]!)),
      fmt(staged),
      fmt(rd),
      fmt(median(copying)),
      fmt(w - rd),
      fmt(staged - rd),
      n === 10_000 ? `≤ 100 past reading: ${w - rd <= 100 ? 'met' : 'missed'}` : '',
    ]);
  }
} finally {
  kept.closeAll();
  rmSync(dir, { recursive: true, force: true });
}
const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i]!)).join('  '));
