/**
 * The built-in policy, as data: the action of each category. Reading is allowed, changing the
 * workspace gets a checkpoint, the network and installs and pushes need approval, and leaving
 * the workspace, privilege, planted hooks and code nobody can read are denied.
 * docs/policy.md shows this table.
 */
import type { Action, Category, PolicyRule } from '../protocol/policy';
import type { SandboxMode } from '../protocol/sandbox';

export const BUILTIN_CATEGORY_ACTIONS: Record<Category, { action: Action; reason: string }> = {
  read_only: { action: 'allow', reason: 'reading the workspace is safe' },
  mutating: { action: 'allow_with_checkpoint', reason: 'changes to the workspace can be rolled back from a checkpoint' },
  destructive: { action: 'allow_with_checkpoint', reason: 'deletions inside the workspace can be rolled back from a checkpoint' },
  code_execution: { action: 'allow_with_checkpoint', reason: 'project code may change the workspace; a checkpoint makes it undoable' },
  interactive: { action: 'require_approval', reason: 'nobody is at the terminal to answer it' },
  networked: { action: 'require_approval', reason: 'network access needs explicit approval' },
  package_install: { action: 'require_approval', reason: 'installing from a registry downloads code and may run install scripts' },
  vcs_remote: { action: 'require_approval', reason: 'publishing to a remote is visible to others and hard to undo' },
  system: { action: 'require_approval', reason: 'host processes and services are outside the workspace' },
  container: { action: 'deny', reason: 'a container engine can mount any host path' },
  host_escape: { action: 'deny', reason: 'the workspace is the only place commands may touch' },
  privilege: { action: 'deny', reason: 'privilege escalation is never needed inside a vault' },
  persistence: { action: 'deny', reason: 'code planted to run later escapes the policy' },
  opaque_code: { action: 'deny', reason: 'downloaded or decoded code cannot be judged before it runs' },
  obfuscation: { action: 'deny', reason: 'a computed program could be anything' },
  resource_exhaustion: { action: 'deny', reason: 'a fork bomb takes the whole host down, and a checkpoint cannot bring it back' },
  unknown: { action: 'require_approval', reason: 'what the policy cannot see, a person must' },
};

/**
 * Without the sandbox (mode `none`, and a caller that does not say) code the policy does not read
 * can do anything the user can: read secrets, write outside the vault, reach the network. Its
 * checkpoint covers only the vault, so such code needs a person.
 */
const UNSANDBOXED: Partial<Record<Category, { action: Action; reason: string }>> = {
  code_execution: { action: 'require_approval', reason: 'unsandboxed (--sandbox none): code the policy does not read can do anything you can, outside the vault too' },
};

/** The built-in action of each category for a run in `mode`. */
export function builtinCategoryActions(mode: SandboxMode): Record<Category, { action: Action; reason: string }> {
  return mode === 'workspace' ? BUILTIN_CATEGORY_ACTIONS : { ...BUILTIN_CATEGORY_ACTIONS, ...UNSANDBOXED };
}

/**
 * Categories whose action is a floor: an argv rule that allows a command cannot lower them
 * (only a category rule in the user's file can). `cat *` allowed still cannot read /etc/shadow.
 */
export const GUARD_CATEGORIES: ReadonlySet<Category> = new Set<Category>([
  'host_escape', 'privilege', 'persistence', 'opaque_code', 'obfuscation', 'resource_exhaustion', 'unknown',
]);

/** The built-in defaults as rules, so `avfs policy rules` can list them beside the user's. */
export function builtinRules(mode: SandboxMode = 'workspace'): PolicyRule[] {
  return (Object.entries(builtinCategoryActions(mode)) as [Category, { action: Action; reason: string }][]).map(([category, { action, reason }]) => ({
    id: category,
    category,
    action,
    reason,
  }));
}
