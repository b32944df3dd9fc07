// Types of codeServer.mjs, for the TypeScript tests that run code-server themselves (test/vsix/).
export interface WorkbenchOptions {
  folder?: string;
  /** A .code-workspace file to open instead of a folder. */
  workspace?: string;
  extensionDevelopmentPath?: string;
  extensionTestsPath?: string;
}

export interface CodeServer {
  port: number;
  url: string;
  pid: number;
  workbenchUrl(opts: WorkbenchOptions): string;
  exited: Promise<{ code: number | null; signal: string | null }>;
  stop(): Promise<void>;
  killNow(): void;
}

export declare const QUIET_SETTINGS: Record<string, unknown>;
export declare function startCodeServer(opts: {
  stateDir: string;
  port?: number;
  settings?: Record<string, unknown>;
  env?: Record<string, string>;
  onOutput?: (line: string) => void;
  log?: (line: string) => void;
  startTimeoutMs?: number;
  /** false: no smoke-test driver, so toasts show (and the URL's payload is ignored: run an installed extension). */
  smokeTestDriver?: boolean;
}): Promise<CodeServer>;
