/**
 * Which rule sets apply to a command in a vault: the user's rules file, then the vault's own
 * rules (stored in the vault). The built-in defaults always apply first, inside the engine.
 */
import { AvfsError } from '../protocol/errors';
import type { ApprovalRequest } from '../protocol/exec';
import type { PolicyRule, RuleSet } from '../protocol/policy';
import { loadUserRules, parseRuleFile, VAULT_RULES_META_KEY, writeUserRules } from './rules';

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

/**
 * "Always allow": adds to the user's rules file one exact rule per part of the command that
 * asked for approval, so the same command runs without asking next time (a guard category such
 * as host_escape or privilege still applies: no argv rule lowers it). Returns the rules' ids.
 */
export function addAlwaysAllowRules(avfsHome: string, req: Pick<ApprovalRequest, 'parts'>, by: string): string | null {
  const asked = req.parts.filter((p) => p.action === 'require_approval' && p.argv.length > 0);
  if (asked.length === 0) return null;
  const loaded = loadUserRules(avfsHome);
  // A file changed outside `avfs policy` is not taken over as the person's own: its rules are kept
  // (to be reviewed) but the file stays reported as changed, so its loosening rules stay off.
  if (loaded?.changedOutside) {
    throw new AvfsError('PolicyFileInvalid', `${loaded.origin}: changed outside \`avfs policy\`; review it and set it with \`avfs policy set-user-rules FILE\` before adding rules to it`, { file: loaded.origin, field: '' });
  }
  const current = loaded?.rules ?? [];
  const now = new Date();
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const ids: string[] = [];
  const rules: PolicyRule[] = [...current];
  asked.forEach((part, i) => {
    const same = rules.find((r) => r.action === 'allow' && r.exact && r.exact.length === part.argv.length && r.exact.every((w, j) => w === part.argv[j]));
    if (same) {
      ids.push(same.id ?? 'an existing rule');
      return;
    }
    const id = `approved-${stamp}-${i + 1}`;
    rules.push({ id, exact: part.argv, action: 'allow', reason: `always allowed by ${by} on ${now.toISOString()}`.slice(0, 500) });
    ids.push(id);
  });
  writeUserRules(avfsHome, { rules, ...(loaded?.allowCheckpointNever ? { allow_checkpoint_never: true } : {}) });
  return ids.join(', ');
}
