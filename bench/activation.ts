/**
 * The extension's activation time by VS Code's own count ("Developer: Show Running Extensions":
 * loading the main module plus the activate() call), in a real code-server window with the
 * extension installed from its VSIX, as a person has it. Side by side:
 *
 *   split       the VSIX as it ships: main is dist/extension.js, the small entry, which loads
 *               dist/extension-core.js after activate() has returned
 *   one bundle  the same installed VSIX with main pointed at dist/extension-core.js, the whole
 *               extension in one file, as it was before the split
 *
 *   npm run bench -- activation [--n N] [--all]
 *
 * Builds the VSIX when none of the current sources is cached (scripts/vscode/installed.mjs, about a
 * minute), installs it into a temporary code-server, and for each way opens a window, waits for the
 * AVFS vault host to be ready, reads the figure, and reloads the window N times (each reload is a
 * new extension host, so a new activation). Prints each figure and the medians; --all also every
 * running extension's figure, as the editor lists them.
 *
 * What VS Code counts is wall time from the start of loading the module to the end of the activate()
 * call (codeLoadingTime + activateCallTime; activateResolvedTime, the returned promise, is not in it),
 * and its clock starts before an await in which the extensions started before this one in the same
 * loop (every onStartupFinished one, built-in ones first) load their code. So each window's row is
 * printed beside what it holds, by the extension host's own marks, which the extension logs: our
 * part (loading the main module, the activate() call) and the other extensions' code loading that
 * fell inside the row's clock. The machine's load is in all of it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchBrowser } from '../scripts/vscode/browser.mjs';
import { QUIET_SETTINGS, startCodeServer } from '../scripts/vscode/codeServer.mjs';
import { ensureInstalled } from '../scripts/vscode/installed.mjs';
import { runningExtensionActivation } from '../scripts/vscode/runningExtensions.mjs';

const args = process.argv.slice(2);
const at = args.indexOf('--n');
const n = at >= 0 ? Number(args[at + 1]) : 3;
const all = args.includes('--all');
if (!Number.isInteger(n) || n < 1) {
  console.error('usage: npm run bench -- activation [--n N] [--all]');
  process.exit(2);
}

const WAYS = [
  { name: 'split', main: './dist/extension.js' },
  { name: 'one bundle', main: './dist/extension-core.js' },
] as const;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** One window's figures: VS Code's row, and what it holds by the extension host's marks (the extension's log line). */
interface Window {
  row: number;
  /** Loading our main module and our activate() call, by the host's marks and the entry's clock. */
  ours: number | undefined;
  /** Other extensions' code loading that fell inside the row's clock, by their marks. */
  others: { id: string; ms: number }[];
}

/** What the extension logged about its activation (extension/extension.ts), read against VS Code's row. */
function windowOf(row: number, line: string | undefined): Window {
  const load = Number(/loading .*? ([\d.]+) ms \(its marks\)/.exec(line ?? '')?.[1]);
  // The split entry's activate() call; as one bundle, the core's activate() is the call.
  const call = Number((/its activate\(\) call ([\d.]+) ms/.exec(line ?? '') ?? /activated in ([\d.]+) ms/.exec(line ?? ''))?.[1] ?? 0);
  if (!Number.isFinite(load)) return { row, ours: undefined, others: [] };
  // The row's clock starts at our load's end minus the row's code-loading part (row − call): an
  // extension whose loading began after that, and ended before ours began, is inside it (1 ms: the
  // row's clock is Date.now()).
  const gap = row - load - call + 1;
  const before = /other extensions' code loaded in the second before: (.*)$/.exec(line ?? '')?.[1] ?? '';
  const others = [...before.matchAll(/(\S+) ([\d.]+) ms ending ([\d.]+) ms before/g)]
    .map(([, id, ms, end]) => ({ id: id!, ms: Number(ms), end: Number(end) }))
    .filter((o) => o.end + o.ms <= gap)
    .map(({ id, ms }) => ({ id, ms }));
  return { row, ours: load + call, others };
}

const sum = (xs: { ms: number }[]) => xs.reduce((a, x) => a + x.ms, 0);
const r1 = (x: number) => Math.round(x * 10) / 10;

