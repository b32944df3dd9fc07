/**
 * The Claude Code adapter: its PreToolUse hook input (on stdin) judged by the avfs policy, and the
 * hook output Claude Code reads (on stdout), as its hooks reference documents them:
 *
 *   in:  { session_id, transcript_path, cwd, permission_mode, hook_event_name: "PreToolUse",
 *          tool_name, tool_input, tool_use_id }
 *   out: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow"|"deny"|"ask",
 *          permissionDecisionReason, updatedInput? } }
 *
 * Bash: the command is judged (deny → deny, require_approval → ask, else allow); with a vault to
 * route to, it is rewritten to run through `avfs proxy exec` in that vault. File tools (Write, Edit,
 * MultiEdit, Read, NotebookEdit): the path is judged as the command that would touch it, against the
 * project as the workspace: outside it, a write is denied and a read asked. Anything malformed is
 * "ask" with the reason, never a silent allow.
 */
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import type { Decision } from '../../protocol/policy';

export const PreToolUseInput = z.looseObject({
  session_id: z.string().optional(),
  transcript_path: z.string().optional(),
  cwd: z.string().min(1),
  permission_mode: z.string().optional(),
  hook_event_name: z.literal('PreToolUse'),
  tool_name: z.string().min(1),
  tool_input: z.record(z.string(), z.unknown()),
  tool_use_id: z.string().optional(),
});
export type PreToolUseInput = z.infer<typeof PreToolUseInput>;

export type PermissionDecision = 'allow' | 'deny' | 'ask';

export interface HookOutput {
  hookSpecificOutput: {
    hookEventName: 'PreToolUse';
    permissionDecision: PermissionDecision;
    permissionDecisionReason: string;
    updatedInput?: Record<string, unknown>;
  };
}

export const output = (permissionDecision: PermissionDecision, permissionDecisionReason: string, updatedInput?: Record<string, unknown>): HookOutput => ({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision, permissionDecisionReason, ...(updatedInput ? { updatedInput } : {}) },
});

/** The tools whose file path is judged, and whether they write. */
const FILE_TOOLS: Record<string, { field: string; writes: boolean }> = {
  Read: { field: 'file_path', writes: false },
  Write: { field: 'file_path', writes: true },
  Edit: { field: 'file_path', writes: true },
  MultiEdit: { field: 'file_path', writes: true },
  NotebookEdit: { field: 'notebook_path', writes: true },
};
export const JUDGED_TOOLS = ['Bash', ...Object.keys(FILE_TOOLS)];

/** A word for a shell line: single-quoted. */
export const shellQuote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** What the policy is asked: a command, where it runs (the workspace: a mountpoint, and a cwd inside it). */
export interface PolicyQuestion {
  command: string;
  /** The host directory taken as the workspace (the project); undefined: the vault's own mount. */
  mountpoint?: string;
  cwd: string;
}

export interface HookOptions {
  /** Rewrite Bash commands to run through `avfs proxy exec` in this vault. */
  route?: string;
  /** How to start avfs in a rewritten command (this CLI: node and its script). */
  avfs: string;
  /** The project: CLAUDE_PROJECT_DIR when set, else the hook input's cwd. */
  projectDir?: string;
}

/** The question for one hook input, or the answer when no question is needed. */
export type Question = { ask: PolicyQuestion; tool: 'bash' | 'read' | 'write'; outside?: string };

