/**
 * The filtering proxy of a run whose network part was let run for known hosts (docs/exec.md,
 * "Network by host"), the way @anthropic-ai/sandbox-runtime does it on Linux: the run keeps a
 * network namespace of its own (loopback only); this HTTP proxy, outside, listens on a Unix socket
 * that is bound into the run; inside, socat bridges 127.0.0.1:3128 to that socket, and the run's
 * HTTP_PROXY / HTTPS_PROXY name it. The proxy opens connections only to the hosts the policy read
 * from the command (policy/networkHosts.ts); every other host is refused (HTTP 403) and recorded
 * as a violation. Plain HTTP requests (absolute URLs) and CONNECT tunnels (HTTPS, git over https)
 * are served; anything that ignores the proxy variables has no route out at all.
 *
 * It runs in the process that starts the command (the runner), for the run's duration.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxViolation } from '../protocol/sandbox';
import { normalHost } from '../policy/networkHosts';

export interface NetProxy {
  /** The Unix socket outside (bound in at bwrap.ts's PROXY_SOCKET_INSIDE). */
  socket: string;
  violations(): SandboxViolation[];
  close(): Promise<void>;
}

const MAX_VIOLATIONS = 20;

export async function startNetProxy(allowed: string[]): Promise<NetProxy> {
  const allow = new Set(allowed.map(normalHost));
  const dir = mkdtempSync(join(tmpdir(), 'avfs-net-'));
  const socket = join(dir, 'proxy.sock');
  const refused = new Map<string, number>();
  const sockets = new Set<Socket>();
  const why = (host: string) => `avfs: ${host} is not a host this run was let reach (it may reach: ${[...allow].join(', ')})\n`;
  const refuse = (host: string) => refused.set(host, (refused.get(host) ?? 0) + 1);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('avfs: the proxy takes absolute URLs\n');
      return;
    }
    const host = normalHost(url.hostname);
    if (!allow.has(host) || url.protocol !== 'http:') {
      refuse(host);
      res.writeHead(403, { 'content-type': 'text/plain' }).end(why(host));
      return;
    }
    const up = request(
      { host, port: Number(url.port) || 80, method: req.method, path: `${url.pathname}${url.search}`, headers: req.headers },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    up.on('error', (e) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`avfs: ${host}: ${e.message}\n`);
    });
    req.pipe(up);
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '');
    const host = normalHost(m?.[1] ?? '');
    if (!m || !allow.has(host)) {
      refuse(host || String(req.url));
      client.end(`HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\n${why(host || String(req.url))}`);
      return;
    }
    const up = connect({ host, port: Number(m[2]), autoSelectFamily: true }, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    sockets.add(up);
    up.on('close', () => sockets.delete(up));
    up.on('error', (e) => client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\navfs: ${host}: ${e.message}\n`));
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socket, () => resolve());
  });
  return {
    socket,
    violations: () =>
      [...refused].slice(0, MAX_VIOLATIONS).map(([host, n]) => ({
        kind: 'network_refused' as const,
        message: `the run tried to reach ${host} (${n} time${n === 1 ? '' : 's'}), not a host it was let reach (${[...allow].join(', ')}): refused`,
      })),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
