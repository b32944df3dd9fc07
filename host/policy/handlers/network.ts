/** Network clients: downloads (and what they save), remote shells and copies, sockets, cloud CLIs. */
import { posix } from 'node:path';
import type { Handler } from '../classify';
import type { Cmd } from '../command';
import { parseOpts } from '../command';
import { looksRemote } from '../paths';
import { dropPrefix, literal, literalPrefix, litWord, type Word } from '../words';

function downloadedTo(cmd: Cmd, word: Word): void {
  const verdict = cmd.path(word, 'write', 'saves a download to');
  if (verdict.cls === 'inside') cmd.judge.downloaded.add(verdict.shown);
}

function urlBasename(url: string): string | null {
  const match = /^[a-z]+:\/\/[^/]+\/(?:.*\/)?([^/?#]+)/i.exec(url);
  return match ? match[1]! : null;
}

/** `-d @file`, `-F x=@file`, `--upload-file file`: local files sent to the network. */
function uploads(cmd: Cmd, values: Map<string, Word[]>, keys: string[]): void {
  for (const key of keys) {
    for (const word of values.get(key) ?? []) {
      if (/^(upload-file|T|post-file|body-file)$/.test(key)) {
        cmd.path(word, 'read', 'uploads');
        continue;
      }
      const value = literal(word);
      if (value === null) {
        // `-d @$HOME/.netrc`: the file after `@` is read, whatever it is.
        const at = literalPrefix(word).indexOf('@');
        if (at >= 0) cmd.path(dropPrefix(word, at + 1), 'read', 'uploads');
        else cmd.add(['unknown'], `sends data whose value is unknown (${word.raw})`);
        continue;
      }
      const match = /@([^;,]+)/.exec(value);
      if (match && match[1] !== '-') cmd.path(litWord(match[1]!, false), 'read', 'uploads');
    }
  }
}

const CURL_VALUED = 'oTdFKbcDEHXAeuxwmrYyzCQ';
const CURL_LONG = [
  'output', 'output-dir', 'upload-file', 'data', 'data-binary', 'data-raw', 'data-ascii', 'data-urlencode', 'form', 'form-string', 'json', 'config',
  'cookie', 'cookie-jar', 'dump-header', 'trace', 'trace-ascii', 'cert', 'key', 'cacert', 'capath', 'header', 'request', 'user-agent', 'referer',
  'user', 'proxy', 'write-out', 'max-time', 'retry', 'connect-timeout', 'range', 'time-cond', 'continue-at', 'resolve', 'interface', 'url',
  'netrc-file', 'unix-socket', 'abstract-unix-socket', 'stderr', 'libcurl', 'etag-save', 'etag-compare', 'hsts', 'alt-svc',
];

const curl: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, CURL_VALUED, CURL_LONG);
  cmd.add(['networked'], 'curl talks to the network');
  const urls = [...opts.operands, ...(opts.values.get('url') ?? [])];
  for (const word of urls) {
    const value = literal(word);
    if (value && /^file:\/\//i.test(value)) cmd.path(litWord(value.replace(/^file:\/\/[^/]*/i, ''), false), 'read');
  }
  const outs = [...(opts.values.get('o') ?? []), ...(opts.values.get('output') ?? [])];
  outs.filter((word) => literal(word) !== '-').forEach((word) => downloadedTo(cmd, word));
  if (opts.flags.has('O') || opts.flags.has('remote-name') || opts.flags.has('remote-name-all')) {
    for (const arg of urls) {
      const name = urlBasename(literal(arg) ?? '');
      if (name) downloadedTo(cmd, litWord(name));
      else cmd.add(['mutating'], 'curl -O saves a download');
    }
  }
  for (const key of ['output-dir', 'c', 'cookie-jar', 'D', 'dump-header', 'trace', 'trace-ascii', 'stderr', 'libcurl', 'etag-save', 'hsts', 'alt-svc']) {
    for (const file of opts.values.get(key) ?? []) if (literal(file) !== '-') cmd.path(file, 'write');
  }
  for (const option of ['K', 'config', 'b', 'cookie', 'E', 'cert', 'key', 'cacert', 'capath', 'netrc-file', 'etag-compare', 'unix-socket']) {
    for (const target of opts.values.get(option) ?? []) {
      const text = literal(target);
      if (option === 'b' || option === 'cookie') {
        if (text !== null && !text.includes('=')) cmd.path(target, 'read');
      } else cmd.path(target, 'read');
    }
  }
  uploads(cmd, opts.values, ['d', 'data', 'data-binary', 'data-ascii', 'data-urlencode', 'F', 'form', 'json', 'T', 'upload-file']);
  // `-o -` (or no -o at all) prints the download.
  const toStdout = outs.length === 0 || outs.some((word) => literal(word) === '-');
  if (toStdout && !opts.flags.has('O') && !opts.flags.has('remote-name')) cmd.outputTaint = ['remote'];
};

const wget: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'OoaPiBeUtTwQlADRIXNH', [
    'output-document', 'output-file', 'append-output', 'directory-prefix', 'input-file', 'base', 'execute', 'user-agent', 'tries', 'timeout', 'wait',
    'quota', 'level', 'accept', 'reject', 'domains', 'include-directories', 'exclude-directories', 'post-data', 'post-file', 'body-data', 'body-file',
    'header', 'user', 'password', 'load-cookies', 'save-cookies', 'certificate', 'private-key', 'ca-certificate', 'method', 'config', 'use-askpass',
  ]);
  cmd.add(['networked'], 'wget talks to the network');
  const doc = [...(opts.values.get('O') ?? []), ...(opts.values.get('output-document') ?? [])];
  if (doc.some((word) => literal(word) === '-')) cmd.outputTaint = ['remote'];
  doc.filter((word) => literal(word) !== '-').forEach((word) => downloadedTo(cmd, word));
  const prefix = [...(opts.values.get('P') ?? []), ...(opts.values.get('directory-prefix') ?? [])];
  prefix.forEach((word) => cmd.path(word, 'write', 'saves downloads into'));
  if (doc.length === 0) {
    for (const arg of opts.operands) {
      const name = urlBasename(literal(arg) ?? '');
      const base = prefix[0] ? literal(prefix[0]) : null;
      if (name) downloadedTo(cmd, litWord(base ? posix.join(base, name) : name));
    }
    if (opts.operands.length > 0) cmd.add(['mutating'], 'wget saves downloads in the current directory');
  }
  for (const key of ['o', 'output-file', 'a', 'append-output', 'save-cookies']) (opts.values.get(key) ?? []).forEach((word) => cmd.path(word, 'write'));
  for (const option of [
    'i', 'input-file', 'load-cookies', 'certificate', 'private-key', 'ca-certificate', 'config',
  ]) (opts.values.get(option) ?? []).forEach((word) => cmd.path(word, 'read'));
  if (opts.values.has('e') || opts.values.has('execute')) cmd.add(['unknown'], 'wget -e runs wgetrc commands');
  for (const askpass of opts.values.get('use-askpass') ?? []) cmd.runs(askpass, 'wget --use-askpass');
  uploads(cmd, opts.values, ['post-file', 'body-file']);
};

