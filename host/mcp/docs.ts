/** docs/schema/mcp-tools.json: the tools `avfs mcp` lists, as an MCP client sees them (`npm run docs`; a test fails when it is stale). */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { AvfsError } from '../protocol/errors';
import type { McpBackend } from './backend';
import { createMcpServer } from './server';

const nothing = async (): Promise<never> => {
  throw new AvfsError('Internal', 'the tool list is read without a vault');
};

export async function mcpToolsDoc(): Promise<string> {
  const backend: McpBackend = { call: nothing, exec: nothing, viaHost: async () => false, close: async () => undefined };
  const { server } = createMcpServer({ backend, vault: undefined });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'avfs docs', version: '1' });
  await Promise.all([server.connect(a), client.connect(b)]);
  const { tools } = await client.listTools();
  await client.close();
  await server.close();
  return JSON.stringify({ description: 'the tools of `avfs mcp` (tools/list), see docs/agents.md', tools }, null, 2) + '\n';
}
