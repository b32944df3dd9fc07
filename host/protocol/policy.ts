/**
 * The policy contract: actions, categories, the decision object, and the rule files users write.
 * The engine (host/policy), the CLI's `--json` and later the RPC layer all use these schemas.
 * docs/policy.md describes them for users.
 */
import { z } from 'zod';
import { SandboxMode } from './sandbox';

/** From loosest to strictest; the strictest part of a command decides. */
export const ACTIONS = ['allow', 'allow_with_checkpoint', 'require_approval', 'deny'] as const;
export const Action = z.enum(ACTIONS);
export type Action = z.infer<typeof Action>;

export const CATEGORY_DOCS = {
  read_only: 'only reads the workspace (or harmless system files)',
  mutating: 'changes files inside the workspace',
  destructive: 'deletes or overwrites workspace data in bulk (rm, git clean, git reset --hard, find -delete)',
  code_execution: 'runs code the policy does not read: a script, inline code (python -c, node -e), build scripts',
  interactive: 'waits for a terminal: editors, REPLs, pagers, shells with no script, git commit without -m',
  networked: 'talks to the network',
  package_install: 'installs packages from a registry (and may run their install scripts)',
  vcs_remote: 'pushes to or publishes on a remote (git push, gh, npm publish)',
  system: 'affects host processes or services (kill, systemctl, crontab)',
  container: 'drives a container engine (docker, podman), which can mount any host path',
  host_escape: 'reads or writes a path outside the workspace (/etc, ~, $HOME, .. above the root, /tmp)',
  privilege: 'escalates privilege (sudo, su, doas, pkexec, setuid bits, chroot)',
  persistence: 'plants code that runs later outside the policy (.git/hooks, core.hooksPath, shell rc files)',
  opaque_code: 'runs downloaded or decoded bytes as code (curl | sh, base64 -d | sh, bash <(curl …))',
  obfuscation: 'the program itself is computed ($X, $(…), globs, IFS games), so it could be anything',
  resource_exhaustion: 'starts processes without end (fork bombs, endless loops of background jobs), which can take the host down',
  unknown: 'something the policy cannot see into: a parse error, an argument whose value is unknown',
} as const;
export type Category = keyof typeof CATEGORY_DOCS;
export const CATEGORIES = Object.keys(CATEGORY_DOCS) as [Category, ...Category[]];
export const Category = z.enum(CATEGORIES);

/** One judged piece of a compound command (a simple command, or a part the parser could not read). */
export const DecisionPart = z.object({
  command: z.string(),
  argv: z.array(z.string()),
  action: Action,
  categories: z.array(Category),
  reason: z.string(),
  rule: z.string(),
});
export type DecisionPart = z.infer<typeof DecisionPart>;

export const Decision = z.object({
  action: Action,
  categories: z.array(Category),
  reason: z.string(),
  rule: z.string(),
  parts: z.array(DecisionPart),
});
export type Decision = z.infer<typeof Decision>;

/** What the engine judges: a shell string (run by `bash -lc`) or an argv list (run as is). */
export const PolicyCommand = z.union([
  z.strictObject({ shell: z.string() }),
  z.strictObject({ argv: z.array(z.string()).min(1) }),
]);
export type PolicyCommand = z.infer<typeof PolicyCommand>;

const MATCH_KEYS = ['exact', 'prefix', 'glob', 'regex', 'category'] as const;
export type MatchKey = (typeof MATCH_KEYS)[number];

/**
 * One rule: exactly one matcher and an action. `exact`/`prefix` compare argv tokens (the program
 * by its base name); `glob` (picomatch, `*` crosses `/`) and `regex` test the argv joined by
 * single spaces; `category` sets the action of a whole category.
 */
export const PolicyRule = z
  .strictObject({
    id: z.string().min(1).max(100).optional(),
    exact: z.array(z.string()).min(1).optional(),
    prefix: z.array(z.string()).min(1).optional(),
    glob: z.string().min(1).optional(),
    regex: z
      .string()
      .min(1)
      .optional()
      .check((ctx) => {
        if (ctx.value === undefined) return;
        try {
          new RegExp(ctx.value);
        } catch (e) {
          ctx.issues.push({ code: 'custom', message: `not a valid regular expression: ${(e as Error).message}`, input: ctx.value });
        }
      }),
    category: Category.optional(),
    action: Action,
    reason: z.string().max(500).optional(),
  })
  .check((ctx) => {
    const keys = MATCH_KEYS.filter((k) => ctx.value[k] !== undefined);
    if (keys.length !== 1) {
      ctx.issues.push({
        code: 'custom',
        message: keys.length === 0 ? `a rule needs one of ${MATCH_KEYS.join(', ')}` : `a rule takes only one of ${keys.join(', ')}`,
        path: [keys[1] ?? 'exact'],
        input: ctx.value,
      });
    }
  });
export type PolicyRule = z.infer<typeof PolicyRule>;

/** A rules file: `<home>/policy.json`, or a vault's rules (meta key `policy.rules`). */
export const PolicyRuleFile = z.strictObject({
  version: z.literal(1).optional(),
  rules: z.array(PolicyRule),
  allow_checkpoint_never: z
    .boolean()
    .optional()
    .describe('let `proxy exec --checkpoint never` skip the checkpoint the policy asks for (read from the user\'s own file only)'),
});
export type PolicyRuleFile = z.infer<typeof PolicyRuleFile>;

export const RuleSourceKind = z.enum(['builtin', 'user', 'vault']);
export type RuleSourceKind = z.infer<typeof RuleSourceKind>;

/** Rules from one place, in the order the engine applies them: builtin, then user, then vault. */
export interface RuleSet {
  source: RuleSourceKind;
  /** Where the rules came from: a file path, `vault:<name>`, or `builtin`. */
  origin: string;
  rules: PolicyRule[];
  /** The user's file, when `avfs policy` did not write it as it now is: its rules can only tighten (see rules.ts). */
  changedOutside?: boolean;
  /** The file's `allow_checkpoint_never` (honoured from the user's own, unchanged file only). */
  allowCheckpointNever?: boolean;
}

/** One row of `avfs policy rules`. */
export const EffectiveRule = z.object({
  name: z.string(),
  source: RuleSourceKind,
  origin: z.string(),
  match: z.string(),
  action: Action,
  reason: z.string(),
  note: z.string().optional(),
});
export type EffectiveRule = z.infer<typeof EffectiveRule>;

export const PolicyRulesReport = z.object({
  files: z.array(
    z.object({
      source: RuleSourceKind,
      origin: z.string(),
      present: z.boolean(),
      rules: z.number(),
      changed_outside: z.boolean().optional().describe('the file is not as `avfs policy` last wrote it: its rules can only tighten until a person sets them again'),
      note: z.string().optional(),
    }),
  ),
  sandbox: SandboxMode.describe('the mode the category actions shown are for'),
  categories: z.array(z.object({ category: Category, action: Action, rule: z.string(), doc: z.string() })),
  rules: z.array(EffectiveRule),
});
export type PolicyRulesReport = z.infer<typeof PolicyRulesReport>;