/**
 * ssh -o options that run programs here (ProxyCommand, LocalCommand, KnownHostsCommand), load
 * libraries (PKCS11Provider, SecurityKeyProvider) or name files; scp and sftp take them too.
 */
function sshOptions(cmd: Cmd, options: Word[]): void {
  for (const option of options) {
    const text = literal(option);
    if (text === null) {
      cmd.add(['unknown'], `${cmd.prog} option ${option.raw} is unknown`);
      continue;
    }
    const command = /^(ProxyCommand|LocalCommand|KnownHostsCommand)\s*[= ]\s*(.*)$/is.exec(text);
    if (command && command[2]!.trim().toLowerCase() !== 'none') cmd.runs(litWord(command[2]!), `${cmd.prog} -o ${command[1]}`);
    if (/^PermitLocalCommand\s*[= ]\s*yes/i.test(text)) cmd.add(['code_execution'], `${cmd.prog} runs local commands`);
    const library = /^(PKCS11Provider|SecurityKeyProvider)\s*[= ]\s*(.*)$/i.exec(text);
    if (library) {
      cmd.add(['code_execution', 'unknown'], `${cmd.prog} -o ${library[1]} loads a library into ssh`);
      cmd.path(litWord(library[2]!, false), 'read');
    }
    const file = /^(IdentityFile|UserKnownHostsFile|GlobalKnownHostsFile|CertificateFile|IdentityAgent|ControlPath|RevokedHostKeys)\s*[= ]\s*(.*)$/i.exec(text);
    if (file) cmd.path(litWord(file[2]!, false), /^ControlPath$/i.test(file[1]!) ? 'write' : 'read');
    if (/^(Include)\s*[= ]/i.test(text)) cmd.add(['unknown'], `${cmd.prog} -o Include reads more configuration`);
  }
}

