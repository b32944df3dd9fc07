/**
 * Password stores, keyrings and key agents: they hand out the host user's secrets (or change
 * them), which is reading outside the workspace whatever the command line's paths say. Unknown,
 * they were programs like any other (`pass show github` was allow_with_checkpoint). Only what
 * shows public material (gpg --verify, --list-keys) stays a read.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { literal } from '../words';

/**
 * Environment variables that hold credentials, by name: tokens, secrets, passwords, API keys,
 * private keys, session cookies, connection strings with passwords.
 */
export const SECRET_VARIABLE = /(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL|AUTH|COOKIE|SESSION_?KEY|_PAT$|^PAT$|DATABASE_URL|_DSN$|^DSN$|WEBHOOK)/i;

/** Printing the whole environment hands out whatever tokens it holds. */
export const PRINTS_ENVIRONMENT = 'prints the whole environment, which holds the user\'s tokens and keys';

/** printenv [NAME…]: all of it, or the named variables. */
const printenv: Handler = (cmd) => {
  const names = cmd.vals.filter((value) => value === null || !value.startsWith('-'));
  if (names.length === 0) cmd.add(['host_escape'], `printenv ${PRINTS_ENVIRONMENT}`);
  else if (names.some((name) => name === null)) cmd.add(['unknown'], 'printenv prints a variable whose name is computed');
  else {
    const secret = names.find((name) => SECRET_VARIABLE.test(name!));
    cmd.add(secret ? ['host_escape'] : ['read_only'], secret ? `printenv ${secret} prints a credential from the environment` : 'printenv prints variables');
  }
};

function handsOutSecrets(what: string): Handler {
  return (cmd) => {
    cmd.add(['host_escape'], `${cmd.prog} ${what}`);
    cmd.args.forEach((word) => cmd.maybePath(word, 'read'));
  };
}

/** gpg operations that only read public keys and signatures. */
const GPG_PUBLIC = new Set([
  'verify', 'list-keys', 'k', 'list-public-keys', 'list-sigs', 'check-sigs', 'fingerprint', 'list-packets', 'print-md', 'dearmor', 'enarmor',
  'version', 'help', 'h', 'dump-options', 'list-config', 'show-keys', 'export', 'armor', 'a', 'list-options',
]);
const GPG_NETWORK = new Set(['recv-keys', 'send-keys', 'search-keys', 'refresh-keys', 'fetch-keys', 'locate-keys', 'auto-key-locate']);

/**
 * gpg decrypts and signs with the host's private keys, exports them, and imports or deletes keys
 * in the host keyring: host_escape. Verifying and listing stay reads; `-o FILE` is a write.
 */
const gpg: Handler = (cmd: Cmd) => {
  const opts = parseOpts(cmd.args, 'orRuf', ['output', 'recipient', 'local-user', 'homedir', 'default-key', 'keyring', 'secret-keyring']);
  for (const out of [...(opts.values.get('o') ?? []), ...(opts.values.get('output') ?? [])]) cmd.path(out, 'write');
  for (const dir of [...(opts.values.get('homedir') ?? []), ...(opts.values.get('keyring') ?? []), ...(opts.values.get('secret-keyring') ?? [])]) {
    cmd.path(dir, 'read');
  }
  const ops = [...opts.flags];
  if (ops.some((op) => GPG_NETWORK.has(op))) cmd.add(['networked'], `${cmd.prog} talks to a key server`);
  if (ops.length > 0 && ops.every((op) => GPG_PUBLIC.has(op) || /^(no-|with-|batch|quiet|q|v|verbose|yes|status-fd|keyid-format)/.test(op))) {
    cmd.add(['read_only'], `${cmd.prog} only reads public keys and signatures`);
  } else cmd.add(['host_escape'], `${cmd.prog} uses or changes the host's private keyring`);
  opts.operands.forEach((word) => cmd.maybePath(word, 'read'));
};

/** `security` (macOS): find-*-password and dump-keychain print secrets; the rest change keychains. */
const security: Handler = (cmd) => {
  const verb = cmd.vals[0];
  if (verb !== null && verb !== undefined && /^(list-keychains|default-keychain|login-keychain|show-keychain-info|find-certificate|verify-cert|help)$/.test(verb)) {
    cmd.add(['read_only'], `security ${verb} only reads`);
    return;
  }
  cmd.add(['host_escape'], `security ${literal(cmd.args[0] ?? { raw: '', segs: [] }) ?? '…'} reads or changes the host's keychains`);
};

export const SECRET_TOOLS: Record<string, Handler> = {
  printenv,
  pass: handsOutSecrets('reads or changes the host password store'),
  gopass: handsOutSecrets('reads or changes the host password store'),
  'secret-tool': handsOutSecrets('reads or changes the host keyring'),
  'kwallet-query': handsOutSecrets('reads the host wallet'),
  keyctl: handsOutSecrets('reads or changes the kernel keyrings'),
  lpass: handsOutSecrets('reads the LastPass vault'),
  bw: handsOutSecrets('reads the Bitwarden vault'),
  vault: (cmd) => {
    handsOutSecrets('reads or writes secrets on a Vault server')(cmd);
    cmd.add(['networked'], 'vault talks to a server');
  },
  sops: handsOutSecrets('decrypts with the host keys'),
  security,
  gpg,
  gpg2: gpg,
};
