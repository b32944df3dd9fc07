/**
 * What every operation gets, and the shape of the operations table: one function per method of
 * host/protocol/methods.ts, taking its parsed params and returning its result. The CLI calls them
 * in-process (or through a running host); the host serves them over JSON-RPC.
 */
import type { MethodName, MethodParamsParsed, MethodResult } from '../protocol/methods';
import type { AvfsHome } from '../store/home';
import type { Surface } from '../store/journal';

export interface OpsContext {
  home: AvfsHome;
  /** Who makes the changes, as the audit trail records them. */
  surface: Surface;
}

export type OpHandler<M extends MethodName> = (ctx: OpsContext, params: MethodParamsParsed<M>) => MethodResult<M> | Promise<MethodResult<M>>;

/** exec/run is not in the table: it needs an approver, cancellation and progress, which each transport wires itself. */
export type OpsTable = { [M in Exclude<MethodName, 'exec/run'>]: OpHandler<M> };
