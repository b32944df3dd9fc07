/**
 * The Executions webview: the list of runs (left) and the selected run's detail (right): output,
 * decision, changed files with inline diffs, and the actions (Open Changes, Restore to before this
 * run, each file's Open Diff). Everything it shows comes from the extension by messages checked
 * against webview/protocol.ts; what it keeps across hide/show (the selected run, the tab) is in
 * the webview state. Text is always set as text (never as HTML); colours are the theme's variables.
 */
import '@vscode-elements/elements/dist/vscode-badge/index.js';
import '@vscode-elements/elements/dist/vscode-button/index.js';
import '@vscode-elements/elements/dist/vscode-collapsible/index.js';
import '@vscode-elements/elements/dist/vscode-tabs/index.js';
import '@vscode-elements/elements/dist/vscode-tab-header/index.js';
import '@vscode-elements/elements/dist/vscode-tab-panel/index.js';
import { type FileDiff, type FromWebview, FromWebview as FromWebviewSchema, type RunDetail, type RunSummary, ToWebview, WebviewState } from './protocol';
import { remember } from './bounded';
import { STYLES } from './styles';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const TABS = ['output', 'changes', 'decision'] as const;
/** Short enough for the list's column; the whole action is the tooltip and is in the detail. */
const DECISION_LABEL: Record<string, string> = { allow: 'allow', allow_with_checkpoint: 'checkpoint', require_approval: 'approval', deny: 'deny' };

const saved = WebviewState.safeParse(vscode.getState());
const state: WebviewState = saved.success ? saved.data : { selected: null, tab: 'output' };
let runs: RunSummary[] = [];
let hostState = 'idle';
let detail: RunDetail | null = null;
let lastDetailJson = '';
/** The inline diffs of the last few runs shown (bounded: see bounded.ts). */
const diffs = new Map<string, FileDiff[]>();
/** Changed files whose inline diff is open, per run (the last few). */
const openFiles = new Map<string, Set<string>>();

const sheet = new CSSStyleSheet();
sheet.replaceSync(STYLES);
document.adoptedStyleSheets = [sheet];

const root = document.getElementById('avfs-executions')!;
const listPane = el('section', { class: 'list', 'aria-label': 'Executions' });
const detailPane = el('section', { class: 'detail', 'aria-label': 'Execution detail' });
root.append(listPane, detailPane);

function send(message: FromWebview): void {
  // Checked before it leaves: the extension checks again on arrival.
  vscode.postMessage(FromWebviewSchema.parse(message));
}

function save(): void {
  vscode.setState(state);
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const parsed = ToWebview.safeParse(event.data);
  if (!parsed.success) {
    console.warn(`AVFS executions: a message that does not match the protocol: ${parsed.error.message}`);
    return;
  }
  const m = parsed.data;
  switch (m.type) {
    case 'runs':
      runs = m.runs;
      hostState = m.hostState;
      renderList();
      break;
    case 'detail': {
      const json = JSON.stringify(m.run);
      if (json === lastDetailJson) return;
      lastDetailJson = json;
      const before = detail;
      detail = m.run;
      // While a run streams only its new output is added: the person's selection and scroll stay.
      if (!(before && m.run && appendRunning(before, m.run))) renderDetail();
      break;
    }
    case 'diffs':
      remember(diffs, m.id, m.files);
      if (detail?.summary.id === m.id) renderDetail();
      break;
    case 'select':
      select(m.id);
      break;
  }
});

function select(id: string): void {
  if (state.selected === id) return;
  state.selected = id;
  save();
  renderList();
  send({ type: 'select', id });
}

// ---- the list

function renderList(): void {
  listPane.replaceChildren();
  if (runs.length === 0) {
    listPane.append(
      el('p', { class: 'empty' }, hostState === 'ready' ? 'No command has run through the vault host yet. Runs of `avfs proxy exec` (from an agent, in any terminal) appear here as they happen.' : 'Waiting for the AVFS vault host…'),
    );
    return;
  }
  const table = el('table', { class: 'runs' });
  const head = el('tr', {}, ...['Command', 'Vault', 'Decision', 'State', 'Exit', 'Time'].map((h) => el('th', { scope: 'col' }, h)));
  table.append(el('thead', {}, head));
  const body = el('tbody');
  for (const r of runs) {
    const row = el(
      'tr',
      { class: `run${r.id === state.selected ? ' selected' : ''}`, tabindex: '0', 'data-run': r.id, 'aria-selected': String(r.id === state.selected) },
      el('td', { class: 'command', title: r.command }, r.command),
      el('td', {}, r.vault ?? '—'),
      el('td', {}, decisionBadge(r.decision)),
      el('td', {}, stateBadge(r)),
      el('td', { class: 'num' }, r.exit_code === null ? '—' : String(r.exit_code)),
      el('td', { class: 'num' }, r.duration_ms === null ? (r.running ? '…' : '—') : seconds(r.duration_ms)),
    );
    row.addEventListener('click', () => select(r.id));
    row.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') select(r.id);
    });
    body.append(row);
  }
  table.append(body);
  listPane.append(table);
}

