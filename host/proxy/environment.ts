/**
 * The environment a proxied command gets (docs/exec.md). By default it inherits the caller's
 * environment, as a command run directly would; `clean` keeps only what tools need to work.
 * Either way avfs sets AVFS_VAULT, AVFS_MOUNTPOINT, AVFS_CWD, AVFS_EXEC_ID and PWD last, so the
 * command can rely on them, and the caller's `--env K=V` pairs come before those.
 */
export const CLEAN_ENV_KEEP = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'TZ', 'TMPDIR', 'AVFS_HOME'];

export interface ChildEnvOptions {
  clean: boolean;
  extra: Record<string, string>;
  vault: string;
  mountpoint: string;
  vaultCwd: string;
  hostCwd: string;
  execId: string;
  base?: NodeJS.ProcessEnv;
}

export function childEnv(o: ChildEnvOptions): NodeJS.ProcessEnv {
  const base = o.base ?? process.env;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (v === undefined) continue;
    if (!o.clean || CLEAN_ENV_KEEP.includes(k) || k.startsWith('LC_')) env[k] = v;
  }
  Object.assign(env, o.extra);
  env.AVFS_VAULT = o.vault;
  env.AVFS_MOUNTPOINT = o.mountpoint;
  env.AVFS_CWD = o.vaultCwd;
  env.AVFS_EXEC_ID = o.execId;
  env.PWD = o.hostCwd;
  return env;
}
