/** The operations table (host/ops/*): filled in as each area moves down from the CLI. */
import type { OpsTable } from './context';

export const OPS: Partial<OpsTable> = {};
