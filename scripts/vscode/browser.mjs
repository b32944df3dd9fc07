// Headless Debian Chromium driven by playwright-core (no browser download), kept off the network.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.AVFS_CHROMIUM || '/usr/bin/chromium';

// Flags measured to keep Chromium from reaching for the network (updates, sync, QUIC probes).
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches Chromium with a fresh profile in `userDataDir` and opens one page.
 * @param {{ userDataDir: string, width?: number, height?: number }} opts
 */
export async function launchBrowser(opts) {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: install Debian's (apt-get install chromium) or set AVFS_CHROMIUM to another Chromium`);
  }
  const context = await chromium.launchPersistentContext(opts.userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    // Chromium keeps its crash reports in $XDG_CONFIG_HOME/chromium whatever the profile: keep them
    // in the fresh profile too, not in the user's home.
    env: { ...process.env, XDG_CONFIG_HOME: join(opts.userDataDir, 'xdg-config'), XDG_CACHE_HOME: join(opts.userDataDir, 'xdg-cache') },
    viewport: { width: opts.width ?? 1280, height: opts.height ?? 800 },
    // Playwright's own signal handlers would close the browser behind the runner's back; the
    // runner closes it in its clean-up instead.
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return { context, page };
}
