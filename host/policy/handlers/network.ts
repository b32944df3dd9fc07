/** Network clients: downloads (and what they save), remote shells and copies, sockets, cloud CLIs. */
import { posix } from 'node:path';
import type { Handler } from '../classify';
import type { Cmd } from '../command';
import { parseOpts } from '../command';
import { looksRemote } from '../paths';
import { literal, litWord, type Word } from '../words';

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
        c.add(['unknown'], `sends data whose value is unknown (${w.raw})`);
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
  const o = parseOpts(c.args, 'OoaPiBeUtTwQlADRIXNH', ['output-document', 'output-file', 'append-output', 'directory-prefix', 'input-file', 'base', 'execute', 'user-agent', 'tries', 'timeout', 'wait', 'quota', 'level', 'accept', 'reject', 'domains', 'include-directories', 'exclude-directories', 'post-data', 'post-file', 'body-data', 'body-file', 'header', 'user', 'password', 'load-cookies', 'save-cookies', 'certificate', 'private-key', 'ca-certificate', 'method', 'config']);
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
  uploads(c, o.values, ['post-file', 'body-file']);
};

/** ssh: a remote shell; local commands hidden in -o options run here and are parsed. */
const ssh: Handler = (c) => {
  const o = parseOpts(c.args, 'bcDEeFIiJLlmOoPpQRSWw', [], true);
  c.add(['networked'], `${c.prog} connects to another machine`);
  for (const w of [...(o.values.get('i') ?? []), ...(o.values.get('F') ?? []), ...(o.values.get('E') ?? []), ...(o.values.get('S') ?? [])]) c.path(w, 'read');
  for (const w of o.values.get('o') ?? []) {
    const v = literal(w);
    if (v === null) c.add(['unknown'], `ssh option ${w.raw} is unknown`);
    else {
      const m = /^(ProxyCommand|LocalCommand|KnownHostsCommand|RemoteCommand)[= ]\s*(.*)$/i.exec(v);
      if (m && !/^RemoteCommand$/i.test(m[1]!)) c.script(m[2]!, `ssh -o ${m[1]}`);
      if (/^PermitLocalCommand[= ]\s*yes/i.test(v)) c.add(['code_execution'], 'ssh runs local commands');
      const idf = /^(IdentityFile|UserKnownHostsFile|CertificateFile)[= ]\s*(.*)$/i.exec(v);
      if (idf) c.path(litWord(idf[2]!, false), 'read');
    }
  }
  if (c.prog === 'ssh' && o.operands.length <= 1 && !o.flags.has('N') && !o.flags.has('f')) c.add(['interactive'], 'ssh without a command opens a remote login shell');
  if (c.prog === 'ssh') c.outputTaint = ['remote'];
};

/** scp / rsync / sftp: `host:path` operands are remote; the local ones are judged as paths. */
const remoteCopy: Handler = (c) => {
  const o = parseOpts(c.args, c.prog === 'rsync' ? 'eBfTM' : 'cFiJloPSDX', ['rsh', 'rsync-path', 'exclude', 'include', 'exclude-from', 'include-from', 'files-from', 'filter', 'temp-dir', 'partial-dir', 'backup-dir', 'compare-dest', 'copy-dest', 'link-dest', 'log-file', 'password-file', 'chmod', 'chown', 'usermap', 'groupmap', 'timeout', 'bwlimit', 'port', 'sockopts', 'out-format', 'suffix', 'max-size', 'min-size', 'max-delete', 'modify-window', 'iconv', 'checksum-choice', 'compress-choice', 'info', 'debug']);
  const remote = (w: Word) => {
    const v = literal(w);
    return v !== null && (looksRemote(v) || /^[^/]*:/.test(v) || v.startsWith('rsync://'));
  };
  const anyRemote = o.operands.some(remote);
  if (anyRemote || c.prog === 'sftp') c.add(['networked'], `${c.prog} copies to or from another machine`);
  else c.add(['mutating'], `${c.prog} copies files`);
  if (o.flags.has('delete') || [...o.flags].some((f) => f.startsWith('delete') || f === 'remove-source-files')) c.add(['destructive'], `${c.prog} deletes files`);
  for (const w of [...(o.values.get('e') ?? []), ...(o.values.get('rsh') ?? [])]) {
    const v = literal(w);
    if (v === null) c.add(['obfuscation'], `${c.prog} -e runs a computed command`);
    else c.script(v, `${c.prog} -e`);
  }
  for (const k of ['i', 'F', 'exclude-from', 'include-from', 'files-from', 'password-file']) (o.values.get(k) ?? []).forEach((w) => c.path(w, 'read'));
  for (const k of ['log-file', 'temp-dir', 'backup-dir', 'partial-dir']) (o.values.get(k) ?? []).forEach((w) => c.path(w, 'write'));
  const locals = o.operands.filter((w) => !remote(w));
  const last = o.operands[o.operands.length - 1];
  for (const w of locals) c.path(w, w === last && o.operands.length > 1 ? 'write' : 'read', w === last ? 'copies into' : 'copies');
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
