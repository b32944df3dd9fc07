/** Where the avfs home is: `$AVFS_HOME`, else `~/.avfs`. Apart from home.ts so finding it loads no store. */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function defaultHome(): string {
  const env = process.env.AVFS_HOME;
  return env && env.length > 0 ? env : join(homedir(), '.avfs');
}

/** An avfs home by its directory alone: what the host's record and socket need. */
export interface HomeDir {
  readonly dir: string;
}

