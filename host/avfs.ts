/** Entry point of the `avfs` binary. */
import { CliContext } from './cli/context';
import { main } from './cli/main';

const ctx = new CliContext();
main(process.argv.slice(2), ctx).then(
  (code) => {
    process.exitCode = code;
    // stdout and stderr are synchronous for files and pipes on Linux: nothing is lost by exiting now.
    if (ctx.exitWhenDone) process.exit(code);
  },
  (e: unknown) => {
    process.stderr.write(`avfs: internal error: ${String(e)}\n`);
    process.exitCode = 1;
  },
);
