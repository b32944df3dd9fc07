/**
 * The policy engine: a pure function from (command, context) to a decision, after a one-time
 * load of the shell parser. Nothing here reads files or runs anything; rule files are loaded
 * by the caller (rules.ts) and passed in.
 */
import { posix } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { type Decision, PolicyCommand, type RuleSet } from '../protocol/policy';
import { combine, decidePart } from './decide';
import { loadBashParser } from './parse';
import { compileRules, type CompiledPolicy } from './rules';
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
}

export interface PolicyEngine {
  decide(command: PolicyCommand, ctx: PolicyContext): Decision;
}

function checkContext(ctx: PolicyContext): void {
  for (const [k, v] of [['mountpoint', ctx.mountpoint], ['cwd', ctx.cwd]] as const) {
    if (typeof v !== 'string' || !posix.isAbsolute(v)) throw new AvfsError('InvalidInput',
        `policy context ${k} must be an absolute path, got ${JSON.stringify(v)}`, { field: k });
  }
}

export interface EngineOptions {
  /**
   * The process makes one decision and exits (`avfs policy check`, a proxied exec): load the
   * parser for a fast start rather than fast parsing. See `loadBashParser`.
   */
  oneShot?: boolean;
}

export async function createPolicyEngine(options: EngineOptions = {}): Promise<PolicyEngine> {
  const parser = await loadBashParser({ oneShot: options.oneShot === true });
  // Rule sets rarely change between calls: compile each array of sets once.
  const compiled = new WeakMap<RuleSet[], CompiledPolicy>();
  const defaults = compileRules([]);
  return {
    decide(command, ctx) {
      checkContext(ctx);
      const cmd = PolicyCommand.parse(command);
      let policy = ctx.rules.length === 0 ? defaults : compiled.get(ctx.rules);
      if (!policy) {
        policy = compileRules(ctx.rules);
        compiled.set(ctx.rules, policy);
      }
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
        // Fail closed: whatever was judged so far stands, and the rest needs a person.
        walker.unfinished('shell' in cmd ? cmd.shell : cmd.argv.join(' '), e);
      }
      return combine(walker.parts.map((p) => decidePart(p, policy)));
    },
  };
}
