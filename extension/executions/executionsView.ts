// The Executions view (a webview in the panel): every run the host reports, live, and the detail of
// the one selected, with its inline diffs; a file opens in the native diff editor, the whole run in
// the multi-file one, and "Restore to before this run" restores the checkpoint the run took.
//
// The runs are kept here (ExecHistory, fed by exec/* notifications and, when the host connects, by
// exec/list), not in the webview: the webview is a view of them. It keeps only what it shows (the
// selected run, the open tab) with its own getState/setState, and on being shown again it says
// `ready` and gets everything anew; so no retainContextWhenHidden (a hidden view costs nothing).
// Messages are validated on both sides (webview/protocol.ts).
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { ExecHistory } from '../../host/protocol/execHistory';
import { NOTIFICATIONS } from '../../host/protocol/host';
import { FromWebview, type ToWebview, ToWebview as ToWebviewSchema } from '../../webview/protocol';
import type { Ctx } from '../ctx';
import { changeResources, inlineDiffs, openFileDiff } from '../diffs';
import { errorMessage } from '../errors';
import { confirmAndRestore } from '../restore';
import { isChangedPath, runDetail, runSummary } from './runModel';
import { shownCommand } from '../approvals/model';

export const EXECUTIONS_VIEW = 'avfs.executions';

/** Live runs send many events: the view redraws at most this often. */
const PUSH_MS = 100;

export class ExecutionsView implements vscode.WebviewViewProvider, vscode.Disposable {
  private runs = new ExecHistory();
  /** The avfs home whose runs are shown: another home (a changed avfs.home) starts an empty list. */
  private home: string | undefined;
  private view: vscode.WebviewView | undefined;
  private selected: string | null = null;
  /** Runs that were going on a host that is gone: the host now running does not list them (see LOST). */
  private readonly lost = new Set<string>();
  private pushTimer: NodeJS.Timeout | undefined;
  /** Runs whose inline diffs the webview has (computed once per run and shown). */
  private readonly diffsSent = new Set<string>();
  /** The detail last sent to the page (as JSON), so an unchanged one is not sent again. */
  private lastDetail: string | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  /** The listeners of the view now resolved: disposed with it (VS Code resolves a new one each time it is shown again). */
  private viewDisposables: vscode.Disposable[] = [];
  private readonly emitter = new vscode.EventEmitter<void>();
  /** The runs changed (tests wait on it). */
  readonly onDidChange = this.emitter.event;

  constructor(private readonly ctx: Pick<Ctx, 'host' | 'tree' | 'log' | 'run'> & { extension: vscode.ExtensionContext }) {
    this.disposables.push(
      vscode.window.registerWebviewViewProvider(EXECUTIONS_VIEW, this),
      ctx.host.onNotification(({ method, params }) => this.onHostEvent(method, params)),
      ctx.host.onDidChangeState((state) => {
        if (state.name === 'ready') {
          if (this.home !== undefined && state.home !== this.home) {
            this.runs = new ExecHistory();
            this.lost.clear();
            this.selected = null;
          }
          this.home = state.home;
          void this.loadFromHost();
        }
        this.schedulePush();
      }),
      this.emitter,
    );
    if (ctx.host.state.name === 'ready') {
      this.home = ctx.host.state.home;
      void this.loadFromHost();
    }
  }

  /** Runs as the view lists them (newest first): for the extension's tests. */
  list() {
    return this.runs.list().map((run) => runSummary(run, this.lost.has(run.id)));
  }

  /** Shows the view (without taking the focus) with this run selected. */
  async reveal(id?: string): Promise<void> {
    if (id) this.selected = id;
    await vscode.commands.executeCommand(`${EXECUTIONS_VIEW}.focus`, { preserveFocus: true });
    this.view?.show(true);
    if (id) this.post({ type: 'select', id });
    this.schedulePush();
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.ctx.extension.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = html(view.webview, vscode.Uri.joinPath(dist, 'webview.js'));
    this.diffsSent.clear();
    this.disposeView();
    const own = this.viewDisposables;
    view.webview.onDidReceiveMessage((raw: unknown) => void this.onMessage(raw), undefined, own);
    view.onDidChangeVisibility(() => view.visible && this.diffsSent.clear(), undefined, own);
    view.onDidDispose(
      () => {
        if (this.view === view) this.view = undefined;
        for (const d of own.splice(0)) d.dispose();
      },
      undefined,
      own,
    );
  }

