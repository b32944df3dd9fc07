// Types of browser.mjs, for the TypeScript tests that drive a browser themselves (test/start.test.ts).
import type { BrowserContext, Page } from 'playwright-core';

export declare const CHROMIUM: string;
export declare function launchBrowser(opts: { userDataDir: string; width?: number; height?: number }): Promise<{ context: BrowserContext; page: Page }>;
