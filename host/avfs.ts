/** Entry point of the `avfs` binary. */
import { main } from './cli/main';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`avfs: internal error: ${String(e)}\n`);
    process.exitCode = 1;
  },
);
