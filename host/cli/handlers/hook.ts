/**
 * `avfs hook claude-code` and `avfs hook cline` (judge one PreToolUse call: stdin → stdout), and
 * `avfs hook install claude-code|cline` (write the settings entry, or the hook script). The
 * adapters' shapes and rules: ../hooks/claudeCode.ts, ../hooks/cline.ts.
 */
import type { Command } from 'commander';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { AvfsError, toAvfsError } from '../../protocol/errors';
import { type ProjectVault, projectVault, vaultNameFor } from '../../ops/projectVault';
import type { CliContext } from '../context';
import { readAll } from '../execRequest';
import { type HookOptions, type HookOutput, PreToolUseInput, answerOf, mergeSettings, output, questionOf, shellQuote } from '../hooks/claudeCode';
import { ClinePreToolUse, asClaudeInput, cancel, clineScript, isOurScript, toCline } from '../hooks/cline';

/** Hook input larger than this is not judged (asked). */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** How a rewritten command or the installed hook starts this avfs: node and the CLI's script, both absolute. */
function avfsCommand(): string {
  return `${shellQuote(process.execPath)} ${shellQuote(resolve(process.argv[1] ?? 'avfs'))}`;
}

async function judge(ctx: CliContext, text: string, opts: HookOptions): Promise<HookOutput | Record<string, never>> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return output('ask', 'avfs: the hook input is not JSON, so the call was not judged');
  }
  const parsed = PreToolUseInput.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return output('ask', `avfs: the hook input is not a PreToolUse call (${issue ? `${issue.path.join('.') || 'input'}: ${issue.message}` : 'malformed'}), so it was not judged`);
  }
  return judgeInput(ctx, parsed.data, opts);
}

/** One PreToolUse call judged by the policy: Claude Code's hook output, or `{}` for a tool not judged. */
async function judgeInput(ctx: CliContext, input: PreToolUseInput, opts: HookOptions): Promise<HookOutput | Record<string, never>> {
  const q = questionOf(input, opts);
  if ('answer' in q) return q.answer;
  if ('pass' in q) return {};
  try {
    const d = await ctx.call('policy/check', {
      ...(opts.route !== undefined ? { vault: opts.route } : {}),
      command: { shell: q.ask.command },
      cwd: q.ask.cwd,
      ...(q.ask.mountpoint !== undefined ? { mountpoint: q.ask.mountpoint } : {}),
    });
    return answerOf(input, q, d, opts);
  } catch (e) {
    const ae = toAvfsError(e);
    return output('ask', `avfs: the policy could not judge this call (${ae.kind}: ${ae.message})`);
  }
}

