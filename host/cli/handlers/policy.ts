/** Handlers of `avfs policy …`: the decision and the rules as people read them. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import type { Decision, PolicyCommand } from '../../protocol/policy';
import { type CliContext, table } from '../context';

function humanDecision(d: Decision): string {
  const lines = [`${d.action}  (rule ${d.rule})`, `  ${d.reason}`];
  if (d.categories.length) lines.push(`  categories: ${d.categories.join(', ')}`);
  if (d.parts.length > 1) {
    lines.push('  parts:');
    for (const p of d.parts) lines.push(`    ${p.action.padEnd(21)} ${p.command.replace(/\s+/g, ' ').slice(0, 80)}  [${p.categories.join(', ')}]`);
  }
  return lines.join('\n');
}

export const policyHandlers = {
  'policy.check': async (ctx: CliContext, argv: string[], opts: { shell?: string; cwd?: string; mountpoint?: string }, cmd: Command) => {
    if ((opts.shell === undefined) === (argv.length === 0)) {
      throw new AvfsError('InvalidInput', 'give exactly one of --shell "STRING" or -- ARGV...', { field: 'shell' });
    }
    const command: PolicyCommand = opts.shell !== undefined ? { shell: opts.shell } : { argv };
    const r = await ctx.call('policy/check', {
      ...ctx.inVault(cmd),
      command,
      ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
      ...(opts.mountpoint !== undefined ? { mountpoint: opts.mountpoint } : {}),
    });
    ctx.print(cmd, r, () => humanDecision(r));
  },

  'policy.rules': async (ctx: CliContext, _opts: unknown, cmd: Command) => {
    const report = await ctx.call('policy/rules', ctx.inVault(cmd));
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
  },

  /** The rules file is read here (a host path, or `-` for standard input); the vault stores what it says. */
  'policy.setVaultRules': async (ctx: CliContext, file: string | undefined, opts: { clear?: boolean }, cmd: Command) => {
    if (!!opts.clear === (file !== undefined)) throw new AvfsError('InvalidInput', 'give a rules FILE or --clear', { field: 'file' });
    let rules: string | null = null;
    if (file !== undefined) {
      try {
        rules = readFileSync(file === '-' ? 0 : file, 'utf8');
      } catch (e) {
        throw new AvfsError('PolicyFileInvalid', `${file}: cannot read: ${(e as Error).message}`, { file, field: '' });
      }
    }
    const r = await ctx.call('policy/setVaultRules', { ...ctx.inVault(cmd), rules, origin: file ?? 'rules' });
    ctx.print(cmd, r, () => (r.action === 'cleared' ? `cleared the policy rules of ${r.vault}` : `stored ${r.rules} rule${r.rules === 1 ? '' : 's'} in ${r.vault}`));
  },
};
