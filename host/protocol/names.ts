/**
 * What vaults and checkpoints may be called. The contract's schemas check these (VaultName in
 * ./vault.ts, CheckpointName in ./changes.ts); the store checks them without loading the schemas,
 * which a call that only reads a vault does not need.
 */
export const VAULT_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;
export const CHECKPOINT_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/;
