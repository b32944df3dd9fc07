/**
 * The policy engine: a pure function from (command, context) to a decision, after a one-time
 * load of the shell parser. Nothing here reads files or runs anything; rule files are loaded
 * by the caller (rules.ts) and passed in.
 */
import { posix } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { type Decision, PolicyCommand, type RuleSet } from '../protocol/policy';
import type { SandboxMode } from '../protocol/sandbox';
import { combine, decidePart } from './decide';
import { type BashParser, loadBashParser } from './parse';
import { allowsCheckpointNever, compileRules, type CompiledPolicy } from './rules';
import { ScriptWalker } from './script';

export interface PolicyContext {
  /** Absolute path where the vault is mounted: the workspace. */
  mountpoint: string;
  /** Absolute current directory of the command (inside the mountpoint). */
  cwd: string;
  /** The host user's home directory, for `~` and $HOME (outside the workspace either way). */
  home?: string;
  /** User and vault rule sets; the built-in defaults always apply first. */
  rules: RuleSet[];
  /**
   * The isolation the run will get: code of unknown effect is judged by it (see protocol/sandbox.ts).
   * Absent means `none`: a caller that does not say the run is sandboxed gets the unsandboxed judgement.
   */
  sandbox?: SandboxMode;
}

export interface PolicyEngine {
  decide(command: PolicyCommand, ctx: PolicyContext): Decision;
}

function checkContext(ctx: PolicyContext): void {
  for (const [k, v] of [['mountpoint', ctx.mountpoint], ['cwd', ctx.cwd]] as const) {
    if (typeof v !== 'string' || !posix.isAbsolute(v)) throw new AvfsError('InvalidInput',
        `policy context ${k} must be an absolute path, got ${JSON.stringify(v)}`, { field: k });
  }
  if (ctx.sandbox !== undefined && ctx.sandbox !== 'workspace' && ctx.sandbox !== 'none') {
    throw new AvfsError('InvalidInput', `policy context sandbox must be workspace or none, got ${JSON.stringify(ctx.sandbox)}`, { field: 'sandbox' });
  }
}

/** Thrown by the parser of a first pass without one: the command has shell text to read. */
class NeedsParser extends Error {}

/** Stands in for the parser on a first pass: reading any shell text ends the pass. */
const NO_PARSER: BashParser = {
  parse() {
    throw new NeedsParser('the command has shell text');
  },
};

/** One decision: the walk of the command with `parser`, the findings judged by the rules. */
function judge(parser: BashParser, policy: CompiledPolicy, cmd: PolicyCommand, ctx: PolicyContext): Decision {
  const walker = new ScriptWalker(parser, {
    mountpoint: posix.normalize(ctx.mountpoint),
    cwd: posix.normalize(ctx.cwd),
    ...(ctx.home ? { home: ctx.home } : {}),
  });
  const scope = walker.rootScope();
  try {
    if ('shell' in cmd) walker.walkText(cmd.shell, scope, 'command');
    else walker.walkArgv(cmd.argv, scope);
  } catch (e) {
    if (e instanceof NeedsParser) throw e;
    // Fail closed: whatever was judged so far stands, and the rest needs a person.
    walker.unfinished('shell' in cmd ? cmd.shell : cmd.argv.join(' '), e);
  }
  return combine(walker.parts.map((p) => decidePart(p, policy)));
}

/** The mode a context asks for: absent is `none` (fail closed). */
export function sandboxOf(ctx: Pick<PolicyContext, 'sandbox'>): SandboxMode {
  return ctx.sandbox === 'workspace' ? 'workspace' : 'none';
}