/** ssh: a remote shell; local commands hidden in -o options run here and are judged. */
const ssh: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'bcDEeFIiJLlmOoPpQRSWw', [], true);
  cmd.add(['networked'], `${cmd.prog} connects to another machine`);
  for (const file of [...(opts.values.get('i') ?? []), ...(opts.values.get('F') ?? [])]) cmd.path(file, 'read');
  for (const file of [...(opts.values.get('E') ?? []), ...(opts.values.get('S') ?? [])]) cmd.path(file, 'write');
  for (const library of opts.values.get('I') ?? []) {
    cmd.add(['code_execution', 'unknown'], 'ssh -I loads a PKCS#11 library into ssh');
    cmd.path(library, 'read');
  }
  sshOptions(cmd, opts.values.get('o') ?? []);
  if (cmd.prog === 'ssh' && opts.operands.length <= 1 && !opts.flags.has('N') && !opts.flags.has('f')) cmd.add(['interactive'],
      'ssh without a command opens a remote login shell');
  if (cmd.prog === 'ssh') cmd.outputTaint = ['remote'];
};

const RSYNC_VALUED_LONG = [
  'rsh', 'rsync-path', 'exclude', 'include', 'exclude-from', 'include-from', 'files-from', 'filter', 'temp-dir', 'partial-dir', 'backup-dir', 'compare-dest',
  'copy-dest', 'link-dest', 'log-file', 'log-file-format', 'password-file', 'chmod', 'chown', 'usermap', 'groupmap', 'timeout', 'bwlimit', 'port', 'sockopts',
  'out-format', 'suffix', 'max-size', 'min-size', 'max-delete', 'modify-window', 'iconv', 'checksum-choice', 'compress-choice', 'info', 'debug',
  'write-batch', 'only-write-batch', 'read-batch', 'early-input', 'config', 'dparam', 'contimeout', 'address', 'outbuf', 'protocol', 'stop-after', 'stop-at',
];

/**
 * scp / rsync / sftp: `host:path` operands are remote; the local ones are judged as paths.
 * `rsync -e`/`--rsh` and `scp -S`/`sftp -S` name the program that carries the copy (run here);
 * `sftp -D` runs a local sftp server; `--rsync-path` runs on the other side.
 */
