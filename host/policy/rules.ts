/**
 * Rules as data: reading and validating rule files (a bad file is a PolicyFileInvalid error
 * naming the file and the field, never a silent fallback), and compiling rule sets into the
 * category table and argv matchers the decision uses.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { AvfsError } from '../protocol/errors';
import { type Action, ACTIONS, CATEGORIES, type Category, type PolicyRule, PolicyRuleFile, type RuleSet, type RuleSourceKind } from '../protocol/policy';
import type { SandboxMode } from '../protocol/sandbox';
import { builtinCategoryActions, builtinRules } from './defaults';

export const USER_RULES_FILE = 'policy.json';
/** The digest of the user's rules file as `avfs policy` last wrote it (`sha256:<hex>`). */
export const USER_RULES_DIGEST_FILE = 'policy.json.sha256';
export const VAULT_RULES_META_KEY = 'policy.rules';

export function userRulesPath(avfsHome: string): string {
  return join(avfsHome, USER_RULES_FILE);
}

function digestOf(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** The digest `avfs policy` recorded when it last wrote the user's file, if any. */
function recordedDigest(avfsHome: string): string | null {
  try {
    return readFileSync(join(avfsHome, USER_RULES_DIGEST_FILE), 'utf8').trim();
  } catch {
    return null;
  }
}

/**
 * Writes the user's rules file (validated) and records its digest: the only way rules a person
 * sets reach the file. A file whose text no longer has that digest was changed by something
 * else (an editor, or a script in a run) and its rules can only tighten until set again.
 * `null` removes the file.
 */
export function writeUserRules(avfsHome: string, file: PolicyRuleFile | null): void {
  const path = userRulesPath(avfsHome);
  const digestPath = join(avfsHome, USER_RULES_DIGEST_FILE);
  if (file === null) {
    rmSync(path, { force: true });
    rmSync(digestPath, { force: true });
    return;
  }
  const text = JSON.stringify(PolicyRuleFile.parse({ version: 1, ...file }), null, 2) + '\n';
  mkdirSync(avfsHome, { recursive: true, mode: 0o700 });
  const put = (to: string, body: string) => {
    const tmp = `${to}.${process.pid}.tmp`;
    writeFileSync(tmp, body, { mode: 0o600 });
    renameSync(tmp, to);
  };
  put(digestPath, digestOf(text) + '\n');
  put(path, text);
}

export function strictness(a: Action): number {
  return ACTIONS.indexOf(a);
}

export function stricter(a: Action, b: Action): Action {
  return strictness(a) >= strictness(b) ? a : b;
}

/** Validates rule-file JSON text; `origin` names the file (or vault) in errors. */
export function parseRuleFile(text: string, origin: string, source: RuleSourceKind): RuleSet {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new AvfsError('PolicyFileInvalid', `${origin}: not valid JSON: ${(e as Error).message}`, { file: origin, field: '' });
  }
  const r = PolicyRuleFile.safeParse(json);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.map(String).join('.');
    throw new AvfsError('PolicyFileInvalid', `${origin}: ${field || '(top level)'}: ${issue.message}`, { file: origin, field });
  }
  return { source, origin, rules: r.data.rules, ...(r.data.allow_checkpoint_never ? { allowCheckpointNever: true } : {}) };
}

/** The user's rules file, or null when there is none. Unreadable or invalid files are errors. */
export function loadUserRules(avfsHome: string): RuleSet | null {
  const file = userRulesPath(avfsHome);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new AvfsError('PolicyFileInvalid', `${file}: cannot read: ${(e as Error).message}`, { file, field: '' });
  }
  const set = parseRuleFile(text, file, 'user');
  if (recordedDigest(avfsHome) !== digestOf(text)) set.changedOutside = true;
  return set;
}

/** A set whose rules may only make decisions stricter: a vault's, or a user file changed outside `avfs policy`. */
export function tightenOnly(set: RuleSet): boolean {
  return set.source === 'vault' || set.changedOutside === true;
}

/** Whether the user's own (unchanged) file lets a run skip the checkpoint the policy asks for. */
export function allowsCheckpointNever(sets: RuleSet[]): boolean {
  return sets.some((s) => s.source === 'user' && !s.changedOutside && s.allowCheckpointNever === true);
}