  private disposeView(): void {
    for (const d of this.viewDisposables.splice(0)) d.dispose();
    this.viewDisposables = [];
  }

  private async loadFromHost(): Promise<void> {
    try {
      const { runs } = await this.ctx.host.hostRequest('exec/list', {});
      this.runs.seed(runs);
      // A run shown as going that this host does not list went with the host before it: no
      // envelope will ever come for it.
      const listed = new Set(runs.map((r) => r.id));
      for (const run of this.runs.list()) if (!run.envelope && !listed.has(run.id)) this.lost.add(run.id);
      this.changed();
    } catch (e) {
      this.ctx.log.warn(`Executions view: exec/list: ${errorMessage(e)}`);
    }
  }

  private onHostEvent(method: string, params: unknown): void {
    switch (method) {
      case 'exec/started': {
        const p = NOTIFICATIONS['exec/started'].safeParse(params);
        if (p.success) {
          this.lost.delete(p.data.id);
          this.runs.started(p.data);
        }
        break;
      }
      case 'exec/state': {
        const p = NOTIFICATIONS['exec/state'].safeParse(params);
        if (p.success) this.runs.state(p.data.id, p.data.state);
        break;
      }
      case 'exec/output': {
        const p = NOTIFICATIONS['exec/output'].safeParse(params);
        if (p.success) this.runs.output(p.data.id, p.data.stream, p.data.text);
        break;
      }
      case 'exec/finished': {
        const p = NOTIFICATIONS['exec/finished'].safeParse(params);
        if (p.success) {
          this.lost.delete(p.data.id);
          this.runs.finished(p.data.id, p.data.envelope);
        }
        break;
      }
      default:
        return;
    }
    this.changed();
  }

  private changed(): void {
    this.emitter.fire();
    this.schedulePush();
  }

  private schedulePush(): void {
    this.pushTimer ??= setTimeout(() => {
      this.pushTimer = undefined;
      this.push();
    }, PUSH_MS);
  }

  private push(): void {
    if (!this.view) return;
    this.post({ type: 'runs', runs: this.list(), hostState: this.ctx.host.state.name });
    const run = this.selected ? this.runs.get(this.selected) : undefined;
    // A finished run's detail (up to 2 MiB of output) does not change: sent again only when it does.
    const detail = run ? runDetail(run, this.lost.has(run.id)) : null;
    const json = JSON.stringify(detail);
    if (json !== this.lastDetail) {
      this.lastDetail = json;
      this.post({ type: 'detail', run: detail });
    }
    if (run?.envelope && !this.diffsSent.has(run.id)) {
      this.diffsSent.add(run.id);
      void this.sendDiffs(run.id);
    }
  }

  private async sendDiffs(id: string): Promise<void> {
    const r = this.runs.get(id)?.envelope?.result;
    if (!r?.changes || !r.vault) return;
    if (!r.checkpoint) {
      const note = 'No checkpoint was taken before this run, so its text from before is not kept: the file opens as it is now.';
      this.post({ type: 'diffs', id, files: r.changed_files.map((path) => ({ path, patch: null, note })) });
      return;
    }
    try {
      this.post({ type: 'diffs', id, files: await inlineDiffs(this.ctx.host, r.vault, r.checkpoint, r.changes) });
    } catch (e) {
      this.ctx.log.warn(`Executions view: diffs of ${id}: ${errorMessage(e)}`);
      this.diffsSent.delete(id);
    }
  }

  private post(message: ToWebview): void {
    // Checked on the way out too: a message the webview would refuse is a bug here, said in the log.
    const checked = ToWebviewSchema.safeParse(message);
    if (!checked.success) {
      this.ctx.log.error(`Executions view: a message to the webview does not match its protocol: ${checked.error.message}`);
      return;
    }
    void this.view?.webview.postMessage(checked.data);
  }

