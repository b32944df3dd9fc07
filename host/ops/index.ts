/** The operations table: every method of host/protocol/methods.ts but exec/run, implemented once. */
import { checkpointOps } from './checkpoint';
import type { OpsTable } from './context';
import { fileOps } from './files';
import { mountOps } from './mount';
import { policyOps } from './policy';
import { projectOps } from './project';
import { storeOps } from './store';
import { vaultOps } from './vault';

export const OPS: OpsTable = { ...vaultOps, ...fileOps, ...checkpointOps, ...storeOps, ...mountOps, ...policyOps, ...projectOps };
