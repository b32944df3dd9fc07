// The extension's core (dist/extension-core.js), loaded by its entry (entry.ts, dist/extension.js)
// once VS Code's activate() call has returned: activate() creates the context (ctx.ts), which owns
// everything, and registers the commands; deactivate() stops the host it started.
import * as vscode from 'vscode';
import { registerAgents, type Agents } from './agents/agents';
import { registerCommands } from './commands';
import { config } from './config';
import { Ctx } from './ctx';
import { exposeCliToTerminals } from './terminalCli';

let ctx: Ctx | undefined;
let agents: Agents | undefined;

/** What activate() returns: for the extension's own tests (which wait on the host's state), not a public API. */
export interface AvfsTestApi {
  host: Ctx['host'];
  tree: Ctx['tree'];
  approvals: Ctx['approvals'];
  executions: Ctx['executions'];
  /** The folder VS Code keeps the AVFS log file in. */
  logUri: vscode.Uri;
  /** The MCP server definition and the vault shell (extension/agents). */
  agents: Agents;
}

/** What the entry measured: when VS Code called its activate(), and how long loading this core took. */
export interface EntryTiming {
  calledAt: number;
  /** How long the entry's activate() call took (VS Code's activateCallTime, measured from inside). */
  callMs: number;
  coreLoadMs: number;
}

/** The extension host's own performance marks (VS Code's perf-util keeps them on globalThis). */
interface PerformanceMarks {
  getMarks(): { name: string; startTime: number }[];
}

/** One extension's code loading by the extension host's marks (`code/extHost/willLoadExtensionCode/<id>`, `didLoadExtensionCode`). */
interface CodeLoad {
  id: string;
  start: number;
  ms: number;
}

function codeLoads(): CodeLoad[] {
  const marks = (globalThis as { MonacoPerformanceMarks?: PerformanceMarks }).MonacoPerformanceMarks?.getMarks?.() ?? [];
  const starts = new Map<string, number>();
  const loads: CodeLoad[] = [];
  for (const m of marks) {
    const [, what, id] = /^code\/extHost\/(will|did)LoadExtensionCode\/(.+)$/.exec(m.name) ?? [];
    if (what === 'will') starts.set(id!, m.startTime);
    const start = starts.get(id!);
    if (what === 'did' && start !== undefined) loads.push({ id: id!, start, ms: m.startTime - start });
  }
  return loads;
}

/**
 * How long the extension host took to load this extension's main module, by its own marks around
 * the require, and the other extensions' code it loaded in the second before. Show Running
 * Extensions starts this extension's clock earlier, before an await, and the extensions started in
 * the same loop (every onStartupFinished one, built-in ones first) load their code in that await:
 * its figure counts their loading too (docs/extension.md, "Activation"). The list lets the
 * activation bench say which, from the same window.
 */
function entryLoad(id: string): { ms: number; before: string } | undefined {
  const loads = codeLoads();
  const own = loads.find((l) => l.id === id);
  if (!own) return undefined;
  const before = loads
    .filter((l) => l.id !== id && l.start + l.ms <= own.start && l.start >= own.start - 1000)
    .map((l) => `${l.id} ${l.ms.toFixed(1)} ms ending ${(own.start - l.start - l.ms).toFixed(1)} ms before`);
  return { ms: own.ms, before: before.join(', ') || 'none' };
}

export function activate(context: vscode.ExtensionContext, entry?: EntryTiming): AvfsTestApi {
  const started = performance.now();
  try {
    ctx = new Ctx(context);
    context.subscriptions.push(...registerCommands(ctx), exposeCliToTerminals(context));
    const registered = registerAgents({ extension: context, host: ctx.host, log: ctx.log });
    agents = registered.agents;
    context.subscriptions.push(...registered.disposables);
  } catch (e) {
    // VS Code does not tell the person when an extension fails to activate, so we do.
    void vscode.window.showErrorMessage(`AVFS could not start: ${e instanceof Error ? e.message : String(e)}`);
    throw e;
  }
  const { version } = context.extension.packageJSON as { version: string };
  const ui = vscode.env.uiKind === vscode.UIKind.Web ? 'web' : 'desktop';
  if (config.showViewOnStartup()) void vscode.commands.executeCommand('workbench.view.extension.avfs');
  // Activated on startup, so that the window is an approver before an agent asks: it joins the
  // running host or starts one, asynchronously (activate() returns first; the window waits for
  // nothing). In Restricted Mode nothing starts.
  const current = ctx;
  setImmediate(() => current.host.ensureStarted());
  const ms = performance.now() - started;
  // VS Code's own count (Show Running Extensions) is the entry's: loading dist/extension.js and its
  // activate() call; loading this core and this activate() come after, asynchronously.
  // VS Code's part: loading the main module (this core itself when it is the main module, as the
  // activation bench tries) and the activate() call it made.
  const load = entryLoad(context.extension.id);
  const main = entry ? 'dist/extension.js' : 'the extension as one bundle';
  const after =
    `; VS Code's part: loading ${main} ${load === undefined ? 'not marked' : `${load.ms.toFixed(1)} ms (its marks)`}` +
    (entry ? `, its activate() call ${entry.callMs.toFixed(2)} ms; the core loaded after that in ${entry.coreLoadMs.toFixed(1)} ms, ${(started - entry.calledAt).toFixed(1)} ms after the call` : '') +
    (load ? `; other extensions' code loaded in the second before: ${load.before}` : '');
  ctx.log.info(`AVFS ${version} activated in ${ms.toFixed(1)} ms${after} (VS Code ${vscode.version}, ${ui}, extension host on Node ${process.version})`);
  return { host: ctx.host, tree: ctx.tree, approvals: ctx.approvals, executions: ctx.executions, logUri: context.logUri, agents: agents! };
}

// VS Code waits for the returned promise: the host child is stopped (and its mounts unmounted) before the window goes.
export async function deactivate(): Promise<void> {
  const current = ctx;
  ctx = undefined;
  await current?.dispose();
}