function decisionBadge(decision: string | null): HTMLElement {
  if (!decision) return el('span', { class: 'muted' }, '—');
  return el('span', { class: `decision ${decision}`, title: decision.replace(/_/g, ' ') }, DECISION_LABEL[decision] ?? decision);
}

function stateBadge(r: RunSummary): HTMLElement {
  const kind = r.running ? 'running' : r.state === 'completed' && r.exit_code === 0 ? 'ok' : r.state === 'completed' ? 'nonzero' : r.state;
  return el('span', { class: `state ${kind}` }, r.running ? `${r.state.replace(/_/g, ' ')}…` : r.state.replace(/_/g, ' '));
}

// ---- the detail

/**
 * Adds what a running run printed since `before` to the shown output, and its new state to the
 * facts line; false when more than that changed (another run, it ended, a stream appeared or its
 * live text was cut): then the detail is drawn anew.
 */
function appendRunning(before: RunDetail, next: RunDetail): boolean {
  if (before.summary.id !== next.summary.id || !before.summary.running || !next.summary.running) return false;
  const grown: [HTMLElement, string][] = [];
  for (const name of ['stdout', 'stderr'] as const) {
    const [was, now] = [before[name].text, next[name].text];
    if (was === now) continue;
    const pre = detailPane.querySelector<HTMLElement>(`.output pre.${name}`);
    if (!pre || !now.startsWith(was)) return false;
    grown.push([pre, now.slice(was.length)]);
  }
  for (const [pre, text] of grown) {
    const bottom = atBottom(pre);
    pre.append(text);
    if (bottom) pre.scrollTop = pre.scrollHeight;
  }
  detailPane.querySelector('.facts')?.replaceWith(factsLine(next));
  return true;
}

/** Scrolled to the end (within a line): new output keeps it there; anywhere else it stays put. */
function atBottom(e: HTMLElement): boolean {
  return e.scrollTop + e.clientHeight >= e.scrollHeight - 16;
}

function factsLine(d: RunDetail): HTMLElement {
  const s = d.summary;
  return el(
    'p',
    { class: 'facts' },
    `${s.vault ?? 'no vault'}${d.cwd && d.cwd !== '/' ? ` · ${d.cwd}` : ''} · `,
    stateBadge(s),
    s.exit_code !== null ? ` · exit ${s.exit_code}` : '',
    s.duration_ms !== null ? ` · ${seconds(s.duration_ms)}` : '',
    ` · ${d.surface}`,
  );
}

function renderDetail(): void {
  const old = detailPane.querySelector<HTMLElement>('.output pre');
  const scroll = old ? { top: old.scrollTop, bottom: atBottom(old) } : undefined;
  detailPane.replaceChildren();
  if (!detail) {
    detailPane.append(el('p', { class: 'empty' }, runs.length ? 'Select a run to see its output, its decision and what it changed.' : ''));
    return;
  }
  const d = detail;
  const s = d.summary;
  const actions = el('div', { class: 'actions' });
  const changes = button('Open Changes', () => send({ type: 'openChanges', id: s.id }), !s.running && d.checkpoint !== null && d.changes.length > 0);
  changes.setAttribute('title', d.checkpoint ? 'Every changed file, before this run and now, in the multi-file diff editor' : 'No checkpoint: open each file from the list');
  const restore = button('Restore to before this run', () => send({ type: 'restore', id: s.id }), d.restore.enabled, true);
  restore.setAttribute('title', d.restore.reason);
  actions.append(changes, restore);
  detailPane.append(el('h2', { class: 'title' }, el('code', {}, s.command)), factsLine(d), actions);
  if (!d.restore.enabled) detailPane.append(el('p', { class: 'note restore-note' }, d.restore.reason));
  if (d.error) detailPane.append(el('p', { class: 'error' }, d.error));

  const tabs = document.createElement('vscode-tabs');
  tabs.setAttribute('selected-index', String(TABS.indexOf(state.tab)));
  tabs.addEventListener('vsc-tabs-select', (e: Event) => {
    const index = (e as CustomEvent<{ selectedIndex: number }>).detail.selectedIndex;
    state.tab = TABS[index] ?? 'output';
    save();
  });
  const header = (text: string, count?: number) => {
    const h = el('vscode-tab-header', { slot: 'header' }, text);
    if (count !== undefined) h.append(' ', el('vscode-badge', { variant: 'counter', slot: 'content-after' }, String(count)));
    return h;
  };
  tabs.append(
    header('Output'),
    el('vscode-tab-panel', {}, outputPanel(d)),
    header('Changes', d.changes.length),
    el('vscode-tab-panel', {}, changesPanel(d)),
    header('Decision'),
    el('vscode-tab-panel', {}, decisionPanel(d)),
  );
  detailPane.append(tabs);
  const pre = detailPane.querySelector('.output pre');
  if (pre && scroll) pre.scrollTop = scroll.bottom && s.running ? pre.scrollHeight : scroll.top;
}

