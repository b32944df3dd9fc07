// The runner's side of the UI bridge. Tests in the extension host cannot click or look at the
// workbench, so they ask the runner to: POST {AVFS_UI_DRIVER}/step/<name> with JSON arguments runs the
// Playwright step `<name>` from test/vscode/uiSteps.ts against the page showing that very window,
// and answers {ok: true, value} or {ok: false, error}. One step at a time, each with a timeout.
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';

/**
 * @param {object} opts
 * @param {Record<string, (ctx: object, args: unknown) => Promise<unknown>>} opts.steps
 * @param {() => object} opts.context    what each step receives (page, screenshot helper…)
 * @param {(line: string) => void} opts.log
 * @param {number} [opts.stepTimeoutMs]
 */
export async function startUiDriver(opts) {
  // A secret path keeps other local processes from driving the browser.
  const token = randomBytes(16).toString('hex');
  const prefix = `/${token}/step/`;
  let queue = Promise.resolve();
  const server = createServer((req, res) => {
    const reply = (status, body) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || !req.url?.startsWith(prefix)) return reply(404, { ok: false, error: 'not a UI step' });
    const name = decodeURIComponent(req.url.slice(prefix.length));
    const step = Object.hasOwn(opts.steps, name) ? opts.steps[name] : undefined;
    if (!step) return reply(404, { ok: false, error: `no UI step "${name}" (known: ${Object.keys(opts.steps).join(', ')})` });
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      queue = queue.then(async () => {
        const started = Date.now();
        try {
          const args = body ? JSON.parse(body) : undefined;
          const value = await withTimeout(step(opts.context(), args), opts.stepTimeoutMs ?? 30_000, `UI step "${name}"`);
          opts.log(`ui step ${name} ok (${Date.now() - started} ms)`);
          reply(200, { ok: true, value: value ?? null });
        } catch (e) {
          // Playwright colours its call log; the message ends up in a test report.
          const message = (e instanceof Error ? e.message : String(e)).replace(/\x1b\[[0-9;]*m/g, '');
          const error = `${message}\n(arguments: ${body || 'none'})`;
          opts.log(`ui step ${name} failed (${Date.now() - started} ms): ${error.split('\n')[0]}`);
          reply(200, { ok: false, error });
        }
      });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}/${token}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms))),
  ]).finally(() => clearTimeout(timer));
}
