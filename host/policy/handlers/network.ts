/** Network clients: downloads (and what they save), remote shells and copies, sockets, cloud CLIs. */
import { posix } from 'node:path';
import type { Handler } from '../classify';
import type { Cmd } from '../command';
import { parseOpts } from '../command';
import { looksRemote } from '../paths';
import { dropPrefix, literal, literalPrefix, litWord, type Word } from '../words';

function downloadedTo(c: Cmd, w: Word): void {
  const v = c.path(w, 'write', 'saves a download to');
  if (v.cls === 'inside') c.judge.downloaded.add(v.shown);
}

function urlBasename(url: string): string | null {
  const m = /^[a-z]+:\/\/[^/]+\/(?:.*\/)?([^/?#]+)/i.exec(url);
  return m ? m[1]! : null;
}

/** `-d @file`, `-F x=@file`, `--upload-file file`: local files sent to the network. */
function uploads(c: Cmd, values: Map<string, Word[]>, keys: string[]): void {
  for (const k of keys) {
    for (const w of values.get(k) ?? []) {
      if (/^(upload-file|T|post-file|body-file)$/.test(k)) {
        c.path(w, 'read', 'uploads');
        continue;
      }
      const v = literal(w);
      if (v === null) {
        // `-d @$HOME/.netrc`: the file after `@` is read, whatever it is.
        const at = literalPrefix(w).indexOf('@');
        if (at >= 0) c.path(dropPrefix(w, at + 1), 'read', 'uploads');
        else c.add(['unknown'], `sends data whose value is unknown (${w.raw})`);
        continue;
      }
      const m = /@([^;,]+)/.exec(v);
      if (m && m[1] !== '-') c.path(litWord(m[1]!, false), 'read', 'uploads');
    }
  }
}

const CURL_VALUED = 'oTdFKbcDEHXAeuxwmrYyzCQ';
const CURL_LONG = ['output', 'output-dir', 'upload-file', 'data', 'data-binary', 'data-raw', 'data-ascii', 'data-urlencode', 'form', 'form-string', 'json', 'config', 'cookie', 'cookie-jar', 'dump-header', 'trace', 'trace-ascii', 'cert', 'key', 'cacert', 'capath', 'header', 'request', 'user-agent', 'referer', 'user', 'proxy', 'write-out', 'max-time', 'retry', 'connect-timeout', 'range', 'time-cond', 'continue-at', 'resolve', 'interface', 'url', 'netrc-file', 'unix-socket', 'abstract-unix-socket', 'stderr', 'libcurl', 'etag-save', 'etag-compare', 'hsts', 'alt-svc'];

const curl: Handler = (c) => {
  const o = parseOpts(c.args, CURL_VALUED, CURL_LONG);
  c.add(['networked'], 'curl talks to the network');
  const urls = [...o.operands, ...(o.values.get('url') ?? [])];
  for (const w of urls) {
    const v = literal(w);
    if (v && /^file:\/\//i.test(v)) c.path(litWord(v.replace(/^file:\/\/[^/]*/i, ''), false), 'read');
  }
  const outs = [...(o.values.get('o') ?? []), ...(o.values.get('output') ?? [])];
  outs.filter((w) => literal(w) !== '-').forEach((w) => downloadedTo(c, w));
  if (o.flags.has('O') || o.flags.has('remote-name') || o.flags.has('remote-name-all')) {
    for (const w of urls) {
      const name = urlBasename(literal(w) ?? '');
      if (name) downloadedTo(c, litWord(name));
      else c.add(['mutating'], 'curl -O saves a download');
    }
  }
  for (const k of ['output-dir', 'c', 'cookie-jar', 'D', 'dump-header', 'trace', 'trace-ascii', 'stderr', 'libcurl', 'etag-save', 'hsts', 'alt-svc']) {
    for (const w of o.values.get(k) ?? []) if (literal(w) !== '-') c.path(w, 'write');
  }
  for (const k of ['K', 'config', 'b', 'cookie', 'E', 'cert', 'key', 'cacert', 'capath', 'netrc-file', 'etag-compare', 'unix-socket']) {
    for (const w of o.values.get(k) ?? []) {
      const v = literal(w);
      if (k === 'b' || k === 'cookie') {
        if (v !== null && !v.includes('=')) c.path(w, 'read');
      } else c.path(w, 'read');
    }
  }
  uploads(c, o.values, ['d', 'data', 'data-binary', 'data-ascii', 'data-urlencode', 'F', 'form', 'json', 'T', 'upload-file']);
  if (outs.length === 0 && !o.flags.has('O') && !o.flags.has('remote-name')) c.outputTaint = ['remote'];
};

const wget: Handler = (c) => {
  const o = parseOpts(c.args, 'OoaPiBeUtTwQlADRIXNH', ['output-document', 'output-file', 'append-output', 'directory-prefix', 'input-file', 'base', 'execute', 'user-agent', 'tries', 'timeout', 'wait', 'quota', 'level', 'accept', 'reject', 'domains', 'include-directories', 'exclude-directories', 'post-data', 'post-file', 'body-data', 'body-file', 'header', 'user', 'password', 'load-cookies', 'save-cookies', 'certificate', 'private-key', 'ca-certificate', 'method', 'config', 'use-askpass']);
  c.add(['networked'], 'wget talks to the network');
  const doc = [...(o.values.get('O') ?? []), ...(o.values.get('output-document') ?? [])];
  if (doc.some((w) => literal(w) === '-')) c.outputTaint = ['remote'];
  doc.filter((w) => literal(w) !== '-').forEach((w) => downloadedTo(c, w));
  const prefix = [...(o.values.get('P') ?? []), ...(o.values.get('directory-prefix') ?? [])];
  prefix.forEach((w) => c.path(w, 'write', 'saves downloads into'));
  if (doc.length === 0) {
    for (const w of o.operands) {
      const name = urlBasename(literal(w) ?? '');
      const base = prefix[0] ? literal(prefix[0]) : null;
      if (name) downloadedTo(c, litWord(base ? posix.join(base, name) : name));
    }
    if (o.operands.length > 0) c.add(['mutating'], 'wget saves downloads in the current directory');
  }
  for (const k of ['o', 'output-file', 'a', 'append-output', 'save-cookies']) (o.values.get(k) ?? []).forEach((w) => c.path(w, 'write'));
  for (const k of ['i', 'input-file', 'load-cookies', 'certificate', 'private-key', 'ca-certificate', 'config']) (o.values.get(k) ?? []).forEach((w) => c.path(w, 'read'));
  if (o.values.has('e') || o.values.has('execute')) c.add(['unknown'], 'wget -e runs wgetrc commands');
  for (const askpass of o.values.get('use-askpass') ?? []) c.runs(askpass, 'wget --use-askpass');
  uploads(c, o.values, ['post-file', 'body-file']);
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
  if (cmd.prog === 'ssh' && opts.operands.length <= 1 && !opts.flags.has('N') && !opts.flags.has('f')) cmd.add(['interactive'], 'ssh without a command opens a remote login shell');
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
  if (opts.flags.has('delete') || [...opts.flags].some((flag) => flag.startsWith('delete') || flag === 'remove-source-files')) cmd.add(['destructive'], `${cmd.prog} deletes files`);
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
  const reads = ['exclude-from', 'include-from', 'files-from', 'password-file', 'read-batch', 'early-input', 'compare-dest', 'copy-dest', 'link-dest', 'config'];
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

const netcat: Handler = (c) => {
  const o = parseOpts(c.args, 'ecIipqsTVwWOPxXU', ['exec', 'sh-exec', 'lua-exec', 'source', 'proxy', 'output', 'hex-dump']);
  c.add(['networked'], `${c.prog} opens network connections`);
  const exec = [...(o.values.get('e') ?? []), ...(o.values.get('c') ?? []), ...(o.values.get('exec') ?? []), ...(o.values.get('sh-exec') ?? []), ...(o.values.get('lua-exec') ?? [])];
  if (exec.length > 0) c.add(['opaque_code'], `${c.prog} -e hands a program to whoever connects (a remote shell)`);
  for (const k of ['o', 'output']) (o.values.get(k) ?? []).forEach((w) => c.path(w, 'write'));
  c.outputTaint = ['remote'];
};

const socat: Handler = (c) => {
  c.add(['networked'], 'socat relays network connections');
  for (const w of c.args) {
    const v = literal(w);
    if (v === null) continue;
    if (/^(EXEC|SYSTEM):/i.test(v)) c.add(['opaque_code'], 'socat EXEC/SYSTEM hands a program to the network (a remote shell)');
    const f = /^(?:OPEN|CREATE|GOPEN|FILE):([^,]+)/i.exec(v);
    if (f) c.path(litWord(f[1]!, false), 'write');
  }
  c.outputTaint = ['remote'];
};

const openssl: Handler = (c) => {
  const sub = c.vals[0];
  const o = parseOpts(c.args.slice(1), '', []);
  const val = (name: string): Word[] => {
    const out: Word[] = [];
    c.args.forEach((w, i) => {
      if (literal(w) === `-${name}` && c.args[i + 1]) out.push(c.args[i + 1]!);
    });
    return out;
  };
  if (sub === 's_client' || sub === 's_server' || sub === 's_time' || sub === 'ocsp') {
    c.add(['networked'], `openssl ${sub} uses the network`);
    c.outputTaint = ['remote'];
  } else c.add(['read_only'], `openssl ${sub ?? ''}`);
  val('out').forEach((w) => c.path(w, 'write'));
  [...val('in'), ...val('key'), ...val('inkey'), ...val('passin')].forEach((w) => {
    const v = literal(w);
    if (v !== null && /^(file:|env:|pass:|fd:|stdin)/.test(v)) {
      if (v.startsWith('file:')) c.path(litWord(v.slice(5), false), 'read');
    } else c.path(w, 'read');
  });
  const decoding = (sub === 'enc' || sub === 'base64') && (o.flags.has('d') || c.vals.includes('-d') || c.vals.includes('-base64') && c.vals.includes('-d'));
  const inTaint = c.stdin.kind === 'data' ? c.stdin.taint : [];
  if (decoding) c.outputTaint = [...inTaint, 'decoded'];
};

/** gh / glab: talking to the forge; changing things there is a push to a remote. */
const forge: Handler = (c) => {
  const [a, b] = [c.vals[0] ?? '', c.vals[1] ?? ''];
  c.add(['networked'], `${c.prog} talks to the forge`);
  if (a === 'auth' && (b === 'token' || b === 'login' || b === 'setup-git' || b === 'refresh')) {
    c.add(['host_escape'], `${c.prog} auth ${b} reads or writes host credentials`);
    return;
  }
  if (a === 'api') {
    const method = c.args.findIndex((w) => literal(w) === '-X' || literal(w) === '--method');
    const m = method >= 0 ? (c.vals[method + 1] ?? '').toUpperCase() : '';
    const hasFields = c.vals.some((v) => v !== null && /^(-f|-F|--field|--raw-field|--input)$/.test(v));
    if ((m && m !== 'GET') || hasFields) c.add(['vcs_remote'], `${c.prog} api changes things on the forge`);
    return;
  }
  if (/^(view|list|status|diff|checks|search|browse|watch|download)$/.test(b) || a === 'search' || a === 'status' || a === 'browse' || a === '--version' || a === 'version') return;
  if (a === 'repo' && b === 'clone') {
    c.add(['mutating'], 'gh repo clone creates a checkout');
    return;
  }
  if (a === 'pr' && b === 'checkout') {
    c.add(['mutating'], 'gh pr checkout changes the working tree');
    return;
  }
  c.add(['vcs_remote'], `${c.prog} ${a} ${b} changes things on the forge`);
};

function networked(what: string): Handler {
  return (c) => {
    c.add(['networked'], `${c.prog} ${what}`);
    c.args.forEach((w) => c.maybePath(w, 'read'));
    c.outputTaint = ['remote'];
  };
}

/** Cloud and deploy CLIs: network, plus uploads of local paths. */
function cloud(c: Cmd): void {
  networked('talks to a cloud service')(c);
  if (c.vals.some((v) => v !== null && /^(deploy|publish|push|apply|destroy|release|delete|create|up)$/.test(v))) {
    c.add(['vcs_remote'], `${c.prog} changes remote infrastructure`);
  }
}

export const NETWORK_TOOLS: Record<string, Handler> = {
  curl,
  wget,
  wget2: wget,
  ssh,
  'ssh-copy-id': (c) => {
    ssh(c);
    c.add(['host_escape'], 'ssh-copy-id sends host keys');
  },
  'ssh-add': (c) => c.add(['host_escape'], 'ssh-add reads host keys into the agent'),
  'ssh-keyscan': networked('contacts other machines'),
  scp: remoteCopy,
  sftp: remoteCopy,
  rsync: remoteCopy,
  nc: netcat,
  ncat: netcat,
  netcat: netcat,
  socat,
  telnet: (c) => {
    networked('connects to another machine')(c);
    c.add(['interactive'], 'telnet is interactive');
  },
  ftp: (c) => {
    networked('connects to another machine')(c);
    c.add(['interactive'], 'ftp is interactive');
  },
  lftp: networked('transfers files'),
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
