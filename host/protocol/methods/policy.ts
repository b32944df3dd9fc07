/** The policy: decisions and rules (the contract: ../methods.ts). */
import { z } from 'zod';
import { Decision, PolicyCommand, PolicyRulesReport } from '../policy';
import { VaultRef, define } from './define';

export const POLICY_METHODS = {
  'policy/check': define(
    VaultRef.extend({ command: PolicyCommand, cwd: z.string().default('/'), mountpoint: z.string().optional() }),
    Decision.extend({ context: z.object({ mountpoint: z.string(), cwd: z.string(), vault: z.string().nullable(), rule_files: z.array(z.string()) }) }),
    'decide a command without running it',
  ),
  'policy/rules': define(VaultRef, PolicyRulesReport, 'the effective rules and where each came from'),
  'policy/setVaultRules': define(
    VaultRef.extend({
      rules: z.string().nullable().describe('the text of a rules file (validated, then stored in the vault), or null to remove the vault\'s rules'),
      origin: z.string().default('rules').describe('what the text came from, for error messages (a file name)'),
    }),
    z.object({ vault: z.string(), action: z.enum(['set', 'cleared']), rules: z.number() }),
    'store policy rules in the vault, or remove them',
  ),
} as const;
