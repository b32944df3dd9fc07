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
    if (!exitWhenDone) return;
    // Writes to a pipe whose reader is slower than us are queued (a pipe holds 64 KiB): exiting
    // before they are flushed cut an envelope of a run with a large output at 64 KiB.
    const flushed = (s: NodeJS.WriteStream) => new Promise<void>((r) => (s.writableLength > 0 ? s.write('', () => r()) : r()));
    void Promise.all([flushed(process.stdout), flushed(process.stderr)]).then(() => process.exit(code));
  },
  (e: unknown) => {
    process.stderr.write(`avfs: internal error: ${String(e)}\n`);
    process.exitCode = 1;
  },
);
