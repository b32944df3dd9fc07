/** Entry point of the `avfs` binary. */
import { main } from './cli/main';

/**
 * A reader that stops early (`avfs cat /big | head -c 10`) closes the pipe: end the way coreutils
 * do, killed by SIGPIPE, quietly (a shell reports status 141). Node ignores SIGPIPE, so the
 * default action is put back first (a listener added and removed leaves SIG_DFL behind).
 */
function dieOfBrokenPipe(e: NodeJS.ErrnoException): void {
  if (e.code !== 'EPIPE') throw e;
  const noop = () => undefined;
  process.on('SIGPIPE', noop);
  process.off('SIGPIPE', noop);
  process.kill(process.pid, 'SIGPIPE');
  process.exit(128 + 13); // only if the signal did not end the process
}
process.stdout.on('error', dieOfBrokenPipe);
process.stderr.on('error', dieOfBrokenPipe);

main(process.argv.slice(2)).then(
  ({ code, exitWhenDone }) => {
    process.exitCode = code;
    // Exit once what was written has left: a pipe to a slow reader is written asynchronously, and
    // exiting at once cut the output (an envelope) at the pipe's 64 KiB.
    if (exitWhenDone) process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  },
  (e: unknown) => {
    process.stderr.write(`avfs: internal error: ${String(e)}\n`);
    process.exitCode = 1;
  },
);
