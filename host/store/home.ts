/**
 * The avfs home: `$AVFS_HOME` or `~/.avfs`. Vaults live at `<home>/vaults/<name>.avfs`;
 * `<home>/current` names the vault in use.
 */
import { closeSync, existsSync, lstatSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AvfsError } from '../protocol/errors';
import type { Quotas } from '../protocol/vault';
import { type BackendKind, defaultBackend } from './backend';
import { VAULT_NAME_RE } from '../protocol/names';
import { FORKS_RECORDED_KEY } from './forkLinks';
import { AncestorChunks } from './forks';
import { defaultHome } from './homeDir';
import type { ServerOptions } from './engine';
import type { Vault, VaultOpenOptions } from './vault';
import { makePrivateDir, openPrivate, writePrivateFile } from './privateFs';

export const VAULT_EXT = '.avfs';

/**
 * The store, loaded when a vault is opened or made: a call that reads only the home (which vault
 * is current; `policy check` with no vault) does not load it (~3 ms of a cold CLI call).
 */
function store(): typeof import('./vault') {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./vault') as typeof import('./vault');
}

export { defaultHome };

export function checkVaultName(name: string): string {
  if (typeof name !== 'string' || !VAULT_NAME_RE.test(name)) {
    throw new AvfsError(
      'InvalidInput',
      `invalid vault name ${JSON.stringify(name)}: use 1-64 characters of A-Z a-z 0-9 _ -, not starting with -`,
      { vault: name },
    );
  }
  return name;
}

/** A host error that means "this directory cannot be written", as the ReadOnly kind. */
function readOnlyDir(e: unknown, dir: string): AvfsError | undefined {
  const code = (e as NodeJS.ErrnoException).code;
  if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS') return undefined;
  return new AvfsError('ReadOnly', `read-only: the vaults directory ${dir} cannot be written (${code})`, { path: dir, code });
}

export class AvfsHome {
  readonly vaultsDir: string;

  constructor(readonly dir: string = defaultHome()) {
    this.vaultsDir = join(dir, 'vaults');
  }

  ensure(): void {
    makePrivateDir(this.vaultsDir);
  }

  vaultFile(name: string): string {
    return join(this.vaultsDir, checkVaultName(name) + VAULT_EXT);
  }

  /** Whether the vault's name is taken: a dangling symlink in its place too (listed unreadable, deletable). */
  exists(name: string): boolean {
    return lstatSync(this.vaultFile(name), { throwIfNoEntry: false }) !== undefined;
  }

  names(): string[] {
    if (!existsSync(this.vaultsDir)) return [];
    return readdirSync(this.vaultsDir)
      .filter((f) => f.endsWith(VAULT_EXT) && VAULT_NAME_RE.test(f.slice(0, -VAULT_EXT.length)))
      .map((f) => f.slice(0, -VAULT_EXT.length))
      .sort();
  }

  /** Claims the vault's file (O_EXCL, so two creators cannot both succeed); returns its path. */
  private claim(name: string): string {
    const file = this.vaultFile(name);
    this.ensure();
    let fd: number;
    try {
      fd = openPrivate(file, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new AvfsError('VaultExists', `vault already exists: ${name}`, { vault: name });
      }
      throw readOnlyDir(e, this.vaultsDir) ?? e;
    }
    closeSync(fd);
    return file;
  }

  /** Creates a vault. */
  create(name: string, quotas: Partial<Quotas> = {}, backend: BackendKind = defaultBackend(), server: ServerOptions = {}): Vault {
    const file = this.claim(name);
    try {
      const v = store().Vault.create(name, file, 'cli', backend, server);
      // A new vault has made no forks yet: its fork record is complete from here on.
      v.setMeta(FORKS_RECORDED_KEY, new Date().toISOString());
      for (const [k, val] of Object.entries(quotas)) {
        if (val !== null && val !== undefined) v.inodes.quotas.set(k as keyof Quotas, val);
      }
      return v;
    } catch (e) {
      this.removeFiles(name);
      throw e;
    }
  }

  /** Registers in this home a vault that lives on a server (`vault attach`): another home made it. */
  attach(name: string, backend: BackendKind, url: string): Vault {
    if (backend !== 'postgres') throw new AvfsError('InvalidInput', `only a vault on a server can be attached (--backend postgres), not ${backend}`, { backend });
    const file = this.claim(name);
    try {
      return store().Vault.attach(name, file, backend, { url });
    } catch (e) {
      this.removeFiles(name);
      throw e;
    }
  }

  /** Opens a vault; a fork is wired to read the chunks it does not hold from its ancestors. */
  open(name: string, opts: VaultOpenOptions = {}): Vault {
    const v = store().Vault.open(name, this.vaultFile(name), opts);
    const parent = v.meta('parent');
    if (parent) v.attachAncestors(new AncestorChunks(this, parent));
    return v;
  }

  /** Removes the vault's files (SQLite: database, WAL, shared memory; LMDB: data and lock file). */
  removeFiles(name: string): void {
    const file = this.vaultFile(name);
    if (lstatSync(file, { throwIfNoEntry: false })?.isDirectory()) {
      // A directory in the vault's place holds no vault; an empty one goes, anything in it is not avfs's to remove.
      try {
        rmdirSync(file);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOTEMPTY') throw readOnlyDir(e, this.vaultsDir) ?? e;
        throw new AvfsError('NotSupported', `${file} is a directory that is not empty, not a vault file: avfs does not remove it`, { vault: name, file });
      }
    }
    for (const suffix of ['', '-wal', '-shm', '-lock']) {
      try {
        rmSync(file + suffix, { force: true });
      } catch (e) {
        throw readOnlyDir(e, this.vaultsDir) ?? e;
      }
    }
  }

  sizeOnDisk(name: string): number {
    const file = this.vaultFile(name);
    let total = 0;
    for (const suffix of ['', '-wal']) {
      try {
        total += statSync(file + suffix).size;
      } catch {
        /* absent sidecar */
      }
    }
    return total;
  }

  get currentFile(): string {
    return join(this.dir, 'current');
  }

  current(): string | null {
    try {
      const name = readFileSync(this.currentFile, 'utf8').trim();
      return name && VAULT_NAME_RE.test(name) && this.exists(name) ? name : null;
    } catch {
      return null;
    }
  }

  setCurrent(name: string | null): void {
    makePrivateDir(this.dir);
    if (name === null) rmSync(this.currentFile, { force: true });
    else writePrivateFile(this.currentFile, name + '\n');
  }

  /** The vault a command acts on: `--vault`, else the current one. */
  resolve(explicit: string | undefined): string {
    if (explicit !== undefined) {
      checkVaultName(explicit);
      if (!this.exists(explicit)) throw new AvfsError('VaultNotFound', `vault not found: ${explicit}`, { vault: explicit });
      return explicit;
    }
    const cur = this.current();
    if (!cur) {
      throw new AvfsError(
        'NoActiveVault',
        "no active vault: run 'avfs vault create <name>' or 'avfs vault use <name>', or pass --vault <name>",
      );
    }
    return cur;
  }
}
