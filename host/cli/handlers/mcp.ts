/** The handler of `avfs mcp`: serves MCP on stdio until stdin ends (the server: host/mcp/server.ts, its own bundle dist/avfs-mcp.js). */
import type { Command } from 'commander';
import { type CliContext, NO_HOST_ENV } from '../context';

export const mcpHandlers = {
  'mcp.serve': async (ctx: CliContext, opts: { from?: string; exclude?: string[] }, cmd: Command) => {
    // The MCP SDK is loaded only here: in the bundle it is dist/avfs-mcp.js (scripts/build.mjs), so no other command pays for it.
    const { serveMcp } = await import('../../mcp/server');
    await serveMcp({
      homeDir: ctx.homeDir.dir,
      vault: ctx.vault(cmd),
      noHost: process.env[NO_HOST_ENV] === '1',
      stderr: ctx.stderr,
      ...(opts.from !== undefined ? { from: { dir: opts.from, exclude: opts.exclude ?? [] } } : {}),
    });
    ctx.exitWhenDone = true;
  },
};