export function builtinRuleSet(mode: SandboxMode = 'workspace'): RuleSet {
  return { source: 'builtin', origin: 'builtin', rules: builtinRules(mode) };
}

export function ruleName(set: RuleSet, rule: PolicyRule, index: number): string {
  return `${set.source}:${rule.id ?? (rule.category && set.source === 'builtin' ? rule.category : `#${index + 1}`)}`;
}

export function describeMatch(rule: PolicyRule): string {
  if (rule.exact) return `exact ${JSON.stringify(rule.exact)}`;
  if (rule.prefix) return `prefix ${JSON.stringify(rule.prefix)}`;
  if (rule.glob !== undefined) return `glob ${JSON.stringify(rule.glob)}`;
  if (rule.regex !== undefined) return `regex /${rule.regex}/`;
  return `category ${rule.category}`;
}

export interface CategoryEntry {
  action: Action;
  rule: string;
  reason: string;
  /** Set when a vault rule (or a changed user file's) tried to loosen the action and was held to it. */
  note?: string;
}

export interface ArgvMatcher {
  name: string;
  source: RuleSourceKind;
  action: Action;
  reason: string;
  /** From a vault's rules or a changed user file: it can raise a part's action, never lower it. */
  tightenOnly: boolean;
  test(argv: string[], line: string): boolean;
}

export interface CompiledPolicy {
  categories: Record<Category, CategoryEntry>;
  matchers: ArgvMatcher[];
}

function matcher(rule: PolicyRule): (argv: string[], line: string) => boolean {
  if (rule.exact) {
    const exact = rule.exact;
    return (argv) => argv.length === exact.length && exact.every((t, i) => argv[i] === t);
  }
  if (rule.prefix) {
    const prefix = rule.prefix;
    return (argv) => argv.length >= prefix.length && prefix.every((t, i) => argv[i] === t);
  }
  if (rule.glob !== undefined) {
    const m = picomatch(rule.glob, { bash: true, dot: true });
    return (_argv, line) => m(line);
  }
  const re = new RegExp(rule.regex ?? '(?!)');
  return (_argv, line) => re.test(line);
}

/**
 * Builds the category table (built-in for the sandbox mode; the user's category rules replace it;
 * a vault's, or those of a user file changed outside `avfs policy`, can only make it stricter) and
 * the argv matchers (user, then vault; the built-in set has none).
 */
export function compileRules(sets: RuleSet[], mode: SandboxMode = 'none'): CompiledPolicy {
  const categories = {} as Record<Category, CategoryEntry>;
  const builtin = builtinCategoryActions(mode);
  for (const c of CATEGORIES) categories[c] = { action: builtin[c].action, rule: `builtin:${c}`, reason: builtin[c].reason };
  const matchers: ArgvMatcher[] = [];
  const all = [builtinRuleSet(mode), ...sets.filter((s) => s.source !== 'builtin')];
  for (const source of ['builtin', 'user', 'vault'] as const) {
    const seen = new Set<Category>();
    for (const set of all.filter((s) => s.source === source)) {
      const tighten = tightenOnly(set);
      set.rules.forEach((rule, i) => {
        const name = ruleName(set, rule, i);
        const reason = rule.reason ?? `rule ${name}`;
        if (rule.category) {
          if (source === 'builtin') return;
          const cur = categories[rule.category];
          if (!tighten) {
            // Several user rules for one category: the strictest of them.
            const action = seen.has(rule.category) ? stricter(cur.action, rule.action) : rule.action;
            seen.add(rule.category);
            if (action === rule.action) categories[rule.category] = { action, rule: name, reason };
          } else if (strictness(rule.action) > strictness(cur.action)) {
            categories[rule.category] = { action: rule.action, rule: name, reason };
          } else if (strictness(rule.action) < strictness(cur.action)) {
            cur.note = `${name} asks for ${rule.action}, but ${set.source === 'vault' ? 'a vault rule' : 'a rule of a file changed outside `avfs policy`'} can only tighten`;
          }
          return;
        }
        matchers.push({ name, source, action: rule.action, reason, tightenOnly: tighten, test: matcher(rule) });
      });
    }
  }
  return { categories, matchers };
}
