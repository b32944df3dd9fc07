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
 * call, and the extension host starts every onStartupFinished extension in one loop: the code
 * loading of the extensions started before this one in that loop (built-in ones come first) falls
 * inside its count. So does the machine's load. The comparison is what tells.
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

async function measure(dir: string, extensionsDir: string, displayName: string): Promise<{ times: number[]; loads: number[] }> {
  const state = join(dir, 'state');
  mkdirSync(state, { recursive: true });
  symlinkSync(extensionsDir, join(state, 'extensions'));
  const folder = join(dir, 'folder');
  mkdirSync(folder);
  const server = await startCodeServer({ stateDir: state, settings: QUIET_SETTINGS, env: { AVFS_HOME: join(dir, 'avfs-home') }, smokeTestDriver: false });
  // Tall enough that the Running Extensions list renders every row (it renders only those in view).
  const browser = await launchBrowser({ userDataDir: join(dir, 'chromium'), height: 3000 });
  const times: number[] = [];
  const loads: number[] = [];
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
      const loadMs = Number(/loading .*? ([\d.]+) ms \(its marks\)/.exec(marked.at(-1) ?? '')?.[1]);
      if (i > 0 && Number.isFinite(loadMs)) loads.push(loadMs);
      if (all) console.log(others.map((o) => `      ${o.name}: ${o.text}`).join('\n'));
      // The first window's figure includes the extension host's first start (caches cold): shown, not counted.
      console.log(`    window ${i === 0 ? 'first' : `reload ${i}`}: ${ms} ms; loading the main module by the host's marks: ${Number.isFinite(loadMs) ? `${loadMs} ms` : 'not logged'}${i === 0 ? ' (not counted)' : ''}`);
      if (i > 0) times.push(ms);
    }
  } finally {
    await browser.context.close();
    await server.stop();
  }
  return { times, loads };
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
    const results: { name: string; times: number[]; loads: number[] }[] = [];
    for (const way of WAYS) {
      writeFileSync(manifestFile, JSON.stringify({ ...JSON.parse(manifest), main: way.main }, null, 2));
      console.log(`  ${way.name} (main ${way.main})`);
      results.push({ name: way.name, ...(await measure(join(t, way.name.replace(' ', '-')), extensionsDir, displayName)) });
    }
    writeFileSync(manifestFile, manifest);
    console.log(`\n  ${'way'.padEnd(12)} ${'Show Running Extensions'.padEnd(36)} loading the main module (the host's marks)`);
    const cell = (xs: number[]) => (xs.length ? `median ${median(xs)} ms (${xs.map((x) => Math.round(x * 10) / 10).join(', ')})` : 'not logged');
    for (const r of results) console.log(`  ${r.name.padEnd(12)} ${cell(r.times).padEnd(36)} ${cell(r.loads)}`);
    console.log(`  load average after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    rmSync(t, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : String(e));
  process.exit(1);
});
