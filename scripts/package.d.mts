// Types of package.mjs, for its test (test/vsix/package.test.ts).
export declare const SUPPORTED_TARGETS: string[];
export declare const RUNTIME_PACKAGES: string[];
export declare function currentTarget(): string;
export declare function packageVsix(opts?: { outDir?: string; log?: (line: string) => void }): Promise<{
  file: string;
  bytes: number;
  listed: string[];
  files: { path: string; size: number }[];
  target: string;
  node: { version: string; abi: string };
  ms: number;
}>;
export declare function unmatchedAllowLines(ignoreText: string, files: string[]): string[];
export declare function expandBraces(pattern: string): string[];
export declare function listZip(file: string): { path: string; size: number; mode: number }[];
