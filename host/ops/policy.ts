/** Policy operations: decide a command without running it, show the rules, store a vault's rules. */
import { homedir } from 'node:os';
import { posix } from 'node:path';
import { AvfsError } from '../protocol/errors';
import { CATEGORIES, CATEGORY_DOCS, type EffectiveRule, type PolicyRulesReport, type RuleSet } from '../protocol/policy';
import { builtinRuleSet, compileRules, describeMatch, parseRuleFile, ruleName, userRulesPath, VAULT_RULES_META_KEY } from '../policy/rules';
import { effectiveRuleSets } from '../policy/sources';
import { decideOnce } from '../policy/engine';
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

function rulesReport(ctx: OpsContext, sets: RuleSet[], vault: string | null): PolicyRulesReport {
  const compiled = compileRules(sets);
  const present = (source: RuleSet['source']) => sets.find((s) => s.source === source);
  return {
    files: [
      { source: 'builtin', origin: 'builtin', present: true, rules: builtinRuleSet().rules.length },
      { source: 'user', origin: userRulesPath(ctx.home.dir), present: !!present('user'), rules: present('user')?.rules.length ?? 0 },
      ...(vault ? [{ source: 'vault' as const, origin: `vault:${vault}`, present: !!present('vault'), rules: present('vault')?.rules.length ?? 0 }] : []),
    ],
    categories: CATEGORIES.map((c) => ({ category: c, action: compiled.categories[c].action, rule: compiled.categories[c].rule, doc: CATEGORY_DOCS[c] })),
    rules: [builtinRuleSet(), ...sets].flatMap((set) =>
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
          ...(r.category && compiled.categories[r.category].note && set.source === 'vault' ? { note: compiled.categories[r.category].note } : {}),
        };
      }),
    ),
  };
}

export const policyOps = {
  'policy/check': async (ctx, p) => {
    const mountpoint = absolute('mountpoint', p.mountpoint ?? DEFAULT_MOUNTPOINT);
    const inVault = normalizePath(checkVaultPath(absolute('cwd', p.cwd)));
    const cwd = inVault === '/' ? mountpoint : posix.join(mountpoint, inVault);
    const { sets, vault } = ruleSets(ctx, p.vault);
    const decision = await decideOnce(ctx.engine, p.command, { mountpoint, cwd, home: homedir(), rules: sets });
    return { ...decision, context: { mountpoint, cwd, vault, rule_files: sets.map((s) => s.origin) } };
  },

  'policy/rules': (ctx, p) => {
    const { sets, vault } = ruleSets(ctx, p.vault);
    return rulesReport(ctx, sets, vault);
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
