// Renders a terminal session of the avfs CLI (the demo) to docs/screenshot.png with headless Chromium.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const home = mkdtempSync(join(tmpdir(), 'avfs-shot-'));
const env = { ...process.env, AVFS_HOME: home };
const lines = [];
function avfs(...args) {
  const r = spawnSync(process.execPath, [join(root, 'dist/avfs.js'), ...args], { env, encoding: 'utf8', cwd: root });
  const shown = args.map((a) => (/\s/.test(a) ? `'${a}'` : a)).join(' ');
  lines.push(`<span class="p">$</span> <b>avfs ${esc(shown)}</b>`);
  const out = (r.stdout + r.stderr).trimEnd();
  if (out) lines.push(esc(out));
  if (r.status !== 0) lines.push(`<span class="dim">exit ${r.status}</span>`);
}
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

avfs('vault', 'create', 'demo', '--max-size-mb', '256');
avfs('import', 'host/store', '/src');
avfs('checkpoint', 'save', 'green', '-m', 'tests pass');
avfs('write', '/src/notes.md', '# todo');
avfs('rm', '/src/gc.ts');
avfs('checkpoint', 'diff', 'green');
avfs('--json', 'cat', '/src/missing.ts');
avfs('checkpoint', 'restore', 'green');
avfs('vault', 'fork', 'demo', 'task-1');
avfs('vault', 'list');

const html = `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#1e1e1e;color:#d4d4d4;font:14px/1.45 'DejaVu Sans Mono',monospace}
pre{margin:0;padding:18px 22px;white-space:pre-wrap}b{color:#fff}.p{color:#4ec9b0}.dim{color:#888}
</style><pre>${lines.join('\n')}</pre>`;
const page = join(home, 'shot.html');
writeFileSync(page, html);
const out = join(root, 'docs', 'screenshot.png');
execFileSync('chromium', [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', `--user-data-dir=${join(home, 'chrome')}`, '--hide-scrollbars',
  `--screenshot=${out}`, '--window-size=900,560', `file://${page}`,
], { stdio: 'ignore' });
console.log(`wrote ${out}`);
