/** A real `avfs mcp` process (the built dist/avfs.js) driven by the MCP SDK's own Client over stdio. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CLI } from '../helpers';

export interface McpSession {
  client: Client;
  /** Everything the server wrote on stderr so far. */
  log: () => string;
  call: (name: string, args: Record<string, unknown>, opts?: Parameters<Client['callTool']>[2]) => Promise<CallToolResult>;
  close: () => Promise<void>;
}

/** `avfs <args> mcp <mcpArgs>`, as an MCP client starts it. */
export async function startMcp(home: string, args: string[] = [], env: Record<string, string> = {}, mcpArgs: string[] = []): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, ...args, 'mcp', ...mcpArgs],
    env: { ...(process.env as Record<string, string>), AVFS_HOME: home, ...env },
    stderr: 'pipe',
  });
  let log = '';
  transport.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const client = new Client({ name: 'avfs-test', version: '1.0.0' });
  await client.connect(transport);
  return {
    client,
    log: () => log,
    call: async (name, a, opts) => (await client.callTool({ name, arguments: a }, undefined, opts)) as CallToolResult,
    close: () => client.close(),
  };
}

/** The text of a tool result's first content part. */
export const textOf = (r: CallToolResult): string => (r.content[0]?.type === 'text' ? r.content[0].text : '');
