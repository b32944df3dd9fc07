/** `avfs policy check|rules|set-user-rules|set-vault-rules`: explain decisions without running anything (handlers: ../handlers/policy.ts). */
import { type Command, Option } from 'commander';
import { type Act, example } from '../define';

function sandboxOption(): Option {
  return new Option('--sandbox <mode>', 'judge for a run in this sandbox mode (default: what exec would use here)').choices(['workspace', 'none']);
}

export function register(program: Command, act: Act): void {
  const policy = program.command('policy').description('explain what the exec policy decides, and which rules apply');

  example(
    policy
      .command('check [argv...]')
      .description('decide a command without running it: --shell "STRING" (run by bash -lc) or -- ARGV...')
      .option('--shell <string>', 'a shell command line, as `bash -lc` would run it')
      .option('--cwd <path>', 'the current directory, as a path inside the vault (default /)')
      .option('--mountpoint <path>', 'where the vault is mounted (default /workspace)')
      .addOption(sandboxOption())
      .action(act('policy.check')),
    'avfs policy check --shell "npm test && git push"',
    'avfs policy check --json -- rm -rf /',
  );
  example(
    policy.command('rules').description('show the effective rules and where each came from').addOption(sandboxOption()).action(act('policy.rules')),
    'avfs policy rules --json',
  );
  example(
    policy
      .command('set-user-rules [file]')
      .description('validate a rules file and make it your policy.json, recording its digest (--clear removes it)')
      .option('--clear', 'remove your rules file')
      .action(act('policy.setUserRules')),
    'avfs policy set-user-rules ./my-rules.json',
    'avfs policy set-user-rules ~/.avfs/policy.json   # accept a file you edited by hand',
  );
  example(
    policy
      .command('set-vault-rules [file]')
      .description('validate a rules file and store it in the vault (--clear removes the vault rules)')
      .option('--clear', 'remove the vault\'s rules')
      .action(act('policy.setVaultRules')),
    'avfs policy set-vault-rules ./vault-rules.json',
    'avfs policy set-vault-rules --clear',
  );
}
