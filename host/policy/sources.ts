/**
 * Which rule sets apply to a command in a vault: the user's rules file, then the vault's own
 * rules (stored in the vault). The built-in defaults always apply first, inside the engine.
 */
import type { RuleSet } from '../protocol/policy';
import { loadUserRules, parseRuleFile, VAULT_RULES_META_KEY } from './rules';

/** Where the vault's rules come from: the text stored in its meta table, if any. */
export interface VaultRulesSource {
  name: string;
  meta(key: string): string | undefined;
}

export function effectiveRuleSets(avfsHome: string, vault: VaultRulesSource | null): RuleSet[] {
  const sets: RuleSet[] = [];
  const user = loadUserRules(avfsHome);
  if (user) sets.push(user);
  const text = vault?.meta(VAULT_RULES_META_KEY);
  if (vault && text !== undefined) sets.push(parseRuleFile(text, `vault:${vault.name}`, 'vault'));
  return sets;
}