  private async onMessage(raw: unknown): Promise<void> {
    const parsed = FromWebview.safeParse(raw);
    if (!parsed.success) {
      this.ctx.log.warn(`Executions view: a message from the webview that does not match its protocol: ${parsed.error.message}`);
      return;
    }
    const m = parsed.data;
    switch (m.type) {
      case 'ready':
        // A new page (shown again, or reloaded): it has nothing yet.
        this.diffsSent.clear();
        this.lastDetail = undefined;
        if (m.selected && this.runs.get(m.selected)) this.selected = m.selected;
        this.push();
        return;
      case 'select':
        this.selected = m.id;
        this.push();
        return;
      case 'openDiff':
        return void this.ctx.run('Open Diff', () => this.openDiff(m.id, m.path));
      case 'openChanges':
        return void this.ctx.run('Open Changes', () => this.openChanges(m.id));
      case 'restore':
        return void this.ctx.run('Restore to Before This Run', () => this.restore(m.id));
    }
  }

  private finished(id: string) {
    const env = this.runs.get(id)?.envelope;
    if (!env) throw new Error('That run is not finished (or no longer listed).');
    return env;
  }

  private async openDiff(id: string, path: string): Promise<void> {
    const r = this.finished(id).result;
    // The webview is a separate program: it may only open what this run changed.
    if (!isChangedPath(this.runs.get(id), path)) {
      this.ctx.log.warn(`Executions view: Open Diff of ${JSON.stringify(path)}, which run ${id} did not change: ignored`);
      return;
    }
    if (!r.vault) return;
    if (!r.checkpoint || !r.changes) {
      await vscode.commands.executeCommand('vscode.open', vscode.Uri.from({ scheme: 'avfs', authority: r.vault, path }));
      return;
    }
    await openFileDiff(r.vault, r.checkpoint, r.changes, path, 'before this run');
  }

  private async openChanges(id: string): Promise<void> {
    const env = this.finished(id);
    const r = env.result;
    if (!r.vault || !r.checkpoint || !r.changes) {
      void vscode.window.showInformationMessage('This run took no checkpoint: its changes can only be opened file by file, as they are now.');
      return;
    }
    const resources = changeResources(r.vault, r.checkpoint, r.changes);
    if (resources.length === 0) {
      void vscode.window.showInformationMessage('This run changed no file contents.');
      return;
    }
    await vscode.commands.executeCommand('vscode.changes', `${r.vault}: before \`${shownCommand(r.command, 40)}\` ↔ Current`, resources);
  }

  private async restore(id: string): Promise<void> {
    const r = this.finished(id).result;
    if (!r.vault || !r.checkpoint) {
      void vscode.window.showInformationMessage(runDetail(this.runs.get(id)!, this.lost.has(id)).restore.reason);
      return;
    }
    const restored = await confirmAndRestore(this.ctx, r.vault, r.checkpoint, `Restore vault "${r.vault}" to before \`${shownCommand(r.command, 60)}\` ran (checkpoint "${r.checkpoint}")?`);
    if (restored) {
      this.diffsSent.delete(id);
      this.lastDetail = undefined;
      this.schedulePush();
    }
  }

  dispose(): void {
    clearTimeout(this.pushTimer);
    this.disposeView();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** The page: a strict CSP (only our bundle runs, by nonce), styles from the bundle, theme variables in its CSS. */
function html(webview: vscode.Webview, script: vscode.Uri): string {
  const nonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    // Constructed style sheets (the bundle's and vscode-elements') need no source; <style> ones need the nonce.
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>AVFS Executions</title>
</head>
<body>
<main id="avfs-executions"></main>
<script nonce="${nonce}">window.litNonce = ${JSON.stringify(nonce)};</script>
<script nonce="${nonce}" src="${webview.asWebviewUri(script).toString()}"></script>
</body>
</html>`;
}
