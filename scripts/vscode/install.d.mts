// Types of install.mjs, for the TypeScript tests that run code-server themselves (test/vsix/).
export declare const CODE_SERVER_VERSION: string;
export declare const NODE_VERSION: string;
export declare function cacheRoot(): string;
/** Node 24 binary and code-server's entry script, installed into the cache first when needed. */
export declare function ensureCodeServer(opts?: { log?: (line: string) => void }): Promise<{ node: string; entry: string; dir: string }>;
export declare function codeServerStateEnv(dir: string): Record<string, string>;
