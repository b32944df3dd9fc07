/**
 * `avfs mcp`: a Model Context Protocol server over stdio, built on the official SDK. A thin
 * transport like the CLI and the host: its tools (tools.ts) and resources call the operations
 * table and the exec pipeline through the backend (backend.ts: the running host, else this
 * process). Vault files are resources too, as `avfs://<vault>/<path>`.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { projectVault } from '../ops/projectVault';
import { toAvfsError } from '../protocol/errors';
import type { TreeNode } from '../protocol/files';
import { VERSION } from '../version';
import { type McpBackend, createBackend } from './backend';
import { releaseKept, registerTools, type ToolContext } from './tools';
import { LineTransport } from './transport';

/** Resources listed at most (a vault may hold many files; a client reads any of them by its URI). */
const MAX_LISTED_RESOURCES = 1000;
/** MCP's error code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

export const INSTRUCTIONS = [
  'These tools work inside an avfs vault: an isolated workspace with checkpoints, not the real disk.',
  'Read, write and edit files with the file tools; run commands with `exec` (the avfs policy judges each one; a denied command runs nothing and says why).',
  'exec takes a checkpoint before a command that changes files: checkpoint_restore undoes it.',
].join(' ');

export interface McpOptions {
  backend: McpBackend;
  vault: string | undefined;
}

/** The URI of a vault file: avfs://<vault>/<path>, each path component percent-encoded. */
export function resourceUri(vault: string, path: string): string {
  return `avfs://${encodeURIComponent(vault)}/${path.split('/').filter(Boolean).map(encodeURIComponent).join('/')}`;
}

function* files(node: TreeNode, path: string): Generator<{ path: string; size: number }> {
  for (const c of node.children ?? []) {
    const p = `${path}/${c.name}`;
    if (c.type === 'file') yield { path: p, size: c.size };
    yield* files(c, p);
  }
}

export function createMcpServer(opts: McpOptions): { server: McpServer; tools: ToolContext } {
  const server = new McpServer({ name: 'avfs', title: 'agentvfs', version: VERSION }, { instructions: INSTRUCTIONS, capabilities: { logging: {} } });
  const { backend } = opts;
  const tools: ToolContext = { backend, vault: opts.vault, kept: new Map() };
  registerTools(server, tools);

  const vaultOf = async (): Promise<string> => opts.vault ?? (await backend.call('vault/info', {})).name;
  server.registerResource(
    'vault-file',
    new ResourceTemplate('avfs://{vault}/{+path}', {
      list: async () => {
        const vault = await vaultOf();
        const { tree } = await backend.call('fs/tree', { vault, path: '/', level: 64, all: true });
        const out = [];
        for (const f of files(tree, '')) {
          if (out.length >= MAX_LISTED_RESOURCES) break;
          out.push({ uri: resourceUri(vault, f.path), name: f.path, description: `${f.size} bytes in vault ${vault}` });
        }
        return { resources: out };
      },
    }),
    { title: 'A file of a vault', description: 'avfs://<vault>/<path>: the bytes of a file in an avfs vault' },
    async (uri, vars) => {
      const vault = decodeURIComponent(String(vars.vault));
      const raw = Array.isArray(vars.path) ? vars.path.join('/') : String(vars.path ?? '');
      let path: string;
      try {
        path = '/' + raw.split('/').map(decodeURIComponent).join('/');
      } catch {
        throw new McpError(ErrorCode.InvalidParams, `InvalidPath: the resource ${uri.href} is not a well-formed avfs:// URI`, { uri: uri.href });
      }
      let f;
      try {
        f = await backend.call('fs/readText', { vault, path });
      } catch (e) {
        // The avfs error as a JSON-RPC error: the kind in the message and the data; a missing file is MCP's "resource not found".
        const ae = toAvfsError(e);
        throw new McpError(ae.kind === 'NotFound' || ae.kind === 'VaultNotFound' ? RESOURCE_NOT_FOUND : ErrorCode.InvalidParams, `${ae.kind}: ${ae.message}`, ae.toJSON());
      }
      return {
        contents: [f.encoding === 'utf8' ? { uri: uri.href, mimeType: 'text/plain', text: f.content } : { uri: uri.href, mimeType: 'application/octet-stream', blob: f.content }],
      };
    },
  );
  return { server, tools };
}

/** Serves MCP on this process's stdin and stdout until stdin ends. Logs go to stderr (stdout is the protocol's). */
export async function serveMcp(opts: {
  homeDir: string;
  vault: string | undefined;
  noHost: boolean;
  stderr: NodeJS.WritableStream;
  /** `--from DIR`: the vault served is the one made from this project folder (made now if it is not there). */
  from?: { dir: string; exclude: string[] };
}): Promise<void> {
  const backend = createBackend({ homeDir: { dir: opts.homeDir }, name: `avfs mcp (pid ${process.pid})`, noHost: opts.noHost });
  let vault = opts.vault;
  if (opts.from) {
    let pv;
    try {
      pv = await projectVault((m, p) => backend.call(m, p), { ...(vault !== undefined ? { name: vault } : {}), dir: opts.from.dir, cwd: process.cwd(), exclude: opts.from.exclude });
    } catch (e) {
      await backend.close();
      throw e;
    }
    vault = pv.vault;
    opts.stderr.write(`avfs mcp: vault ${vault} ${pv.created ? 'made from' : 'was made from'} ${pv.source}\n`);
  }
  const { server, tools } = createMcpServer({ backend, vault });
  const transport = new LineTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => resolve());
  });
  await server.connect(transport);
  opts.stderr.write(`avfs mcp: serving${vault ? ` vault ${vault}` : ' the current vault'} on stdio (home ${opts.homeDir}; ${(await backend.viaHost()) ? 'through the running host' : 'no host running: in this process'})\n`);
  await closed;
  await server.close().catch(() => undefined);
  // The mounts exec kept up for this session go with it.
  await releaseKept(tools).catch(() => undefined);
  await backend.close();
}
