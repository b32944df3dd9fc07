// How the host child is launched, and what its early exit means. Pure: unit-tested under node:test.
import { z } from 'zod';

/**
 * The host child's environment: the extension host's, minus what belongs to the editor's own
 * runtime. An inherited VSCODE_* entry point or ELECTRON_RUN_AS_NODE can make a child behave as part
 * of the editor (Positron saw a child turn into a second extension host and hang), and NODE_OPTIONS
 * set for the editor (a debugger, a loader) is not meant for the host.
 */
export function hostEnv(base: NodeJS.ProcessEnv, home: string | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(base)) {
    if (/^(VSCODE_|ELECTRON_)/.test(key) || key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  if (home) env.AVFS_HOME = home;
  return env;
}

const BusyError = z.object({ error: z.literal('Busy'), message: z.string(), socket: z.string() }).loose();

/**
 * The socket of the host that already serves this home, from what a `host --stdio` that refused to
 * start printed (one host per home: it fails with a Busy error naming the running host's socket).
 * The typed error is looked for as a JSON object on any line; failing that, in its message text.
 */
export function runningHostSocket(output: string): string | undefined {
  for (const line of output.split('\n')) {
    const start = line.indexOf('{');
    if (start < 0) continue;
    try {
      const parsed = BusyError.safeParse(JSON.parse(line.slice(start)));
      if (parsed.success) return parsed.data.socket;
    } catch {
      // Not JSON: a plain log line.
    }
  }
  return /\bBusy\b[\s\S]*?\bsocket (\/\S+?)[\s,;)]/.exec(output)?.[1];
}

/** How a child ended, for the log and the "host exited" message. */
export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `killed by ${signal}` : `exit code ${code}`;
}
