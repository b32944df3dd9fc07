/**
 * Writes the generated reference docs from the protocol module: docs/errors.md from the error
 * table and docs/schema/*.json from the zod schemas. `npm run docs`; a test fails when they are stale.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliReference } from '../host/cli/reference';
import { mcpToolsDoc } from '../host/mcp/docs';
import { generatedDocs } from '../host/protocol/docs';

const root = join(__dirname, '..');
void (async () => {
  for (const [rel, text] of Object.entries({ ...generatedDocs(), 'docs/cli.md': cliReference(), 'docs/schema/mcp-tools.json': await mcpToolsDoc() })) {
    const file = join(root, rel);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, text);
    console.log(`wrote ${rel}`);
  }
})();
