/** `avfs proxy exec`: run one command in a vault mount through the policy, and report it. See docs/exec.md (handler: ../handlers/exec.ts). */
import { type Command, Option } from 'commander';
import { type Act, example } from '../define';

export function register(program: Command, act: Act): void {
  const proxy = program.command('proxy').description('the policy-gated execution surface for agents');
  example(
    proxy
      .command('exec [argv...]')
      .description('run a command in a vault mount: policy → (approval) → (checkpoint) → mount → run → change summary')
      .option('--shell <string>', 'a shell command line, run by bash -c (instead of -- ARGV...)')
      .option('--cwd <path>', 'working directory inside the vault (created if missing)', '/')
      .option('-r, --readonly', 'mount read-only: writes fail with EROFS')
      .option('--materialize', 'run in a native working copy of the vault (kept warm between runs), then commit what changed back in one transaction; for heavy commands (git, npm install, builds), see docs/exec.md')
      .option('--keep-mount', 'leave the mount up for the next call (and reuse one that is up)')
      .option('--mountpoint <dir>', 'mount here (an empty directory) instead of under the avfs home')
      .option('--allow-other', 'let other users reach the mount (for a command run as another user; see docs/fuse.md)')
      .option('--timeout <ms>', 'stop the command after MS milliseconds (0: never)', '300000')
      .option('--grace <ms>', 'after SIGTERM, wait MS before SIGKILL', '2000')
      .addOption(new Option('--checkpoint <mode>', 'checkpoint before running: auto (when the policy says so), always, never').choices(['auto', 'always', 'never']).default('auto'))
      .option('-e, --env <NAME=VALUE>', 'set a variable for the command (repeatable)', (v: string, acc: string[]) => [...acc, v], [] as string[])
      .option('--clean-env', 'pass only a minimal environment (PATH, HOME, USER, LANG, TERM, …) instead of this one')
      .option('--stdin', 'feed this process\'s standard input to the command (default: /dev/null)')
      .option('--max-output <bytes>', 'bytes of stdout and of stderr kept in the envelope (head and tail)', String(1024 * 1024))
      .addOption(
        new Option('--sandbox <mode>', 'workspace: isolate the command with bubblewrap (the mount is the only writable place, a private home, no network unless approved); none: no isolation (default: workspace where bubblewrap can run, see avfs doctor)').choices([
          'workspace',
          'none',
        ]),
      )
      .option('--no-prompt', 'never ask on this terminal: a command that needs approval is denied')
      .action(act('exec.run')),
    'avfs proxy exec --json -- npm test',
    'avfs --vault task-1 proxy exec --keep-mount --shell "git add -A && git commit -m wip"',
    'avfs --vault task-1 proxy exec --materialize --shell "npm install && npm test"',
  );
  example(
    program
      .command('doctor')
      .description('whether commands can be sandboxed here (bubblewrap, user namespaces, process and memory limits), and why not')
      .action(act('exec.doctor')),
    'avfs doctor --json',
  );
}
