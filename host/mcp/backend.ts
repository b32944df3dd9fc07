/**
 * Where the MCP server's tools go: the running vault host of the home when there is one (so every
 * call is in its audit trail, its clients see it, and its approvers answer), else the operations
 * table and the exec pipeline in this process. The host is looked for at every call (a small file
 * read): an editor may start one after the server did, or stop it.
 */
import { randomUUID } from 'node:crypto';
import type { HostConnection } from '../daemon/client';
import type { OpName, OpsContext } from '../ops/context';
import type { ExecRequestInput, ExecState, ExecutionEnvelope } from '../protocol/exec';
import type { MethodParams, MethodResult } from '../protocol/methods';
import { type Execute, executor } from '../proxy/executor';
import type { AvfsHome } from '../store/home';
import type { HomeDir } from '../store/homeDir';

export interface ExecWatch {
  signal?: AbortSignal;
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  onState?: (state: ExecState) => void;
}

export interface McpBackend {
  call<M extends OpName>(method: M, params: MethodParams<M>): Promise<MethodResult<M>>;
  exec(request: ExecRequestInput, watch: ExecWatch): Promise<ExecutionEnvelope>;
  /** Whether calls go through a running host (for the server's own log). */
  viaHost(): Promise<boolean>;
  close(): Promise<void>;
}

export interface BackendOptions {
  homeDir: HomeDir;
  /** Shown to the host as this client's name. */
  name: string;
  /** Never use a host (AVFS_NO_HOST=1). */
  noHost?: boolean;
}

interface Runs {
  output: Map<string, ExecWatch>;
}

export function createBackend(opts: BackendOptions): McpBackend {
  const runs: Runs = { output: new Map() };
  let host: Promise<HostConnection | undefined> | undefined;
  let local: { ctx: OpsContext; home: AvfsHome } | undefined;

  /** The host, connected; a connection the host closed is dropped, and the next call looks again. */
  async function hostClient(): Promise<HostConnection | undefined> {
    if (opts.noHost) return undefined;
    if (host) {
      const h = await host;
      if (h) return h;
    }
    const { readHost } = await import('../daemon/lock');
    if (!readHost(opts.homeDir)) {
      host = undefined;
      return undefined;
    }
    const { connectHost } = await import('../daemon/client');
    host = connectHost(opts.homeDir, {
      name: opts.name,
      kind: 'other',
      approver: false,
      setup: (conn) => {
        conn.onNotification('exec/output', (n: { id: string; stream: 'stdout' | 'stderr'; text: string }) => runs.output.get(n.id)?.onOutput?.(n.stream, n.text));
        conn.onNotification('exec/state', (n: { id: string; state: ExecState }) => runs.output.get(n.id)?.onState?.(n.state));
        conn.onClose(() => {
          host = undefined;
        });
      },
    });
    const h = await host;
    if (!h) host = undefined;
    return h;
  }

  let execute: Execute | undefined;

  async function inProcess(): Promise<{ ctx: OpsContext; home: AvfsHome }> {
    if (!local) {
      const { AvfsHome } = await import('../store/home');
      const { KeptVaults } = await import('../ops/vaultAccess');
      const home = new AvfsHome(opts.homeDir.dir);
      let engine: Promise<import('../policy/engine').PolicyEngine> | undefined;
      local = {
        home,
        ctx: {
          home,
          surface: 'rpc',
          vaults: new KeptVaults(home),
          // Loaded once and kept warm, as the host does: this process serves many calls.
          engine: () => (engine ??= import('../policy/engine').then((m) => m.createPolicyEngine())),
        },
      };
    }
    return local;
  }

  return {
    async call(method, params) {
      const h = await hostClient();
      if (h) return h.call(method, params);
      const { ctx } = await inProcess();
      const { METHODS } = await import('../protocol/methods');
      const { OPS } = await import('../ops/index');
      const parsed = METHODS[method].params.parse(params);
      const op = OPS[method] as (c: OpsContext, p: unknown) => MethodResult<typeof method> | Promise<MethodResult<typeof method>>;
      return op(ctx, parsed);
    },

    async exec(request, watch) {
      const id = randomUUID();
      const h = await hostClient();
      if (h) {
        runs.output.set(id, watch);
        try {
          return await h.call('exec/run', { ...request, id }, watch.signal);
        } finally {
          runs.output.delete(id);
        }
      }
      const { ctx, home } = await inProcess();
      // Wired once for this process, as the host wires its own (host/proxy/executor.ts).
      execute ??= executor({ home, engine: ctx.engine, inProcessMounts: false, surface: 'rpc', owner: opts.name });
      const { noApprover } = await import('../proxy/approvals');
      const decoder = { stdout: new TextDecoder(), stderr: new TextDecoder() };
      return execute(
        { ...request, id },
        {
          approver: noApprover('no vault host is running to ask (open VS Code with the avfs extension, or run `avfs host`)'),
          ...(watch.signal ? { signal: watch.signal } : {}),
          onState: (state) => watch.onState?.(state),
          output: (stream, chunk) => watch.onOutput?.(stream, decoder[stream].decode(chunk, { stream: true })),
        },
      );
    },

    async viaHost() {
      return (await hostClient()) !== undefined;
    },

    async close() {
      const h = await host;
      h?.close();
      host = undefined;
      if (local) (local.ctx.vaults as import('../ops/vaultAccess').KeptVaults).stop();
    },
  };
}
