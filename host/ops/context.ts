/**
 * What every operation gets, and the shape of the operations table: one function per method of
 * host/protocol/methods.ts, taking its parsed params and returning its result. The CLI calls them
 * in-process (or through a running host); the host serves them over JSON-RPC from its workers.
 */
import type { PolicyEngine } from '../policy/engine';
import type { MethodName, MethodParamsParsed, MethodResult } from '../protocol/methods';
import type { AvfsHome } from '../store/home';
import type { Surface } from '../store/journal';
import type { Vault } from '../store/vault';

/**
 * How an operation opens a vault. `read`: a read-only SQLite connection (nothing is migrated or
 * written); `write`: a writable one. A one-shot process opens and closes the vault around `fn`; a
 * host worker keeps its connections open between calls (opening costs more than most operations).
 */
export interface VaultAccess {
  use<T>(name: string, mode: 'read' | 'write', surface: Surface, fn: (v: Vault) => T): T;
}

export interface OpsContext {
  home: AvfsHome;
  /** Who makes the changes, as the audit trail records them. */
  surface: Surface;
  vaults: VaultAccess;
  /** The policy engine: loaded once and kept warm in the host, loaded for one decision in the CLI. */
  engine: () => Promise<PolicyEngine>;
}

export type OpHandler<M extends MethodName> = (ctx: OpsContext, params: MethodParamsParsed<M>) => MethodResult<M> | Promise<MethodResult<M>>;

/** exec/run is not in the table: it needs an approver, cancellation and progress, which each transport wires itself. */
export type OpName = Exclude<MethodName, 'exec/run'>;
export type OpsTable = { [M in OpName]: OpHandler<M> };

