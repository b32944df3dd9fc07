/** Handlers of `avfs policy …`: the decision and the rules as people read them. */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { AvfsError } from '../../protocol/errors';
import type { Decision, PolicyCommand } from '../../protocol/policy';
import type { SandboxMode } from '../../protocol/sandbox';
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
  'policy.check': async (ctx: CliContext, argv: string[], opts: { shell?: string; cwd?: string; mountpoint?: string; sandbox?: SandboxMode }, cmd: Command) => {
    if ((opts.shell === undefined) === (argv.length === 0)) {
      throw new AvfsError('InvalidInput', 'give exactly one of --shell "STRING" or -- ARGV...', { field: 'shell' });
    }
    const command: PolicyCommand = opts.shell !== undefined ? { shell: opts.shell } : { argv };
    const r = await ctx.call('policy/check', {
      ...ctx.inVault(cmd),
      command,
      ...(opts.cwd !== undefined ? { cwd: opts.cwd } : {}),
      ...(opts.mountpoint !== undefined ? { mountpoint: opts.mountpoint } : {}),
      ...(opts.sandbox !== undefined ? { sandbox: opts.sandbox } : {}),
    });
    ctx.print(cmd, r, () =>
      [
        humanDecision(r),
        `  sandbox: ${r.context.sandbox}`,
        ...r.context.changed_outside.map((f) => `  warning: ${f} was changed outside \`avfs policy\`: its rules only tightened this decision`),
      ].join('\n'),
    );
  },

  'policy.rules': async (ctx: CliContext, opts: { sandbox?: SandboxMode }, cmd: Command) => {
    const report = await ctx.call('policy/rules', { ...ctx.inVault(cmd), ...(opts.sandbox !== undefined ? { sandbox: opts.sandbox } : {}) });
    ctx.print(cmd, report, () =>
      [
        'Rule files:',
        ...report.files.map((f) => `  ${f.source.padEnd(8)} ${f.origin}${f.present ? ` (${f.rules} rules)` : ' (none)'}${f.note ? `\n           warning: ${f.note}` : ''}`),
        '',
        `Category actions (sandbox ${report.sandbox}):`,
        table([['CATEGORY', 'ACTION', 'SET BY'], ...report.categories.map((c) => [c.category, c.action, c.rule])]).replace(/^/gm, '  ').trimEnd(),
        '',
        'Rules:',
        table([['NAME', 'MATCH', 'ACTION', 'NOTE'], ...report.rules.map((r) => [r.name, r.match, r.action, r.note ?? ''])]).replace(/^/gm, '  ').trimEnd(),
      ].join('\n'),
    );
  },

  /** The rules file is read here (a host path, or `-` for standard input); the vault stores what it says. */
  'policy.setVaultRules': async (ctx: CliContext, file: string | undefined, opts: { clear?: boolean }, cmd: Command) => {
    const rules = readRulesArgument(file, opts);
    const r = await ctx.call('policy/setVaultRules', { ...ctx.inVault(cmd), rules, origin: file ?? 'rules' });
    ctx.print(cmd, r, () => (r.action === 'cleared' ? `cleared the policy rules of ${r.vault}` : `stored ${r.rules} rule${r.rules === 1 ? '' : 's'} in ${r.vault}`));
  },

  /** Your own rules file: written with its digest, so a later change by anything else is reported. */
  'policy.setUserRules': async (ctx: CliContext, file: string | undefined, opts: { clear?: boolean }, cmd: Command) => {
    const rules = readRulesArgument(file, opts);
    const r = await ctx.call('policy/setUserRules', { rules, origin: file ?? 'rules' });
    ctx.print(cmd, r, () => (r.action === 'cleared' ? `removed ${r.file}` : `wrote ${r.rules} rule${r.rules === 1 ? '' : 's'} to ${r.file}`));
  },
};

/** A rules FILE (a host path, or `-` for standard input), or null with --clear. */
function readRulesArgument(file: string | undefined, opts: { clear?: boolean }): string | null {
  if (!!opts.clear === (file !== undefined)) throw new AvfsError('InvalidInput', 'give a rules FILE or --clear', { field: 'file' });
  if (file === undefined) return null;
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    throw new AvfsError('PolicyFileInvalid', `${file}: cannot read: ${(e as Error).message}`, { file, field: '' });
  }
}
