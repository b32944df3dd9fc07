/**
 * `avfs proxy exec` with a live mount of its vault: the run is handed to the process serving that
 * mount (host/proxy/mountExec.ts), which has the policy engine warm and the vault open. This file
 * is loaded at start and loads nothing heavy (no zod, no store, not the CLI's core): finding the
 * mount and passing the run costs a few milliseconds, where loading the core and the policy
 * engine for one decision costs several times a bare `avfs` start.
 *
 * Undefined (the core's handler runs the call: through a running host, else in this process) when
 * there is nothing to hand the run to: no live mount fits, a host is running (it comes first: its
 * approvers and clients see the run), AVFS_NO_HOST=1, or a flag is wrong (the core says how).
 */
import { readdirSync, readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { ExecRequestInput } from '../protocol/exec';
import type { MountExecFollowUp, MountExecReply, MountExecRun } from '../protocol/mountExec';
import { servedNow } from '../fuse/liveness';
import { fitsCall, type MountWanted } from '../proxy/mountFit';
import { defaultHome } from '../store/homeDir';
import { VERSION } from '../version';
import type { CliIo, Outcome } from './core';
import { type ExecOptions, execRequestOf, promptOf, readAll } from './execRequest';

interface LiveRecord {
  vault: string;
  mountpoint: string;
  readonly: boolean;
  allow_other?: boolean;
  state: string;
  pid: number;
  exec_socket?: string;
  version?: string;
}

/** The exec socket of a live mount that fits the call, served by this avfs version. */
function endpointFor(home: string, want: MountWanted): string | undefined {
  const dir = join(home, 'mounts');
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  for (const n of names) {
    if (!n.endsWith('.json')) continue;
    let rec: LiveRecord;
    try {
      rec = JSON.parse(readFileSync(join(dir, n), 'utf8')) as LiveRecord;
    } catch {
      continue;
    }
    if (typeof rec.exec_socket !== 'string' || rec.version !== VERSION || typeof rec.pid !== 'number') continue;
    if (fitsCall(rec, want) && servedNow(rec)) return rec.exec_socket;
  }
  return undefined;
}

function currentVault(home: string): string | undefined {
  try {
    return readFileSync(join(home, 'current'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

async function openSocket(path: string): Promise<Socket | undefined> {
  // Loaded here: every avfs start loads this file, and most never connect.
  const { connect } = await import('node:net');
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => resolve(s));
    s.once('error', () => resolve(undefined));
  });
}

/** A flag the core would reject: the core runs the call and says so. */
class Unfit extends Error {}

/**
 * Runs `proxy exec` in a live mount's server; undefined when the core must run it. `fail` prints
 * an error the way the core does and returns its exit code (the server went away mid-run).
 */
export async function execInLiveMount(args: unknown[], io: CliIo, fail: (message: string, json: boolean) => number): Promise<Outcome | undefined> {
  if (process.env.AVFS_NO_HOST === '1') return undefined;
  const home = defaultHome();
  try {
    readFileSync(join(home, 'host.json'));
    return undefined;
  } catch {
    /* no host: look for a mount */
  }
  const [argv, opts, cmd] = args as [string[], ExecOptions, Command];
  const globals = cmd.optsWithGlobals() as { json?: boolean; vault?: string };
  let request: ExecRequestInput;
  try {
    request = execRequestOf(argv, opts, globals.vault, (m) => new Unfit(m));
  } catch (e) {
    if (e instanceof Unfit) return undefined;
    throw e;
  }
  // A materialized run uses no mount: the core runs it.
  if (opts.materialize) return undefined;
  const vault = globals.vault ?? currentVault(home);
  if (vault === undefined) return undefined;
  const path = endpointFor(home, { vault, readonly: !!opts.readonly, allowOther: !!opts.allowOther, ...(opts.mountpoint !== undefined ? { mountpoint: opts.mountpoint } : {}) });
  if (path === undefined) return undefined;
  const socket = await openSocket(path);
  if (!socket) return undefined;

  // From here the server runs the call: whatever happens is reported as the core would.
  const json = !!globals.json;
  if (opts.stdin) request.stdin = await readAll(process.stdin);
  const prompt = await promptOf(opts);
  const send = (m: MountExecRun | MountExecFollowUp) => socket.write(JSON.stringify(m) + '\n');
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  send({ type: 'run', version: VERSION, request, env, stream: !json, approver: prompt });

  /** The server asks for an approval: the person at this terminal answers (the server only asks when one can). */
  const answer = async (req: Extract<MountExecReply, { type: 'approval' }>['request']): Promise<void> => {
    const { terminalApprover } = await import('../proxy/approvals');
    const ac = new AbortController();
    socket.once('close', () => ac.abort());
    const outcome = await terminalApprover({ input: process.stdin, output: process.stderr }).ask(req, ac.signal);
    if (!socket.destroyed) send({ type: 'answer', outcome });
  };
  const onSignal = () => send({ type: 'cancel' });
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, onSignal);
  try {
    const done = await new Promise<Extract<MountExecReply, { type: 'done' }> | undefined>((resolve) => {
      let buf = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => {
        buf += d;
        for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
          const m = JSON.parse(buf.slice(0, nl)) as MountExecReply;
          buf = buf.slice(nl + 1);
          if (m.type === 'output') (m.stream === 'stdout' ? io.stdout : io.stderr).write(Buffer.from(m.data, 'base64'));
          else if (m.type === 'approval') void answer(m.request);
          else resolve(m);
        }
      });
      socket.on('close', () => resolve(undefined));
      socket.on('error', () => resolve(undefined));
    });
    if (!done) return { code: fail(`the server of the mount (${path}) ended the connection before the run ended: it died or was stopped`, json), exitWhenDone: true };
    if (json) io.stdout.write(JSON.stringify(done.envelope, null, 2) + '\n');
    else io.stderr.write(done.human);
    return { code: done.exit_code, exitWhenDone: true };
  } finally {
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(s, onSignal);
    socket.destroy();
  }

}