const remoteCopy: Handler = (cmd) => {
  const valued = cmd.prog === 'rsync' ? 'eBfTM' : cmd.prog === 'sftp' ? 'bBcDFiJloPRSs' : 'cFiJloPSDX';
  const opts = parseOpts(cmd.args, valued, RSYNC_VALUED_LONG);
  const values = (...keys: string[]) => keys.flatMap((key) => opts.values.get(key) ?? []);
  const remote = (word: Word) => {
    const text = literal(word);
    return text !== null && (looksRemote(text) || /^[^/]*:/.test(text) || text.startsWith('rsync://'));
  };
  const anyRemote = opts.operands.some(remote);
  if (anyRemote || cmd.prog === 'sftp') cmd.add(['networked'], `${cmd.prog} copies to or from another machine`);
  else cmd.add(['mutating'], `${cmd.prog} copies files`);
  if (opts.flags.has('delete') || [...opts.flags].some((flag) => flag.startsWith('delete') || flag === 'remove-source-files')) cmd.add(
      ['destructive'], `${cmd.prog} deletes files`);
  const transports = cmd.prog === 'rsync' ? values('e', 'rsh') : values('S');
  for (const transport of transports) cmd.runs(transport, `${cmd.prog} ${cmd.prog === 'rsync' ? '-e' : '-S'}`);
  if (cmd.prog === 'sftp') {
    for (const server of values('D')) cmd.runs(server, 'sftp -D');
    for (const batch of values('b')) {
      cmd.path(batch, 'read');
      cmd.add(['code_execution', 'unknown'], 'sftp -b runs a batch file, whose `!` lines are local shell commands');
    }
  }
  for (const remotePath of values('rsync-path')) cmd.add(['code_execution', 'unknown'], `rsync --rsync-path runs ${remotePath.raw} on the other side`);
  if (cmd.prog !== 'rsync') sshOptions(cmd, values('o'));
  const reads = [
    'exclude-from', 'include-from', 'files-from', 'password-file', 'read-batch', 'early-input', 'compare-dest', 'copy-dest', 'link-dest', 'config',
  ];
  if (cmd.prog !== 'rsync') reads.push('i', 'F');
  for (const file of values(...reads)) cmd.path(file, 'read');
  for (const file of values('log-file', 'temp-dir', 'backup-dir', 'partial-dir', 'write-batch', 'only-write-batch')) cmd.path(file, 'write');
  for (const rule of values('filter', 'f')) {
    const merge = /^(?:merge|\.|dir-merge|:)[-+,\w]*\s+(.+)$/.exec(literal(rule) ?? '');
    if (merge) cmd.path(litWord(merge[1]!, false), 'read');
  }
  const locals = opts.operands.filter((word) => !remote(word));
  const last = opts.operands[opts.operands.length - 1];
  for (const word of locals) cmd.path(word, word === last && opts.operands.length > 1 ? 'write' : 'read', word === last ? 'copies into' : 'copies');
};

const netcat: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'ecIipqsTVwWOPxXU', ['exec', 'sh-exec', 'lua-exec', 'source', 'proxy', 'output', 'hex-dump']);
  cmd.add(['networked'], `${cmd.prog} opens network connections`);
  const exec = [...(opts.values.get('e') ?? []), ...(opts.values.get('c') ?? []), ...(opts.values.get('exec') ?? []),
      ...(opts.values.get('sh-exec') ?? []), ...(opts.values.get('lua-exec') ?? [])];
  if (exec.length > 0) cmd.add(['opaque_code'], `${cmd.prog} -e hands a program to whoever connects (a remote shell)`);
  for (const key of ['o', 'output']) (opts.values.get(key) ?? []).forEach((word) => cmd.path(word, 'write'));
  cmd.outputTaint = ['remote'];
};

const socat: Handler = (cmd) => {
  cmd.add(['networked'], 'socat relays network connections');
  for (const word of cmd.args) {
    const value = literal(word);
    if (value === null) continue;
    if (/^(EXEC|SYSTEM):/i.test(value)) cmd.add(['opaque_code'], 'socat EXEC/SYSTEM hands a program to the network (a remote shell)');
    const match = /^(?:OPEN|CREATE|GOPEN|FILE):([^,]+)/i.exec(value);
    if (match) cmd.path(litWord(match[1]!, false), 'write');
  }
  cmd.outputTaint = ['remote'];
};

