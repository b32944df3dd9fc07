/**
 * From judged parts to a decision. For each part: an argv rule that denies wins; otherwise a
 * matching argv rule (strictest of them) replaces the action of the ordinary categories; guard
 * categories (host escape, privilege …) are a floor no argv rule lowers. The strictest part
 * decides the whole command.
 */
import { type Action, CATEGORIES, type Category, type Decision, type DecisionPart } from '../protocol/policy';
import { GUARD_CATEGORIES } from './defaults';
import type { CompiledPolicy } from './rules';
import { strictness } from './rules';
import type { RawPart } from './script';

interface Pick {
  action: Action;
  rule: string;
  reason: string;
}

function strictest(picks: Pick[]): Pick | undefined {
  let best: Pick | undefined;
  // On a tie the later (more specific) category names the reason.
  for (const p of picks) if (!best || strictness(p.action) >= strictness(best.action)) best = p;
  return best;
}

function shorten(s: string, n = 120): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? one.slice(0, n - 1) + '…' : one;
}

export function decidePart(part: RawPart, policy: CompiledPolicy): DecisionPart {
  const set = new Set<Category>();
  for (const f of part.findings) for (const c of f.categories) set.add(c);
  const categories = CATEGORIES.filter((c) => set.has(c));
  const line = part.argv.join(' ');
  const matches: (Pick & { tightenOnly: boolean })[] = part.argv.length === 0 ? [] : policy.matchers.filter((m) => m.test(part.argv, line)).map(
      (m) => ({ action: m.action, rule: m.name, reason: m.reason, tightenOnly: m.tightenOnly }));
  const fromCategory = (c: Category): Pick => policy.categories[c];
  const guard = strictest(categories.filter((c) => GUARD_CATEGORIES.has(c)).map(fromCategory));
  const ordinary = strictest(categories.filter((c) => !GUARD_CATEGORIES.has(c)).map(fromCategory)) ?? { action: 'allow' as const,
      rule: 'builtin:read_only', reason: 'nothing to judge' };
  const deny = matches.find((m) => m.action === 'deny');
  let chosen: Pick;
  if (deny) chosen = deny;
  else {
    const base = strictest(matches.filter((m) => !m.tightenOnly)) ?? ordinary;
    chosen = guard && strictness(guard.action) > strictness(base.action) ? guard : base;
    // A vault's rules (or a changed user file's) raise the action, never lower it.
    const raise = strictest(matches.filter((m) => m.tightenOnly));
    if (raise && strictness(raise.action) > strictness(chosen.action)) chosen = raise;
  }
  const whys = [...new Set(part.findings.map((f) => f.why))];
  return {
    command: shorten(part.command, 300),
    argv: part.argv,
    action: chosen.action,
    categories,
    reason: `${shorten(part.command)}: ${whys.join('; ')} (${chosen.action} by ${chosen.rule}: ${chosen.reason})`,
    rule: chosen.rule,
  };
}

export function combine(parts: DecisionPart[]): Decision {
  if (parts.length === 0) return { action: 'allow', categories: [], reason: 'nothing to run', rule: 'builtin:empty', parts: [] };
  let worst = parts[0]!;
  for (const p of parts) if (strictness(p.action) > strictness(worst.action)) worst = p;
  const set = new Set<Category>(parts.flatMap((p) => p.categories));
  const others = parts.filter((p) => p.action === worst.action).length - 1;
  return {
    action: worst.action,
    categories: CATEGORIES.filter((c) => set.has(c)),
    reason: `${worst.action}: ${worst.reason}${others > 0 ? ` (and ${others} more part${others > 1 ? 's' : ''} with the same action)` : ''}`,
    rule: worst.rule,
    parts,
  };
}