function outputPanel(d: RunDetail): HTMLElement {
  const box = el('div', { class: 'output' });
  for (const [name, out] of [
    ['stdout', d.stdout],
    ['stderr', d.stderr],
  ] as const) {
    if (!out.text && name === 'stderr') continue;
    const note = out.truncated ? ` — truncated: ${out.bytes === null ? 'the middle is left out' : `${out.bytes} bytes written, the first and last part kept`}` : out.bytes !== null ? ` — ${out.bytes} bytes` : '';
    box.append(el('h3', {}, name, el('span', { class: 'muted' }, note)), el('pre', { class: name }, out.text || (d.summary.running ? '' : '(nothing)')));
  }
  return box;
}

function changesPanel(d: RunDetail): HTMLElement {
  const box = el('div', { class: 'changes' });
  if (d.summary.running) return el('p', { class: 'muted' }, 'The changes are listed when the run ends.');
  if (d.summary.state === 'lost') return el('p', { class: 'muted' }, 'The vault host stopped while this run was going: what it changed is unknown.');
  if (d.changes.length === 0) return el('p', { class: 'muted' }, 'This run changed no file.');
  box.append(el('p', { class: 'muted' }, d.checkpoint ? `Before this run (checkpoint ${d.checkpoint}) ↔ now:` : 'No checkpoint was taken before this run: files open as they are now.'));
  const files = diffs.get(d.summary.id);
  const open = remember(openFiles, d.summary.id, openFiles.get(d.summary.id) ?? new Set<string>());
  for (const f of d.changes) {
    const fileDiff = files?.find((x) => x.path === f.path);
    // The heading is set in capitals by the control: the kind goes there, the path (as it is) in the description.
    const item = el('vscode-collapsible', {
      heading: f.kind,
      description: `${f.from ? `${f.from} → ` : ''}${f.path} · ${f.size}`,
      class: `file ${f.kind}`,
      'data-path': f.path,
      'always-show-header-actions': '',
    });
    if (open.has(f.path) || d.changes.length <= 3) item.setAttribute('open', '');
    item.addEventListener('vsc-collapsible-toggle', (e: Event) => {
      const isOpen = (e as CustomEvent<{ open: boolean }>).detail.open;
      if (isOpen) open.add(f.path);
      else open.delete(f.path);
    });
    const openDiff = button('Open Diff', () => send({ type: 'openDiff', id: d.summary.id, path: f.path }), f.type === 'file');
    openDiff.setAttribute('slot', 'actions');
    item.append(openDiff);
    item.append(fileDiff === undefined ? el('p', { class: 'muted' }, 'Reading…') : fileDiff.patch ? patchView(fileDiff.patch) : el('p', { class: 'muted' }, fileDiff.note ?? ''));
    box.append(item);
  }
  return box;
}

function patchView(patch: string): HTMLElement {
  const pre = el('pre', { class: 'patch' });
  for (const line of patch.split('\n')) {
    if (line === '' || line.startsWith('\\')) continue;
    const kind = line.startsWith('@@') ? 'hunk' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
    pre.append(el('span', { class: `line ${kind}` }, line), '\n');
  }
  return pre;
}

function decisionPanel(d: RunDetail): HTMLElement {
  const box = el('div', { class: 'decision-panel' });
  if (!d.decision) return el('p', { class: 'muted' }, d.summary.running ? 'Not judged yet.' : 'The run failed before the policy judged it.');
  box.append(
    el('p', {}, 'Decision: ', decisionBadge(d.decision.action), d.decision.categories.length ? ` (${d.decision.categories.join(', ')})` : ''),
    el('p', {}, d.decision.reason ?? ''),
  );
  if (d.decision.rule) box.append(el('p', { class: 'muted' }, `Rule: ${d.decision.rule}`));
  if (d.approval) box.append(el('p', {}, `Approval: ${d.approval}`));
  box.append(el('p', {}, `Checkpoint: ${d.checkpoint ?? 'none'}`));
  if (d.decision.parts.length > 1) {
    const list = el('ul');
    for (const p of d.decision.parts) list.append(el('li', {}, el('code', {}, p.command), ' — ', decisionBadge(p.action), ` ${p.reason}`));
    box.append(el('h3', {}, 'Parts'), list);
  }
  box.append(el('p', { class: 'muted' }, `States: ${d.states.join(' → ')}`));
  return box;
}

// ---- helpers

function button(label: string, onClick: () => void, enabled: boolean, secondary = false): HTMLElement {
  const b = el('vscode-button', secondary ? { secondary: '' } : {}, label);
  if (!enabled) b.setAttribute('disabled', '');
  b.addEventListener('click', () => {
    if (!b.hasAttribute('disabled')) onClick();
  });
  return b;
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
}

function el(tag: string, attrs: Record<string, string> = {}, ...children: (Node | string)[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  e.append(...children);
  return e;
}

renderList();
renderDetail();
send({ type: 'ready', selected: state.selected });
