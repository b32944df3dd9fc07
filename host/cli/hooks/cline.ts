/**
 * The Cline adapter: its PreToolUse hook input (on stdin) judged by the avfs policy, and the hook
 * output Cline reads (on stdout), as its hook reference documents them:
 *
 *   in:  { clineVersion, hookName: "PreToolUse", timestamp, taskId, workspaceRoots, userId,
 *          preToolUse: { toolName, parameters } }
 *   out: { cancel: boolean, errorMessage?, contextModification? }
 *
 * The call is put as the Claude Code adapter's question (claudeCode.ts: execute_command as Bash,
 * write_to_file and replace_in_file as writes, read_file as a read, the first workspace root as the
 * project) and its answer mapped back. Cline has no "ask": what the policy would have a person
 * approve is cancelled, with the reason and the way to run it (the avfs MCP server's exec tool,
 * which asks an approver). Cline cannot rewrite a call, so there is no --route. Anything malformed
 * is cancelled with the reason, never a silent allow.
 */
import { z } from 'zod';
import { type HookOutput, type PreToolUseInput } from './claudeCode';

export const ClinePreToolUse = z.looseObject({
  clineVersion: z.string().optional(),
  hookName: z.literal('PreToolUse'),
  timestamp: z.string().optional(),
  taskId: z.string().optional(),
  workspaceRoots: z.array(z.string().min(1)).min(1),
  userId: z.string().optional(),
  preToolUse: z.looseObject({ toolName: z.string().min(1), parameters: z.record(z.string(), z.unknown()) }),
});
export type ClinePreToolUse = z.infer<typeof ClinePreToolUse>;

export interface ClineOutput {
  cancel: boolean;
  errorMessage?: string;
  contextModification?: string;
}

/** Cline's tools as the Claude Code adapter judges them: the tool it stands for, and the field that names what it touches. */
const TOOLS: Record<string, { as: string; from: string; to: string }> = {
  execute_command: { as: 'Bash', from: 'command', to: 'command' },
  write_to_file: { as: 'Write', from: 'path', to: 'file_path' },
  replace_in_file: { as: 'Edit', from: 'path', to: 'file_path' },
  read_file: { as: 'Read', from: 'path', to: 'file_path' },
};
export const CLINE_JUDGED_TOOLS = Object.keys(TOOLS);

/** The Claude Code question for a Cline call; undefined: a tool not judged. */
export function asClaudeInput(input: ClinePreToolUse): PreToolUseInput | undefined {
  const tool = TOOLS[input.preToolUse.toolName];
  if (!tool) return undefined;
  const value = input.preToolUse.parameters[tool.from];
  // Cline gives file paths relative to the workspace: the project is the first root.
  const project = input.workspaceRoots[0]!;
  return { cwd: project, hook_event_name: 'PreToolUse', tool_name: tool.as, tool_input: value === undefined ? {} : { [tool.to]: value } };
}

export const cancel = (errorMessage: string): ClineOutput => ({ cancel: true, errorMessage });

/** The Claude Code adapter's answer as Cline's: allow runs; deny and ask cancel, saying why. */
export function toCline(out: HookOutput | Record<string, never>): ClineOutput {
  if (!('hookSpecificOutput' in out)) return { cancel: false };
  const { permissionDecision: d, permissionDecisionReason: why } = out.hookSpecificOutput;
  if (d === 'allow') return { cancel: false };
  if (d === 'deny') return cancel(why);
  return cancel(`${why}; this needs a person's approval, which a Cline hook cannot ask: run it with the avfs MCP server's exec tool (it asks in VS Code), or yourself`);
}

/** The hook script `avfs hook install cline` writes (Cline runs the executable file named PreToolUse). */
export function clineScript(command: string): string {
  return `#!/bin/sh\n# avfs: judge Cline's tool calls with the avfs policy (written by \`avfs hook install cline\`)\nexec ${command}\n`;
}

/** Marks our script: its command runs `hook cline`. */
export const isOurScript = (text: string): boolean => /^exec .*\bhook cline\b/m.test(text) && text.startsWith('#!/bin/sh\n# avfs:');
