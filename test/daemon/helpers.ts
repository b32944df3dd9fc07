/** A real `avfs host` process on a real socket, and clients that talk to it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { connectHost, type HostConnection } from '../../host/daemon/client';
import { AvfsHome } from '../../host/store/home';
import { CLI } from '../helpers';
import { waitFor } from '../fuse/helpers';

export interface HostProcess {
  child: ChildProcess;
  pid: number;
  /** Everything the host wrote on stderr so far. */
  log: () => string;
  stop: () => Promise<number | null>;
}

export async function startHost(home: string, args: string[] = []): Promise<HostProcess> {
  const child = spawn(process.execPath, [CLI, 'host', ...args], { env: { ...process.env, AVFS_HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => {
    log += d.toString();
    if (process.env.AVFS_TEST_HOST_LOG) process.stderr.write(`[host] ${d.toString()}`);
  });
  child.stdout!.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const ready = await waitFor(() => log.includes(' serving '), 20_000);
  if (!ready) {
    child.kill('SIGKILL');
    throw new Error(`the host did not start:\n${log}`);
  }
  return {
    child,
    pid: child.pid!,
    log: () => log,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

export async function client(home: string, opts: { name?: string; approver?: boolean | 'own'; setup?: (c: MessageConnection) => void } = {}): Promise<HostConnection> {
  const c = await connectHost(new AvfsHome(home), {
    name: opts.name ?? 'test client',
    kind: 'other',
    approver: opts.approver ?? false,
    ...(opts.setup ? { setup: opts.setup } : {}),
  });
  if (!c) throw new Error(`no host answers for ${home}`);
  return c;
}

export const hostFileOf = (home: string) => join(home, 'host.json');
export const hostRunning = (home: string) => existsSync(hostFileOf(home));