export async function createPolicyEngine(): Promise<PolicyEngine> {
  const parser = loadBashParser();
  // Rule sets rarely change between calls: compile each array of sets once per mode.
  const compiled = { workspace: new WeakMap<RuleSet[], CompiledPolicy>(), none: new WeakMap<RuleSet[], CompiledPolicy>() };
  const defaults = { workspace: compileRules([], 'workspace'), none: compileRules([], 'none') };
  return {
    decide(command, ctx) {
      checkContext(ctx);
      const cmd = PolicyCommand.parse(command);
      const mode = sandboxOf(ctx);
      let policy = ctx.rules.length === 0 ? defaults[mode] : compiled[mode].get(ctx.rules);
      if (!policy) {
        policy = compileRules(ctx.rules, mode);
        compiled[mode].set(ctx.rules, policy);
      }
      return judge(parser, policy, cmd, ctx);
    },
  };
}

/**
 * One decision for a process that makes only this one (a CLI call), loading the shell parser
 * only if the command needs it. The parser's native modules take a few ms to load; an argv command whose
 * words hold no shell text (`-- npm test`, not `-- bash -c "…"`) is judged word by word, and the
 * walk with the parser would never call it: the same walk, so the same decision. The first
 * pass stops at the first shell text it meets, and the command is judged again with the parser.
 */
export async function decideOnce(load: () => Promise<PolicyEngine>, command: PolicyCommand, ctx: PolicyContext): Promise<Decision> {
  checkContext(ctx);
  const cmd = PolicyCommand.parse(command);
  const plain = 'shell' in cmd ? plainArgv(cmd.shell) : undefined;
  try {
    return judge(NO_PARSER, compileRules(ctx.rules, sandboxOf(ctx)), plain ? { argv: plain } : cmd, ctx);
  } catch (e) {
    if (!(e instanceof NeedsParser)) throw e;
  }
  return (await load()).decide(cmd, ctx);
}

/**
 * Bash's reserved words and builtins. As the first word of shell text they are more than a program
 * name (they change the shell's state, or read what follows as shell text), so such text is read by
 * the parser even when its words are plain.
 */
const SHELL_WORDS = new Set(
  (
    'if then else elif fi case esac for select while until do done in function time coproc ' +
    ': . alias bg bind break builtin caller cd command compgen complete compopt continue declare dirs disown echo enable ' +
    'eval exec exit export false fc fg getopts hash help history jobs kill let local logout mapfile popd printf pushd ' +
    'pwd read readarray readonly return set shift shopt source suspend test times trap true type typeset ulimit umask ' +
    'unalias unset wait'
  ).split(' '),
);

/**
 * The argv bash runs for shell text of plain words (letters, digits and `_@%+=:,./-`, single
 * spaces; no quoting, expansion, redirection, operator, assignment, job spec or builtin first),
 * which is judged like that argv: the same walk, so the same decision, without loading the parser
 * (the corpus test holds every such line of the corpus to it). Anything else: undefined.
 */
export function plainArgv(text: string): string[] | undefined {
  if (!/^[\w@%+=:,./ -]+$/.test(text)) return undefined;
  const words = text.split(' ').filter((w) => w !== '');
  const first = words[0];
  if (first === undefined || first.includes('=') || first.startsWith('%') || SHELL_WORDS.has(first)) return undefined;
  return words;
}

/**
 * A run asked to skip its checkpoint (`--checkpoint never`): where the policy would take one
 * (allow_with_checkpoint, or require_approval) and the user's own rules file does not say
 * `"allow_checkpoint_never": true`, the run is denied (the agent cannot opt a run out of the
 * undo the policy gives it). Otherwise the decision is unchanged.
 */
export function refuseCheckpointOptOut(decision: Decision, rules: RuleSet[]): Decision {
  if (decision.action !== 'allow_with_checkpoint' && decision.action !== 'require_approval') return decision;
  if (allowsCheckpointNever(rules)) return decision;
  const reason = `--checkpoint never: the policy takes a checkpoint before this run (${decision.action}), and your rules do not allow skipping it ` +
      '(set "allow_checkpoint_never": true in your policy.json with `avfs policy set-user-rules FILE`)';
  return { ...decision, action: 'deny', rule: 'builtin:checkpoint', reason: `deny: ${reason}; ${decision.reason}` };
}
