/** The policy: decisions and rules (the contract: ../methods.ts). */
import { z } from 'zod';
import { Decision, PolicyCommand, PolicyRulesReport } from '../policy';
import { SandboxMode } from '../sandbox';
import { VaultRef, define } from './define';

const sandboxParam = SandboxMode.optional().describe('the isolation the run would get (default: what exec would use here: workspace where bubblewrap runs, else none)');

export const POLICY_METHODS = {
  'policy/check': define(
    VaultRef.extend({ command: PolicyCommand, cwd: z.string().default('/'), mountpoint: z.string().optional(), sandbox: sandboxParam }),
    Decision.extend({
      context: z.object({
        mountpoint: z.string(),
        cwd: z.string(),
        vault: z.string().nullable(),
        rule_files: z.array(z.string()),
        sandbox: SandboxMode,
        changed_outside: z.array(z.string()).describe('rule files changed outside `avfs policy`: their rules only tightened this decision'),
      }),
    }),
    'decide a command without running it',
  ),
  'policy/rules': define(VaultRef.extend({ sandbox: sandboxParam }), PolicyRulesReport, 'the effective rules and where each came from'),
  'policy/setUserRules': define(
    z.object({
      rules: z.string().nullable().describe('the text of a rules file (validated, then written to <home>/policy.json with its digest), or null to remove it'),
      origin: z.string().default('rules').describe('what the text came from, for error messages (a file name)'),
    }),
    z.object({ file: z.string(), action: z.enum(['set', 'cleared']), rules: z.number(), allow_checkpoint_never: z.boolean() }),
    'set the user\'s own rules file (the only way its loosening rules take effect)',
  ),
  'policy/setVaultRules': define(
    VaultRef.extend({
      rules: z.string().nullable().describe('the text of a rules file (validated, then stored in the vault), or null to remove the vault\'s rules'),
      origin: z.string().default('rules').describe('what the text came from, for error messages (a file name)'),
    }),
    z.object({ vault: z.string(), action: z.enum(['set', 'cleared']), rules: z.number() }),
    'store policy rules in the vault, or remove them',
  ),
} as const;