const openssl: Handler = (cmd) => {
  const sub = cmd.vals[0];
  const opts = parseOpts(cmd.args.slice(1), '', []);
  const val = (name: string): Word[] => {
    const out: Word[] = [];
    cmd.args.forEach((word, at) => {
      if (literal(word) === `-${name}` && cmd.args[at + 1]) out.push(cmd.args[at + 1]!);
    });
    return out;
  };
  if (sub === 's_client' || sub === 's_server' || sub === 's_time' || sub === 'ocsp') {
    cmd.add(['networked'], `openssl ${sub} uses the network`);
    cmd.outputTaint = ['remote'];
  } else cmd.add(['read_only'], `openssl ${sub ?? ''}`);
  val('out').forEach((word) => cmd.path(word, 'write'));
  [...val('in'), ...val('key'), ...val('inkey'), ...val('passin')].forEach((word) => {
    const value = literal(word);
    if (value !== null && /^(file:|env:|pass:|fd:|stdin)/.test(value)) {
      if (value.startsWith('file:')) cmd.path(litWord(value.slice(5), false), 'read');
    } else cmd.path(word, 'read');
  });
  const decoding = (sub === 'enc' || sub === 'base64') && (
      opts.flags.has('d') || cmd.vals.includes('-d') || cmd.vals.includes('-base64') && cmd.vals.includes('-d'));
  const inTaint = cmd.stdin.kind === 'data' ? cmd.stdin.taint : [];
  if (decoding) cmd.outputTaint = [...inTaint, 'decoded'];
};

/** gh / glab: talking to the forge; changing things there is a push to a remote. */
const forge: Handler = (cmd) => {
  const [alt, second] = [cmd.vals[0] ?? '', cmd.vals[1] ?? ''];
  cmd.add(['networked'], `${cmd.prog} talks to the forge`);
  if (alt === 'auth' && (second === 'token' || second === 'login' || second === 'setup-git' || second === 'refresh')) {
    cmd.add(['host_escape'], `${cmd.prog} auth ${second} reads or writes host credentials`);
    return;
  }
  if (alt === 'api') {
    const method = cmd.args.findIndex((word) => literal(word) === '-X' || literal(word) === '--method');
    const root = method >= 0 ? (cmd.vals[method + 1] ?? '').toUpperCase() : '';
    const hasFields = cmd.vals.some((value) => value !== null && /^(-f|-F|--field|--raw-field|--input)$/.test(value));
    if ((root && root !== 'GET') || hasFields) cmd.add(['vcs_remote'], `${cmd.prog} api changes things on the forge`);
    return;
  }
  if (/^(view|list|status|diff|checks|search|browse|watch|download)$/.test(second) || alt === 'search' || alt === 'status' || alt === 'browse' ||
      alt === '--version' || alt === 'version') return;
  if (alt === 'repo' && second === 'clone') {
    cmd.add(['mutating'], 'gh repo clone creates a checkout');
    return;
  }
  if (alt === 'pr' && second === 'checkout') {
    cmd.add(['mutating'], 'gh pr checkout changes the working tree');
    return;
  }
  cmd.add(['vcs_remote'], `${cmd.prog} ${alt} ${second} changes things on the forge`);
};

function networked(what: string): Handler {
  return (cmd) => {
    cmd.add(['networked'], `${cmd.prog} ${what}`);
    cmd.args.forEach((word) => cmd.maybePath(word, 'read'));
    cmd.outputTaint = ['remote'];
  };
}

/** Cloud and deploy CLIs: network, plus uploads of local paths. */
function cloud(cmd: Cmd): void {
  networked('talks to a cloud service')(cmd);
  if (cmd.vals.some((value) => value !== null && /^(deploy|publish|push|apply|destroy|release|delete|create|up)$/.test(value))) {
    cmd.add(['vcs_remote'], `${cmd.prog} changes remote infrastructure`);
  }
}

