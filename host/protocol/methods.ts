/**
 * Every operation a caller can ask of avfs, once: its name (`area/verb`), its params and its
 * result. The operations layer (host/ops) implements them; the CLI renders their results (its
 * `--json` output is the result, unchanged); the vault host serves them over JSON-RPC; the VS
 * Code extension calls them. Nothing else defines an operation's shape.
 *
 * Conventions: `vault` names a vault (absent: the current one); vault paths are absolute
 * (`/src/app.py`); file contents travel as base64; every result is an object.
 */
import type { z } from 'zod';
import { CHECKPOINT_METHODS } from './methods/checkpoint';
import { EXEC_METHODS } from './methods/exec';
import { FILE_METHODS } from './methods/files';
import { MOUNT_METHODS } from './methods/mount';
import { POLICY_METHODS } from './methods/policy';
import { PROJECT_METHODS } from './methods/project';
import { STORE_METHODS } from './methods/store';
import { VAULT_METHODS } from './methods/vault';

export { MountInfo } from './methods/mount';

/**
 * Each area defines its methods in methods/<area>.ts (methods/load.ts loads one area alone, for a
 * process that makes one call); this is the whole table, in the order the docs list it.
 */
export const METHODS = {
  ...VAULT_METHODS,
  ...FILE_METHODS,
  ...CHECKPOINT_METHODS,
  ...STORE_METHODS,
  ...MOUNT_METHODS,
  ...POLICY_METHODS,
  ...EXEC_METHODS,
  ...PROJECT_METHODS,
} as const;

export type MethodName = keyof typeof METHODS;
export type MethodParams<M extends MethodName> = z.input<(typeof METHODS)[M]['params']>;
export type MethodParamsParsed<M extends MethodName> = z.output<(typeof METHODS)[M]['params']>;
export type MethodResult<M extends MethodName> = z.output<(typeof METHODS)[M]['result']>;
export const METHOD_NAMES = Object.keys(METHODS) as MethodName[];