export function questionOf(input: PreToolUseInput, opts: HookOptions): Question | { answer: HookOutput } | { pass: true } {
  const project = resolve(opts.projectDir ?? input.cwd);
  const inside = (p: string) => {
    const rel = relative(project, p);
    return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
  };
  const cwdIn = inside(resolve(input.cwd)) ? `/${relative(project, resolve(input.cwd))}` : '/';
  if (input.tool_name === 'Bash') {
    const command = input.tool_input.command;
    if (typeof command !== 'string' || command.trim() === '') return { answer: output('ask', 'avfs: the Bash tool input has no command string to judge') };
    // Routed, the command runs in the vault: judged against the vault's own mount.
    return { ask: opts.route !== undefined ? { command, cwd: cwdIn } : { command, mountpoint: project, cwd: cwdIn }, tool: 'bash' };
  }
  const file = FILE_TOOLS[input.tool_name];
  if (!file) return { pass: true };
  const path = input.tool_input[file.field];
  if (typeof path !== 'string' || path === '' || path.includes('\0')) return { answer: output('ask', `avfs: the ${input.tool_name} tool input has no usable ${file.field}`) };
  const abs = resolve(input.cwd, path);
  // The path is judged as the command that would touch it: the policy's path rules (the workspace, secrets, system files) apply.
  return {
    ask: { command: `${file.writes ? 'tee' : 'cat'} -- ${shellQuote(abs)}`, mountpoint: project, cwd: cwdIn },
    tool: file.writes ? 'write' : 'read',
    ...(inside(abs) ? {} : { outside: `${abs} is outside the project (${project})` }),
  };
}

/** The hook output for a decision of the policy. */
export function answerOf(input: PreToolUseInput, q: Question, d: Pick<Decision, 'action' | 'rule' | 'reason'>, opts: HookOptions): HookOutput {
  const { tool } = q;
  const why = `avfs policy: ${d.action} (rule ${d.rule}): ${d.reason}`;
  if (d.action === 'deny') return output(tool === 'read' ? 'ask' : 'deny', why);
  // A file tool outside the project: a write is denied, a read asked, whatever the policy allows there.
  if (q.outside !== undefined) return output(tool === 'read' ? 'ask' : 'deny', `avfs: ${q.outside}`);
  const cwd = q.ask.cwd;
  const decision: PermissionDecision = d.action === 'require_approval' ? 'ask' : 'allow';
  if (tool === 'bash' && opts.route !== undefined) {
    const command = input.tool_input.command as string;
    const routed = `${opts.avfs} --vault ${shellQuote(opts.route)} proxy exec --cwd ${shellQuote(cwd)} --shell ${shellQuote(command)}`;
    return output(decision, `${why}; runs in vault ${opts.route} through avfs proxy exec`, { ...input.tool_input, command: routed });
  }
  return output(decision, why);
}

/** The settings entry `avfs hook install claude-code` writes into a Claude Code settings.json. */
export function hookEntry(command: string): { matcher: string; hooks: Array<{ type: 'command'; command: string; timeout: number }> } {
  return { matcher: JUDGED_TOOLS.join('|'), hooks: [{ type: 'command', command, timeout: 30 }] };
}

/** Marks our hook in a settings file: its command runs `hook claude-code`. */
export const isOurs = (command: unknown): boolean => typeof command === 'string' && /\bhook claude-code\b/.test(command);

/**
 * Merges our entry into a settings document: every other key and hook is kept; an entry of ours
 * already there is updated in place (so installing twice adds nothing).
 */
export function mergeSettings(settings: Record<string, unknown>, command: string): { settings: Record<string, unknown>; action: 'added' | 'updated' | 'unchanged' } {
  const out = structuredClone(settings);
  const hooks = (out.hooks ??= {}) as Record<string, unknown>;
  if (typeof hooks !== 'object' || Array.isArray(hooks)) throw new Error('"hooks" is not an object');
  const pre = (hooks.PreToolUse ??= []) as unknown[];
  if (!Array.isArray(pre)) throw new Error('"hooks.PreToolUse" is not an array');
  const entry = hookEntry(command);
  for (const group of pre) {
    const list = (group as { hooks?: unknown }).hooks;
    if (!Array.isArray(list)) continue;
    const i = list.findIndex((h) => isOurs((h as { command?: unknown }).command));
    if (i === -1) continue;
    // The matcher is ours to set only when the group holds our hook alone.
    const alone = list.length === 1;
    const same = JSON.stringify(list[i]) === JSON.stringify(entry.hooks[0]) && (!alone || (group as { matcher?: unknown }).matcher === entry.matcher);
    list[i] = entry.hooks[0];
    if (alone) (group as { matcher?: unknown }).matcher = entry.matcher;
    return { settings: out, action: same ? 'unchanged' : 'updated' };
  }
  pre.push(entry);
  return { settings: out, action: 'added' };
}