export const NETWORK_TOOLS: Record<string, Handler> = {
  curl,
  wget,
  wget2: wget,
  ssh,
  'ssh-copy-id': (cmd) => {
    ssh(cmd);
    cmd.add(['host_escape'], 'ssh-copy-id sends host keys');
  },
  'ssh-add': (cmd) => cmd.add(['host_escape'], 'ssh-add reads host keys into the agent'),
  'ssh-keyscan': networked('contacts other machines'),
  scp: remoteCopy,
  sftp: remoteCopy,
  rsync: remoteCopy,
  nc: netcat,
  ncat: netcat,
  netcat: netcat,
  socat,
  telnet: (cmd) => {
    networked('connects to another machine')(cmd);
    cmd.add(['interactive'], 'telnet is interactive');
  },
  ftp: (cmd) => {
    networked('connects to another machine')(cmd);
    cmd.add(['interactive'], 'ftp is interactive');
  },
  lftp: networked('transfers files'),
  tftp: networked('transfers files'),
  rclone: cloud,
  s3cmd: cloud,
  azcopy: cloud,
  // Capturing traffic reads what every process on the host sends; proxies and tunnels carry it.
  tshark: networked('captures network traffic'),
  dumpcap: networked('captures network traffic'),
  termshark: networked('captures network traffic'),
  wireshark: networked('captures network traffic'),
  ettercap: networked('intercepts network traffic'),
  bettercap: networked('intercepts network traffic'),
  mitmproxy: networked('intercepts network traffic'),
  mitmdump: networked('intercepts network traffic'),
  mitmweb: networked('intercepts network traffic'),
  sshuttle: networked('tunnels the network'),
  autossh: networked('connects to another machine'),
  chisel: networked('tunnels the network'),
  frpc: networked('exposes a port to the internet'),
  bore: networked('exposes a port to the internet'),
  localtunnel: networked('exposes a port to the internet'),
  lt: networked('exposes a port to the internet'),
  tor: networked('talks to the network'),
  iperf: networked('sends packets'),
  iperf3: networked('sends packets'),
  hping3: networked('sends packets'),
  masscan: networked('scans the network'),
  zmap: networked('scans the network'),
  arping: networked('sends packets'),
  ncftp: networked('transfers files'),
  smbclient: networked('connects to another machine'),
  rdesktop: networked('connects to another machine'),
  xfreerdp: networked('connects to another machine'),
  vncviewer: networked('connects to another machine'),
  websocat: networked('talks to the network'),
  wscat: networked('talks to the network'),
  grpcurl: networked('talks to the network'),
  mosh: networked('connects to another machine'),
  ping: networked('sends packets'),
  ping6: networked('sends packets'),
  traceroute: networked('sends packets'),
  tracepath: networked('sends packets'),
  mtr: networked('sends packets'),
  dig: networked('queries DNS'),
  nslookup: networked('queries DNS'),
  host: networked('queries DNS'),
  whois: networked('queries whois'),
  nmap: networked('scans the network'),
  http: networked('talks to the network'),
  https: networked('talks to the network'),
  xh: networked('talks to the network'),
  httpie: networked('talks to the network'),
  aria2c: networked('downloads'),
  axel: networked('downloads'),
  fetch: networked('downloads'),
  openssl,
  gh: forge,
  glab: forge,
  hub: forge,
  'http-server': networked('serves files over the network'),
  serve: networked('serves files over the network'),
  'live-server': networked('serves files over the network'),
  ngrok: networked('exposes a port to the internet'),
  cloudflared: networked('exposes a port to the internet'),
  tailscale: networked('changes the network'),
  kubectl: cloud,
  helm: cloud,
  aws: cloud,
  gcloud: cloud,
  gsutil: cloud,
  az: cloud,
  doctl: cloud,
  terraform: cloud,
  tofu: cloud,
  pulumi: cloud,
  heroku: cloud,
  vercel: cloud,
  netlify: cloud,
  fly: cloud,
  flyctl: cloud,
  wrangler: cloud,
  firebase: cloud,
  supabase: cloud,
  ansible: cloud,
  'ansible-playbook': cloud,
};
