// Types of runningExtensions.mjs, for the TypeScript benches and tests that read VS Code's activation count.
import type { Page } from 'playwright-core';
export declare function runningExtensionActivation(page: Page, displayName: string): Promise<{ ms: number; text: string; others: { name: string; text: string }[] }>;
