/**
 * One of the host's operation threads (see pool.ts): it runs the operations table over its own
 * vault connections, kept open between calls, and a policy engine of its own, loaded on first use
 * and kept. Messages in: an operation, an exec task, or "close your vaults"; one answer each.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { OPS } from '../ops';
import type { OpsContext } from '../ops/context';
import { KeptVaults } from '../ops/vaultAccess';
import type { PolicyEngine } from '../policy/engine';
import { createPolicyEngine } from '../policy/engine';
import { toAvfsError } from '../protocol/errors';
import { AvfsHome } from '../store/home';
import type { Surface } from '../store/journal';
import { EXEC_TASKS } from './execTasks';
import type { FromWorker, ToWorker } from './pool';

const port = parentPort!;
const home = new AvfsHome((workerData as { home: string }).home);
const vaults = new KeptVaults(home);
let engine: Promise<PolicyEngine> | undefined;
const contexts = new Map<Surface, OpsContext>();

function contextFor(surface: Surface): OpsContext {
  let ctx = contexts.get(surface);
  if (!ctx) {
    ctx = { home, surface, vaults, engine: () => (engine ??= createPolicyEngine()) };
    contexts.set(surface, ctx);
  }
  return ctx;
}

async function handle(m: ToWorker): Promise<unknown> {
  switch (m.kind) {
    case 'op':
      return (OPS[m.method] as (ctx: OpsContext, p: unknown) => unknown)(contextFor(m.surface), m.params);
    case 'task':
      return (EXEC_TASKS[m.task] as (ctx: OpsContext, args: unknown) => unknown)(contextFor('exec'), m.args);
    case 'closeVaults':
      vaults.closeAll();
      return null;
    case 'stop':
      vaults.stop();
      return null;
  }
}

port.on('message', (m: ToWorker) => {
  void (async () => {
    let answer: FromWorker;
    try {
      answer = { id: m.id, ok: true, result: await handle(m) };
    } catch (e) {
      answer = { id: m.id, ok: false, error: toAvfsError(e).toJSON() };
    }
    port.postMessage(answer);
    if (m.kind === 'stop') port.close();
  })();
});

port.postMessage({ id: 0, ok: true, result: 'ready' } satisfies FromWorker);
