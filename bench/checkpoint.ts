/**
 * npm run bench -- checkpoint [--quick]
 * Checkpoint save / restore (and a restore again with the first one's undo point kept) / diff at 1,000, 10,000 and 50,000 files, fork of a 10 MiB and a
 * 1 GiB vault next to copying the vault file, and what each checkpoint holds alone on 1,000
 * checkpoints of a 10,000-file vault next to a scan of every checkpoint's extents, all measured in this one run.
 */
import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { diffTrees } from '../host/store/diff';
import { forkVault } from '../host/store/forks';
import { AvfsHome } from '../host/store/home';
import { Vfs } from '../host/vfs/vfs';

const quick = process.argv.includes('--quick');
/** Leaves out the forks (the 1 GiB one writes a gigabyte): for a run about checkpoints alone. */
const noFork = process.argv.includes('--no-fork');
const REPS = quick ? 3 : 7;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** CPU time (user + system) of this process in the last time() call, in ms: less swayed by a loaded machine than wall time. */
let lastCpu = 0;
function time(fn: () => void): number {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  fn();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  lastCpu = (c.user + c.system) / 1000;
  return ms;
}

const fmt = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(1));
const dir = mkdtempSync(join(tmpdir(), 'avfs-bench-cp-'));
const home = new AvfsHome(dir);

console.log(`$ npm run bench -- checkpoint${quick ? ' --quick' : ''}${noFork ? ' --no-fork' : ''}`);
const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
console.log(`node ${process.version}, ${cpus().length} cpus (${cpus()[0]?.model ?? '?'}), medians of ${REPS} runs, load average at the start ${load()}\n`);

/** A tree of `n` small files, 100 per directory, like a source tree. */
function populate(vfs: Vfs, n: number): void {
  vfs.mutate('/', () => {
    for (let i = 0; i < n; i++) {
      if (i % 100 === 0) vfs.mkdir(`/d${i / 100}`);
      vfs.writeFile(`/d${Math.floor(i / 100)}/f${i}.ts`, Buffer.from(`export const v${i} = ${i};\n`));
    }
  });
}

const rows: string[][] = [['files', 'save ms', 'restore ms', 'restore cpu ms', 'again, undo kept: ms', 'cpu ms', 'diff ms (100 changed)', 'targets']];
const sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 50_000];
for (const n of sizes) {
  const v = home.create(`cp${n}`);
  const vfs = new Vfs(v);
  populate(vfs, n);
  const save: number[] = [];
  const restore: number[] = [];
  const restoreCpu: number[] = [];
  // A second restore while the first one's undo point is still kept (on SQLite it is parked, and
  // this restore first folds it into the checkpoint tables: docs/architecture.md, "Restore").
  const again: number[] = [];
  const againCpu: number[] = [];
  const diff: number[] = [];
  v.checkpoints.save({ name: 'base' });
  for (let r = 0; r < REPS; r++) {
    // Change 100 files, then measure diff against base, a save, and a restore of base.
    vfs.mutate('/', () => {
      for (let i = 0; i < 100; i++) vfs.writeFile(`/d${i % Math.ceil(n / 100)}/f${i * 7 % n}.ts`, Buffer.from(`changed ${r}\n`));
    });
    const base = v.checkpoints.get('base');
    diff.push(time(() => diffTrees(v.store, v.inodes.chunks, { kind: 'checkpoint', id: base.id, name: 'base' }, { kind: 'live' })));
    save.push(time(() => v.checkpoints.save({ name: `s${r}` })));
    restore.push(time(() => v.checkpoints.restore('base')));
    restoreCpu.push(lastCpu);
    again.push(time(() => v.checkpoints.restore('base')));
    againCpu.push(lastCpu);
    // Keep the vault from growing run to run: drop what this run added.
    for (const c of v.checkpoints.list()) if (c.name !== 'base') v.checkpoints.delete(c.name);
  }
  const target =
    n === 10_000
      ? `save ≤ 30: ${median(save) <= 30 ? 'PASS' : 'MISS'}, restore ≤ 100: ${median(restore) <= 100 ? 'PASS' : 'MISS'}`
      : n === 50_000
        ? `restore ≤ 100: ${median(restore) <= 100 ? 'PASS' : 'MISS'}`
        : '';
  rows.push([n.toLocaleString('en'), fmt(median(save)), fmt(median(restore)), fmt(median(restoreCpu)), fmt(median(again)), fmt(median(againCpu)), fmt(median(diff)), target]);
  v.close();
  home.removeFiles(`cp${n}`);
}