export const hookHandlers = {
  'hook.claudeCode': async (ctx: CliContext, opts: { route?: string }) => {
    // Whatever happens, Claude Code gets one decision and exit 0: a failure to judge is "ask", never a silent allow.
    let result: object;
    try {
      const text = await readAll(process.stdin);
      result =
        Buffer.byteLength(text) > MAX_INPUT_BYTES
          ? output('ask', `avfs: the hook input is larger than ${MAX_INPUT_BYTES} bytes, so it was not judged`)
          : await judge(ctx, text, { ...(opts.route !== undefined ? { route: opts.route } : {}), avfs: avfsCommand(), ...(process.env.CLAUDE_PROJECT_DIR ? { projectDir: process.env.CLAUDE_PROJECT_DIR } : {}) });
    } catch (e) {
      result = output('ask', `avfs: the hook failed (${toAvfsError(e).message}), so the call was not judged`);
    }
    ctx.stdout.write(JSON.stringify(result) + '\n');
  },

  'hook.cline': async (ctx: CliContext) => {
    // Whatever happens, Cline gets one answer and exit 0: a failure to judge cancels the call, never a silent allow.
    let result: object;
    try {
      const text = await readAll(process.stdin);
      result = Buffer.byteLength(text) > MAX_INPUT_BYTES ? cancel(`avfs: the hook input is larger than ${MAX_INPUT_BYTES} bytes, so it was not judged`) : await judgeCline(ctx, text);
    } catch (e) {
      result = cancel(`avfs: the hook failed (${toAvfsError(e).message}), so the call was not judged`);
    }
    ctx.stdout.write(JSON.stringify(result) + '\n');
  },

  'hook.install': async (ctx: CliContext, agent: string, opts: { project?: boolean; user?: boolean; print?: boolean; route?: string; from?: string }, cmd: Command) => {
    if (agent !== 'claude-code' && agent !== 'cline') throw new AvfsError('InvalidInput', `avfs hook install knows claude-code and cline, not ${JSON.stringify(agent)} (for Codex, see docs/agents.md: it connects over MCP)`, { field: 'agent', value: agent });
    if (opts.project && opts.user) throw new AvfsError('InvalidInput', 'give one of --project or --user', { field: 'project' });
    if (agent === 'cline' && opts.from !== undefined) throw new AvfsError('InvalidInput', 'a Cline hook cannot route a command into a vault, so there is no --from for cline', { field: 'from' });
    if (agent === 'cline') return installCline(ctx, opts, cmd);
    const file = opts.user ? join(process.env.HOME || homedir(), '.claude', 'settings.json') : join(process.cwd(), '.claude', 'settings.json');
    let settings: Record<string, unknown> = {};
    if (existsSync(file)) {
      const text = readFileSync(file, 'utf8');
      let doc: unknown;
      try {
        doc = text.trim() === '' ? {} : JSON.parse(text);
      } catch (e) {
        throw new AvfsError('InvalidInput', `${file} is not JSON (${e instanceof Error ? e.message : String(e)}): it was left as it is`, { file });
      }
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new AvfsError('InvalidInput', `${file} does not hold a JSON object: it was left as it is`, { file });
      settings = doc as Record<string, unknown>;
    }
    let made: ProjectVault | undefined;
    if (opts.from !== undefined && !opts.print) {
      // The vault the hook routes Bash commands into, made from the project the agent works on (or found again).
      made = await projectVault((m, p) => ctx.call(m, p), { ...(opts.route !== undefined ? { name: opts.route } : {}), dir: opts.from, cwd: process.cwd() });
      opts.route = made.vault;
    } else if (opts.from !== undefined) opts.route ??= vaultNameFor(resolve(opts.from));
    const command = `${avfsCommand()} hook claude-code${opts.route !== undefined ? ` --route ${shellQuote(opts.route)}` : ''}`;
    let merged: ReturnType<typeof mergeSettings>;
    try {
      merged = mergeSettings(settings, command);
    } catch (e) {
      throw new AvfsError('InvalidInput', `${file}: ${e instanceof Error ? e.message : String(e)}: it was left as it is`, { file });
    }
    const text = JSON.stringify(merged.settings, null, 2) + '\n';
    if (!opts.print && merged.action !== 'unchanged') {
      mkdirSync(dirname(file), { recursive: true });
      const tmp = `${file}.avfs-${process.pid}.tmp`;
      writeFileSync(tmp, text);
      renameSync(tmp, file);
    }
    const result = { file, action: opts.print ? 'printed' : merged.action, command, settings: merged.settings, ...(made ? { vault: made } : {}) };
    const vaultLine = made ? `${made.created ? 'made vault' : 'vault'} ${made.vault} from ${made.source}: Bash commands run there; avfs apply --vault ${made.vault} brings the work back\n` : '';
    ctx.print(cmd, result, () => (opts.print ? text : `${vaultLine}${merged.action === 'unchanged' ? 'already installed in' : merged.action === 'added' ? 'added the avfs hook to' : 'updated the avfs hook in'} ${file}\n`));
  },
};

async function judgeCline(ctx: CliContext, text: string): Promise<object> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return cancel('avfs: the hook input is not JSON, so the call was not judged');
  }
  const parsed = ClinePreToolUse.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return cancel(`avfs: the hook input is not a Cline PreToolUse call (${issue ? `${issue.path.join('.') || 'input'}: ${issue.message}` : 'malformed'}), so it was not judged`);
  }
  const input = asClaudeInput(parsed.data);
  if (!input) return { cancel: false };
  return toCline(await judgeInput(ctx, input, { avfs: avfsCommand(), projectDir: parsed.data.workspaceRoots[0]! }));
}

/** `avfs hook install cline`: the executable PreToolUse script in the project's (or the user's) Cline hooks folder; one that is not ours is left alone. */
function installCline(ctx: CliContext, opts: { user?: boolean; print?: boolean; route?: string }, cmd: Command): void {
  if (opts.route !== undefined) throw new AvfsError('InvalidInput', 'a Cline hook cannot rewrite a command, so there is no --route for cline', { field: 'route' });
  const dir = opts.user ? join(process.env.HOME || homedir(), 'Documents', 'Cline', 'Hooks') : join(process.cwd(), '.clinerules', 'hooks');
  const file = join(dir, 'PreToolUse');
  const command = `${avfsCommand()} hook cline`;
  const text = clineScript(command);
  const existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  if (existing !== undefined && !isOurScript(existing)) {
    throw new AvfsError('InvalidInput', `${file} is another PreToolUse hook: it was left as it is (Cline runs one script per hook; call \`${command}\` from it)`, { file });
  }
  const action = existing === undefined ? 'added' : existing === text ? 'unchanged' : 'updated';
  if (!opts.print && action !== 'unchanged') {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.avfs-${process.pid}.tmp`;
    writeFileSync(tmp, text);
    chmodSync(tmp, 0o755);
    renameSync(tmp, file);
  }
  const result = { file, action: opts.print ? 'printed' : action, command, script: text };
  ctx.print(cmd, result, () => (opts.print ? text : `${action === 'unchanged' ? 'already installed in' : action === 'added' ? 'added the avfs hook as' : 'updated the avfs hook in'} ${file}\n`));
}
