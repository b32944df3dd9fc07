/** Running a command through the policy (the contract: ../methods.ts). */
import { ExecRequest, ExecutionEnvelope } from '../exec';
import { define } from './define';

export const EXEC_METHODS = {
  'exec/run': define(ExecRequest, ExecutionEnvelope, 'run a command through the policy in a vault mount (cancellable); progress arrives as exec/* notifications'),
} as const;
