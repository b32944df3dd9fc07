/** `avfs policy check|rules|set-vault-rules`: explain decisions without running anything. */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { posix } from 'node:path';
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import { CATEGORIES, CATEGORY_DOCS, type Decision, type EffectiveRule, type PolicyCommand, type PolicyRulesReport, type RuleSet } from '../../protocol/policy';
import { createPolicyEngine } from '../../policy/engine';
import { builtinRuleSet, compileRules, describeMatch, parseRuleFile, ruleName, userRulesPath, VAULT_RULES_META_KEY } from '../../policy/rules';
import { effectiveRuleSets } from '../../policy/sources';
import { fromCliPath } from '../../vfs/paths';
import { action, type CliContext, example, table } from '../context';

const DEFAULT_MOUNTPOINT = '/workspace';

/** The vault whose rules apply: --vault, else the current vault, else none. */
function vaultName(ctx: CliContext, cmd: Command): string | null {
  const explicit = ctx.globals(cmd).vault;
  if (explicit !== undefined) return ctx.home.resolve(explicit);
  return ctx.home.current();
}

function ruleSets(ctx: CliContext, cmd: Command): { sets: RuleSet[]; vault: string | null } {
  const vault = vaultName(ctx, cmd);
  if (vault === null) return { sets: effectiveRuleSets(ctx.home.dir, null), vault };
  const v = ctx.home.open(vault, { readonly: true });
  try {
    return { sets: effectiveRuleSets(ctx.home.dir, v), vault };
  } finally {
    v.close();
  }
}

function absolute(name: string, value: string): string {
  if (!posix.isAbsolute(value)) throw new AvfsError('InvalidInput', `${name} must be an absolute path, got ${JSON.stringify(value)}`, { field: name, value });
  return posix.normalize(value);
}

function humanDecision(d: Decision): string {
  const lines = [`${d.action}  (rule ${d.rule})`, `  ${d.reason}`];
  if (d.categories.length) lines.push(`  categories: ${d.categories.join(', ')}`);
  if (d.parts.length > 1) {
    lines.push('  parts:');
    for (const p of d.parts) lines.push(`    ${p.action.padEnd(21)} ${p.command.replace(/\s+/g, ' ').slice(0, 80)}  [${p.categories.join(', ')}]`);
  }
  return lines.join('\n');
}

interface CheckOptions {
  shell?: string;
  cwd?: string;
  mountpoint?: string;
}

export function register(program: Command, ctx: CliContext): void {
  const policy = program.command('policy').description('explain what the exec policy decides, and which rules apply');

  example(
    policy
      .command('check [argv...]')
      .description('decide a command without running it: --shell "STRING" (run by bash -lc) or -- ARGV...')
      .option('--shell <string>', 'a shell command line, as `bash -lc` would run it')
      .option('--cwd <path>', 'the current directory, as a path inside the vault (default /)')
      .option('--mountpoint <path>', `where the vault is mounted (default ${DEFAULT_MOUNTPOINT})`)
      .action(
        action(ctx, async (argv: string[], opts: CheckOptions, cmd: Command) => {
          const hasArgv = argv.length > 0;
          if ((opts.shell === undefined) === !hasArgv) {
            throw new AvfsError('InvalidInput', 'give exactly one of --shell "STRING" or -- ARGV...', { field: 'shell' });
          }
          const command: PolicyCommand = opts.shell !== undefined ? { shell: opts.shell } : { argv };
          const mountpoint = absolute('--mountpoint', opts.mountpoint ?? DEFAULT_MOUNTPOINT);
          const inVault = opts.cwd === undefined ? '/' : fromCliPath(absolute('--cwd', opts.cwd));
          const cwd = inVault === '/' ? mountpoint : posix.join(mountpoint, inVault);
          const { sets, vault } = ruleSets(ctx, cmd);
          // One decision, then exit: the parser's fast-start mode (see ParserOptions.oneShot).
          const engine = await createPolicyEngine({ oneShot: true });
          const decision = engine.decide(command, { mountpoint, cwd, home: homedir(), rules: sets });
          ctx.print(cmd, { ...decision, context: { mountpoint, cwd, vault, rule_files: sets.map((s) => s.origin) } }, () => humanDecision(decision));
        }),
      ),
    'avfs policy check --shell "npm test && git push"',
    'avfs policy check --json -- rm -rf /',
  );

  example(
    policy
      .command('rules')
      .description('show the effective rules and where each came from')
      .action(
        action(ctx, (_opts: unknown, cmd: Command) => {
          const { sets, vault } = ruleSets(ctx, cmd);
          const compiled = compileRules(sets);
          const userFile = userRulesPath(ctx.home.dir);
          const report: PolicyRulesReport = {
            files: [
              { source: 'builtin', origin: 'builtin', present: true, rules: builtinRuleSet().rules.length },
              { source: 'user', origin: userFile, present: sets.some((s) => s.source === 'user'), rules: sets.find((s) => s.source === 'user')?.rules.length ?? 0 },
              ...(vault ? [{ source: 'vault' as const, origin: `vault:${vault}`, present: sets.some((s) => s.source === 'vault'), rules: sets.find((s) => s.source === 'vault')?.rules.length ?? 0 }] : []),
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
          ctx.print(cmd, report, () =>
            [
              'Rule files:',
              ...report.files.map((f) => `  ${f.source.padEnd(8)} ${f.origin}${f.present ? ` (${f.rules} rules)` : ' (none)'}`),
              '',
              'Category actions:',
              table([['CATEGORY', 'ACTION', 'SET BY'], ...report.categories.map((c) => [c.category, c.action, c.rule])]).replace(/^/gm, '  ').trimEnd(),
              '',
              'Rules:',
              table([['NAME', 'MATCH', 'ACTION', 'NOTE'], ...report.rules.map((r) => [r.name, r.match, r.action, r.note ?? ''])]).replace(/^/gm, '  ').trimEnd(),
            ].join('\n'),
          );
        }),
      ),
    'avfs policy rules --json',
  );

  example(
    policy
      .command('set-vault-rules [file]')
      .description('validate a rules file and store it in the vault (--clear removes the vault rules)')
      .option('--clear', 'remove the vault\'s rules')
      .action(
        action(ctx, (file: string | undefined, opts: { clear?: boolean }, cmd: Command) => {
          if (!!opts.clear === (file !== undefined)) throw new AvfsError('InvalidInput', 'give a rules FILE or --clear', { field: 'file' });
          let text: string | null = null;
          let count = 0;
          if (file !== undefined) {
            try {
              text = readFileSync(file === '-' ? 0 : file, 'utf8');
            } catch (e) {
              throw new AvfsError('PolicyFileInvalid', `${file}: cannot read: ${(e as Error).message}`, { file, field: '' });
            }
            const set = parseRuleFile(text, file, 'vault');
            count = set.rules.length;
            // Stored as compact JSON, as validated.
            text = JSON.stringify({ version: 1, rules: set.rules });
          }
          ctx.withVault(cmd, (v) => v.setMeta(VAULT_RULES_META_KEY, text));
          const vault = ctx.home.resolve(ctx.globals(cmd).vault);
          ctx.print(cmd, { vault, action: text === null ? 'cleared' : 'set', rules: count }, () =>
            text === null ? `cleared the policy rules of ${vault}` : `stored ${count} rule${count === 1 ? '' : 's'} in ${vault}`,
          );
        }),
      ),
    'avfs policy set-vault-rules ./vault-rules.json',
    'avfs policy set-vault-rules --clear',
  );
}