const forkRows: string[][] = [['vault bytes', 'vault file', 'fork ms', 'copy vault file ms', 'copy ÷ fork', 'target ≤ 50 ms']];
const MiB = 1024 * 1024;
for (const [label, bytes] of noFork ? [] : quick ? ([['10 MiB', 10 * MiB]] as const) : ([['10 MiB', 10 * MiB], ['1 GiB', 1024 * MiB]] as const)) {
  const name = `fork-src-${bytes}`;
  const v = home.create(name);
  const vfs = new Vfs(v);
  // 200 source-like files plus the bulk in 8 MiB files.
  populate(vfs, 200);
  // Distinct random bytes, so nothing deduplicates and the file really holds `bytes`.
  for (let i = 0; i * 8 * MiB < bytes; i++) vfs.writeFile(`/blob${i}.bin`, randomBytes(8 * MiB));
  v.db.pragma('wal_checkpoint(TRUNCATE)');
  const forkMs: number[] = [];
  const copyMs: number[] = [];
  for (let r = 0; r < REPS; r++) {
    forkMs.push(time(() => forkVault(home, name, `${name}-f${r}`).close()));
    const dst = join(dir, `copy-${r}.avfs`);
    copyMs.push(time(() => copyFileSync(v.file, dst)));
    rmSync(dst);
    home.removeFiles(`${name}-f${r}`);
  }
  forkRows.push([label, `${(statSync(v.file).size / MiB).toFixed(0)} MiB`, fmt(median(forkMs)), fmt(median(copyMs)), `${(median(copyMs) / median(forkMs)).toFixed(1)}×`, median(forkMs) <= 50 ? 'PASS' : 'MISS']);
  v.close();
  home.removeFiles(name);
}
// What each checkpoint holds alone, on many checkpoints of a 10,000-file vault: the counts kept in
// cp_refs against working it out from every checkpoint's extents, as a list would without them.
const MANY = quick ? 100 : 1_000;
const aloneRows: string[][] = [['checkpoints × files', 'count all (once) ms', 'list with alone ms', 'save + list ms', 'scan every checkpoint ms', 'vault file']];
{
  const v = home.create('many');
  const vfs = new Vfs(v);
  populate(vfs, 10_000);
  v.checkpoints.setRetention({ keep_last: null, max_age_ms: null, hold_recent_ms: 0 });
  for (let c = 0; c < MANY; c++) {
    // Like an agent's runs: each changes a few files, then the next run's checkpoint is taken.
    vfs.mutate('/', () => {
      for (let i = 0; i < 10; i++) vfs.writeFile(`/d${(c * 7 + i) % 100}/f${((c * 7 + i) % 100) * 100 + i}.ts`, Buffer.from(`run ${c} ${i}\n`));
    });
    v.checkpoints.save({ auto: true, prefix: 'exec' });
  }
  v.db.exec('DELETE FROM cp_refs; DELETE FROM cp_counted');
  const countAll = time(() => v.checkpoints.refs.sync());
  const list: number[] = [];
  const saveList: number[] = [];
  const scan: number[] = [];
  const listAlone = () => {
    const alone = v.checkpoints.aloneBytes()!;
    v.checkpoints.list().map((c) => alone.get(c.id) ?? 0);
  };
  for (let r = 0; r < REPS; r++) {
    list.push(time(listAlone));
    vfs.writeFile('/d0/f0.ts', Buffer.from(`again ${r}\n`));
    saveList.push(time(() => {
      v.checkpoints.save({ auto: true, prefix: 'exec' });
      listAlone();
    }));
    if (r === 0) {
      scan.push(time(() => v.db.prepare(
        `SELECT x.cp, SUM(LENGTH(c.data)) FROM (SELECT hash, MIN(cp) AS cp, COUNT(DISTINCT cp) AS k FROM cp_extents GROUP BY hash) x JOIN chunks c ON c.hash = x.hash
          WHERE x.k = 1 AND x.hash NOT IN (SELECT hash FROM extents) GROUP BY x.cp`,
      ).all()));
    }
  }
  v.db.pragma('wal_checkpoint(TRUNCATE)');
  aloneRows.push([`${MANY.toLocaleString('en')} × 10,000`, fmt(countAll), fmt(median(list)), fmt(median(saveList)), fmt(median(scan)), `${(statSync(v.file).size / 1024 / 1024).toFixed(0)} MiB`]);
  v.close();
  home.removeFiles('many');
}
rmSync(dir, { recursive: true, force: true });

const print = (rs: string[][]) => {
  const w = rs[0]!.map((_, c) => Math.max(...rs.map((r) => (r[c] ?? '').length)));
  for (const r of rs) console.log('| ' + r.map((c, i) => c.padEnd(w[i]!)).join(' | ') + ' |');
};
print(rows);
console.log();
if (!noFork) {
  print(forkRows);
  console.log();
}
print(aloneRows);
console.log(`\nload average at the end ${load()}`);