async function measure(dir: string, extensionsDir: string, displayName: string): Promise<Window[]> {
  const state = join(dir, 'state');
  mkdirSync(state, { recursive: true });
  symlinkSync(extensionsDir, join(state, 'extensions'));
  const folder = join(dir, 'folder');
  mkdirSync(folder);
  const server = await startCodeServer({ stateDir: state, settings: QUIET_SETTINGS, env: { AVFS_HOME: join(dir, 'avfs-home') }, smokeTestDriver: false });
  // Tall enough that the Running Extensions list renders every row (it renders only those in view).
  const browser = await launchBrowser({ userDataDir: join(dir, 'chromium'), height: 3000 });
  const windows: Window[] = [];
  const seen = new Set<string>();
  try {
    const page = browser.page;
    page.setDefaultTimeout(90_000);
    await page.goto(server.workbenchUrl({ folder }));
    for (let i = 0; i <= n; i++) {
      if (i > 0) await page.reload();
      await page.locator('#workbench\\.parts\\.statusbar').getByRole('button', { name: /^AVFS vault host: ready/ }).waitFor();
      const { ms, others } = await runningExtensionActivation(page, displayName);
      // The extension's log line of this window: the host's own marks around loading the main module.
      const marked = [...new Set(logLines(state))].filter((l) => !seen.has(l));
      for (const l of marked) seen.add(l);
      const w = windowOf(ms, marked.at(-1));
      if (all) console.log(others.map((o) => `      ${o.name}: ${o.text}`).join('\n'));
      const held = w.ours === undefined
        ? 'our marks not logged'
        : `ours ${r1(w.ours)} ms (loading the main module + the activate() call) + ${r1(sum(w.others))} ms loading other extensions' code` +
          `${w.others.length ? ` (${w.others.map((o) => `${o.id} ${r1(o.ms)}`).join(', ')})` : ''} + ${r1(ms - w.ours - sum(w.others))} ms the rest`;
      // The first window's figure includes the extension host's first start (caches cold): shown, not counted.
      console.log(`    window ${i === 0 ? 'first' : `reload ${i}`}: Show Running Extensions ${ms} ms = ${held}${i === 0 ? ' (not counted)' : ''}`);
      if (i > 0) windows.push(w);
    }
  } finally {
    await browser.context.close();
    await server.stop();
  }
  return windows;
}

/** The AVFS log lines that say how long loading the main module took, from every window's log under `dir`. */
function logLines(dir: string): string[] {
  const r = spawnSync('grep', ['-rh', '--include=AVFS.log', "VS Code's part: loading", dir], { encoding: 'utf8' });
  return r.stdout.split('\n').filter(Boolean);
}

async function main(): Promise<void> {
  const t = mkdtempSync(join(tmpdir(), 'avfs-bench-activation-'));
  try {
    const install = join(t, 'install');
    mkdirSync(install);
    const made = await ensureInstalled({ stateDir: install, log: (line) => console.log(`  ${line}`) });
    const extensionsDir = join(install, 'extensions');
    const record = JSON.parse(readFileSync(join(extensionsDir, 'extensions.json'), 'utf8')) as { location: { path: string } }[];
    const manifestFile = join(record[0]!.location.path, 'package.json');
    const manifest = readFileSync(manifestFile, 'utf8');
    const { displayName } = JSON.parse(manifest) as { displayName: string };
    console.log(`activation by VS Code's count (Show Running Extensions), VSIX ${made.hash}, ${n} reloads each; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const results: { name: string; windows: Window[] }[] = [];
    for (const way of WAYS) {
      writeFileSync(manifestFile, JSON.stringify({ ...JSON.parse(manifest), main: way.main }, null, 2));
      console.log(`  ${way.name} (main ${way.main})`);
      results.push({ name: way.name, windows: await measure(join(t, way.name.replace(' ', '-')), extensionsDir, displayName) });
    }
    writeFileSync(manifestFile, manifest);
    const cell = (xs: number[]) => (xs.length ? `${r1(median(xs))} (${xs.map(r1).join(', ')})` : 'not logged');
    console.log(`\n  medians in ms, each window's in brackets`);
    console.log(`  ${'way'.padEnd(12)} ${"VS Code's row".padEnd(28)} ${'ours: load + activate()'.padEnd(28)} other extensions' code loading inside the row`);
    for (const r of results) {
      const ours = r.windows.flatMap((w) => (w.ours === undefined ? [] : [w.ours]));
      const others = r.windows.flatMap((w) => (w.ours === undefined ? [] : [sum(w.others)]));
      console.log(`  ${r.name.padEnd(12)} ${cell(r.windows.map((w) => w.row)).padEnd(28)} ${cell(ours).padEnd(28)} ${cell(others)}`);
    }
    console.log(`  load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    rmSync(t, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : String(e));
  process.exit(1);
});
