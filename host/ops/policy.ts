/** Policy operations: decide a command without running it, show the rules, store a vault's rules. */
import { homedir } from 'node:os';
import { posix } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { CATEGORIES, CATEGORY_DOCS, type EffectiveRule, type PolicyRulesReport, type RuleSet } from '../protocol/policy';
import type { SandboxMode } from '../protocol/sandbox';
import { builtinRuleSet, compileRules, describeMatch, parseRuleFile, ruleName, userRulesPath, VAULT_RULES_META_KEY, writeUserRules } from '../policy/rules';
import { effectiveRuleSets } from '../policy/sources';
import { decideOnce } from '../policy/engine';
import { defaultSandboxMode } from '../sandbox/defaultMode';
import { checkVaultPath, normalizePath } from '../vfs/paths';
import type { OpsContext, OpsTable } from './context';
import { writing } from './vaultAccess';

/** Where a vault is taken to be mounted when the caller does not say. */
const DEFAULT_MOUNTPOINT = '/workspace';

/** The rule sets that apply: the user's, and the vault's (the named one, else the current one, else none). */
function ruleSets(ctx: OpsContext, explicit: string | undefined): { sets: RuleSet[]; vault: string | null } {
  const vault = explicit !== undefined ? ctx.home.resolve(explicit) : ctx.home.current();
  if (vault === null) return { sets: effectiveRuleSets(ctx.home.dir, null), vault };
  return { sets: ctx.vaults.use(vault, 'read', ctx.surface, (v) => effectiveRuleSets(ctx.home.dir, v)), vault };
}

function absolute(name: string, value: string): string {
  if (!posix.isAbsolute(value)) throw new AvfsError('InvalidInput', `${name} must be an absolute path, got ${JSON.stringify(value)}`, { field: name, value });
  return posix.normalize(value);
}

/** What `policy rules` says of a user file that `avfs policy` did not write as it is. */
const CHANGED_OUTSIDE_NOTE = 'changed outside `avfs policy`: its rules can only tighten until you set them again with `avfs policy set-user-rules FILE`';

function rulesReport(ctx: OpsContext, sets: RuleSet[], vault: string | null, mode: SandboxMode): PolicyRulesReport {
  const compiled = compileRules(sets, mode);
  const present = (source: RuleSet['source']) => sets.find((s) => s.source === source);
  const user = present('user');
  return {
    files: [
      { source: 'builtin', origin: 'builtin', present: true, rules: builtinRuleSet(mode).rules.length },
      {
        source: 'user',
        origin: userRulesPath(ctx.home.dir),
        present: !!user,
        rules: user?.rules.length ?? 0,
        ...(user?.changedOutside ? { changed_outside: true, note: CHANGED_OUTSIDE_NOTE } : {}),
      },
      ...(vault ? [{ source: 'vault' as const, origin: `vault:${vault}`, present: !!present('vault'), rules: present('vault')?.rules.length ?? 0 }] : []),
    ],
    sandbox: mode,
    categories: CATEGORIES.map((c) => ({ category: c, action: compiled.categories[c].action, rule: compiled.categories[c].rule, doc: CATEGORY_DOCS[c] })),
    rules: [builtinRuleSet(mode), ...sets].flatMap((set) =>
      set.rules.map((r, i): EffectiveRule => {
        const name = ruleName(set, r, i);
        const overridden = r.category && compiled.categories[r.category].rule !== name;
        return {
          name,
          source: set.source,
          origin: set.origin,
          match: describeMatch(r),
          action: r.action,
          reason: r.reason ?? '',
          ...(overridden ? { note: `overridden by ${compiled.categories[r.category!].rule}` } : {}),
          ...(r.category && compiled.categories[r.category].note && set.source !== 'builtin' && compiled.categories[r.category].note!.startsWith(name + ' ')
            ? { note: compiled.categories[r.category].note }
            : {}),
          ...(!r.category && set.source !== 'builtin' && (set.source === 'vault' || set.changedOutside) && r.action !== 'deny'
            ? { note: `${set.source === 'vault' ? 'a vault rule' : 'a rule of a file changed outside `avfs policy`'} only raises a part's action, never lowers it` }
            : {}),
        };
      }),
    ),
  };
}

export const policyOps = {
  'policy/check': async (ctx, p) => {
    // The probe runs while the rules are read.
    const probe = p.sandbox !== undefined ? Promise.resolve(p.sandbox) : defaultSandboxMode(ctx.home.dir);
    const mountpoint = absolute('mountpoint', p.mountpoint ?? DEFAULT_MOUNTPOINT);
    const inVault = normalizePath(checkVaultPath(absolute('cwd', p.cwd)));
    const cwd = inVault === '/' ? mountpoint : posix.join(mountpoint, inVault);
    const { sets, vault } = ruleSets(ctx, p.vault);
    const sandbox = await probe;
    const decision = await decideOnce(ctx.engine, p.command, { mountpoint, cwd, home: homedir(), rules: sets, sandbox });
    const changed = sets.filter((s) => s.changedOutside).map((s) => s.origin);
    return { ...decision, context: { mountpoint, cwd, vault, rule_files: sets.map((s) => s.origin), sandbox, changed_outside: changed } };
  },

  'policy/rules': async (ctx, p) => {
    const probe = p.sandbox !== undefined ? Promise.resolve(p.sandbox) : defaultSandboxMode(ctx.home.dir);
    const { sets, vault } = ruleSets(ctx, p.vault);
    return rulesReport(ctx, sets, vault, await probe);
  },

  'policy/setUserRules': (ctx, p) => {
    const file = userRulesPath(ctx.home.dir);
    if (p.rules === null) {
      writeUserRules(ctx.home.dir, null);
      return { file, action: 'cleared' as const, rules: 0, allow_checkpoint_never: false };
    }
    const set = parseRuleFile(p.rules, p.origin, 'user');
    writeUserRules(ctx.home.dir, { rules: set.rules, ...(set.allowCheckpointNever ? { allow_checkpoint_never: true } : {}) });
    return { file, action: 'set' as const, rules: set.rules.length, allow_checkpoint_never: set.allowCheckpointNever === true };
  },

  'policy/setVaultRules': (ctx, p) => {
    let text: string | null = null;
    let count = 0;
    if (p.rules !== null) {
      const set = parseRuleFile(p.rules, p.origin, 'vault');
      count = set.rules.length;
      // Stored as compact JSON, as validated.
      text = JSON.stringify({ version: 1, rules: set.rules });
    }
    const vault = ctx.home.resolve(p.vault);
    writing(ctx, vault, (v) => v.setMeta(VAULT_RULES_META_KEY, text));
    return { vault, action: text === null ? ('cleared' as const) : ('set' as const), rules: count };
  },
} satisfies Partial<OpsTable>;
