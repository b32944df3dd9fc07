/**
 * The vault an agent works in, made from the project it was asked to work on (`avfs mcp --from DIR`,
 * `avfs hook install claude-code --route V --from DIR`): created from the folder on first use, the
 * same vault found again after (its base is that folder), refused when a vault of that name holds
 * something else. Written for the transports, over whichever `call` they have (the host's socket or
 * this process), out of the operations that exist.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { MethodParams, MethodResult } from '../protocol/methods';

type Call = <M extends 'project/base' | 'project/create'>(method: M, params: MethodParams<M>) => Promise<MethodResult<M>>;

export interface ProjectVault {
  vault: string;
  source: string;
  created: boolean;
}

/** A vault name from a folder's name (what New Vault from Workspace Folder offers too). */
export function vaultNameFor(dir: string): string {
  return path.basename(dir).replace(/[^A-Za-z0-9_-]/g, '-').replace(/^-+/, '') || 'project';
}

export async function projectVault(call: Call, opts: { name?: string; dir: string; cwd: string; exclude?: string[] }): Promise<ProjectVault> {
  const abs = path.resolve(opts.cwd, opts.dir);
  let real: string;
  try {
    real = fs.realpathSync(abs);
  } catch (e) {
    throw new AvfsError('NotFound', `cannot open the project folder ${abs}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { path: abs });
  }
  const name = opts.name ?? vaultNameFor(real);
  let base: MethodResult<'project/base'>['base'] | undefined;
  try {
    base = (await call('project/base', { vault: name })).base;
  } catch (e) {
    if (!(e instanceof AvfsError && (e.kind === 'VaultNotFound' || e.kind === 'NotFound'))) throw e;
  }
  if (base === undefined) {
    const r = await call('project/create', { name, host_path: real, host_cwd: opts.cwd, exclude: opts.exclude ?? [], use: false });
    return { vault: r.created, source: r.base.source, created: true };
  }
  if (base?.source !== real) {
    throw new AvfsError(
      'AlreadyExists',
      base
        ? `vault ${name} was made from ${base.source}, not ${real}: name another vault for this project`
        : `vault ${name} exists and was not made from a project: name another vault for ${real}`,
      { vault: name, path: real },
    );
  }
  return { vault: name, source: base.source, created: false };
}
