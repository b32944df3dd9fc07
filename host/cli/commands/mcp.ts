/** `avfs mcp`: the Model Context Protocol server for agents, and `avfs hook` (handlers: ../handlers/mcp.ts). See docs/agents.md. */
import type { Command } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  example(
    program
      .command('mcp')
      .description('serve the vault to an agent over MCP (stdio): file tools, checkpoints, forks, and exec through the policy')
      .action(act('mcp.serve')),
    'avfs mcp',
    'avfs --vault task-1 mcp   # in an MCP client\'s config: {"command": "avfs", "args": ["--vault", "task-1", "mcp"]}',
  );
}
