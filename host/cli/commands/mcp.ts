/** `avfs mcp` (the Model Context Protocol server for agents) and `avfs hook` (agents' hook adapters). Handlers: ../handlers/mcp.ts, ../handlers/hook.ts. See docs/agents.md. */
import type { Command } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  example(
    program
      .command('mcp')
      .description('serve the vault to an agent over MCP (stdio): file tools, checkpoints, forks, and exec through the policy')
      .option('--from <dir>', 'serve the vault made from this project folder (made now, as vault create --from does, if there is none yet; named by --vault or the folder)')
      .option('--exclude <pattern>', 'with --from, when the vault is made: also leave out paths matching this gitignore-style pattern (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
      .action(act('mcp.serve')),
    'avfs mcp',
    'avfs --vault task-1 mcp --from ~/src/app   # the agent works in a vault made from the project; avfs apply brings its work back',
    'avfs --vault task-1 mcp   # in an MCP client\'s config: {"command": "avfs", "args": ["--vault", "task-1", "mcp"]}',
  );
  const hook = program.command('hook').description('hook adapters for agents: judge their tool calls with the avfs policy');
  example(
    hook
      .command('claude-code')
      .description('judge one Claude Code PreToolUse call (JSON on stdin) and print the hook\'s decision (allow, deny or ask) on stdout')
      .option('--route <vault>', 'also rewrite Bash commands to run through `avfs proxy exec` in this vault')
      .action(act('hook.claudeCode')),
    'echo \'{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf /"},"cwd":"/src/app"}\' | avfs hook claude-code',
  );
  example(
    hook
      .command('cline')
      .description('judge one Cline PreToolUse call (JSON on stdin) and print the hook\'s answer ({"cancel": …}) on stdout')
      .action(act('hook.cline')),
    'echo \'{"hookName":"PreToolUse","workspaceRoots":["/src/app"],"preToolUse":{"toolName":"execute_command","parameters":{"command":"rm -rf /"}}}\' | avfs hook cline',
  );
  example(
    hook
      .command('install <agent>')
      .description('add the avfs hook to an agent (claude-code: .claude/settings.json, keeping every other setting and hook; cline: the .clinerules/hooks/PreToolUse script)')
      .option('--project', 'this project\'s .claude/settings.json, or .clinerules/hooks/ (the default)')
      .option('--user', 'your ~/.claude/settings.json, or ~/Documents/Cline/Hooks/')
      .option('--route <vault>', 'the installed hook routes Bash commands through this vault')
      .option('--from <dir>', 'route into the vault made from this project folder (made now if there is none; named by --route or the folder)')
      .option('--print', 'print the settings it would write, and write nothing')
      .action(act('hook.install')),
    'avfs hook install claude-code --project',
    'avfs hook install claude-code --project --from .   # Bash runs in a vault made from this project',
    'avfs hook install claude-code --user --print',
    'avfs hook install cline',
  );
}
