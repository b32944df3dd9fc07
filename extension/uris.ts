// The extension's URIs, as plain data (no `vscode` import, so they are unit-tested under node:test):
//   avfs://<vault>/<path>                                a vault file, read and written through the host
//   avfs-checkpoint://<vault>/<path>?{"checkpoint":"…"}  the same path as it was at a checkpoint (read-only)
// The checkpoint travels in the query as JSON, as VS Code's git extension carries its ref, so the
// path stays the file's own path and the editor shows the right name, icon and language.
import { z } from 'zod';
import { normalizePath as normalizeVaultPath } from '../host/protocol/paths';
import { VAULT_NAME_RE } from '../host/protocol/vault';

export const VAULT_SCHEME = 'avfs';
export const CHECKPOINT_SCHEME = 'avfs-checkpoint';

/** The fields of a `vscode.Uri` these codecs read and write (`vscode.Uri.from(parts)` accepts them). */
export interface UriParts {
  scheme: string;
  authority: string;
  path: string;
  query: string;
}

export interface VaultLocation {
  vault: string;
  /** Absolute, normalised vault path: `/` for the root, never a trailing slash otherwise. */
  path: string;
}

export interface CheckpointLocation extends VaultLocation {
  checkpoint: string;
}

/** A URI these codecs refuse (wrong scheme, no vault, a malformed query): not a file of any vault. */
export class BadUriError extends Error {
  constructor(
    readonly uri: string,
    reason: string,
  ) {
    super(`not an AVFS location: ${uri} (${reason})`);
    this.name = 'BadUriError';
  }
}

// Any name the host may have made: the host judges it (a name it never gave is NotFound).
const CheckpointQuery = z.strictObject({ checkpoint: z.string().min(1) });

export function vaultUri(loc: VaultLocation): UriParts {
  return { scheme: VAULT_SCHEME, authority: loc.vault, path: normalizePath(loc.path), query: '' };
}

export function checkpointUri(loc: CheckpointLocation): UriParts {
  return {
    scheme: CHECKPOINT_SCHEME,
    authority: loc.vault,
    path: normalizePath(loc.path),
    query: JSON.stringify({ checkpoint: loc.checkpoint }),
  };
}

export function parseVaultUri(uri: UriParts): VaultLocation {
  expectScheme(uri, VAULT_SCHEME);
  return { vault: vaultOf(uri), path: normalizePath(uri.path) };
}

export function parseCheckpointUri(uri: UriParts): CheckpointLocation {
  expectScheme(uri, CHECKPOINT_SCHEME);
  let query: unknown;
  try {
    query = JSON.parse(uri.query);
  } catch {
    throw new BadUriError(show(uri), 'its query is not the JSON {"checkpoint": NAME}');
  }
  const parsed = CheckpointQuery.safeParse(query);
  if (!parsed.success) throw new BadUriError(show(uri), 'its query does not name a checkpoint');
  return { vault: vaultOf(uri), path: normalizePath(uri.path), checkpoint: parsed.data.checkpoint };
}

/**
 * A vault path from a URI path, as the host reads it (host/protocol/paths.ts: `.` and empty
 * segments dropped, `..` resolved, no trailing slash), taken from the root when relative. A path
 * the host would refuse (`..` above the root, a NUL) names no file: BadUriError.
 */
export function normalizePath(path: string): string {
  try {
    return normalizeVaultPath(path.startsWith('/') ? path : `/${path}`);
  } catch (e) {
    throw new BadUriError(path, e instanceof Error ? e.message : String(e));
  }
}

export function joinPath(dir: string, name: string): string {
  return normalizePath(`${dir}/${name}`);
}

export function basename(path: string): string {
  const p = normalizePath(path);
  return p === '/' ? '/' : p.slice(p.lastIndexOf('/') + 1);
}

export function parentPath(path: string): string {
  const p = normalizePath(path);
  return p === '/' ? '/' : normalizePath(p.slice(0, p.lastIndexOf('/')));
}

function expectScheme(uri: UriParts, scheme: string): void {
  if (uri.scheme !== scheme) throw new BadUriError(show(uri), `the scheme is not ${scheme}`);
}

function vaultOf(uri: UriParts): string {
  if (!VAULT_NAME_RE.test(uri.authority)) {
    throw new BadUriError(show(uri), uri.authority ? `"${uri.authority}" is not a vault name` : 'no vault named');
  }
  return uri.authority;
}

function show(uri: UriParts): string {
  return `${uri.scheme}://${uri.authority}${uri.path}${uri.query ? `?${uri.query}` : ''}`;
}
