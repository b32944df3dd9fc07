/** The MCP tool reference is current: docs/schema/mcp-tools.json is what tools/list answers, docs/agents.md names every tool. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { mcpToolsDoc } from '../../host/mcp/docs';
import { ROOT } from '../helpers';

test('docs/schema/mcp-tools.json is the server\'s tools/list (run `npm run docs` after changing a tool)', async () => {
  const doc = await mcpToolsDoc();
  assert.equal(readFileSync(join(ROOT, 'docs', 'schema', 'mcp-tools.json'), 'utf8'), doc);
  const agents = readFileSync(join(ROOT, 'docs', 'agents.md'), 'utf8');
  for (const { name } of (JSON.parse(doc) as { tools: Array<{ name: string }> }).tools) assert.match(agents, new RegExp(`\\| \`${name}\` \\|`), `docs/agents.md lists ${name}`);
});
