// Types of installed.mjs, for the TypeScript tests that start code-server with the extension installed.
export declare function inputHash(): string;
export declare function ensureInstalled(opts: { stateDir: string; log?: (line: string) => void }): Promise<{ hash: string; vsix: string; built: boolean; installed: boolean }>;
