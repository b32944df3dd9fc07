/**
 * A look inside inline programs (python -c, node -e, perl -e, here-docs fed to interpreters):
 * not a parser for every language, only the markers of network use, host paths, privilege,
 * starting other programs and decoding-then-running.
 */
import type { Cmd } from '../command';
import { litWord } from '../words';

const NETWORK = /\b(urllib|urlopen|requests\.|import requests|httpx|aiohttp|http\.client|socket\b|smtplib|ftplib|telnetlib|paramiko|websocket|fetch\s*\(|XMLHttpRequest|require\(\s*['"](node:)?(https?|net|dgram|tls|http2)['"]\s*\)|from\s+['"](node:)?(https?|net|dgram|tls)['"]|\bLWP\b|Net::|IO::Socket|HTTP::Tiny|open-uri|Net::HTTP|TCPSocket|fsockopen|curl_init|file_get_contents\(\s*['"]https?:|https?:\/\/|Deno\.connect|Bun\.connect|WebSocket)/;
const SPAWN = /\b(spawn\s|os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|subprocess|pty\.spawn|commands\.getoutput|child_process|execSync|spawnSync|execFile|\bexec\s*\(|Deno\.run|Deno\.Command|Bun\.spawn|Bun\.\$|shell_exec|passthru|proc_open|popen|pcntl_exec|\bsystem\s*\(|\bsystem\s+['"]|Open3|IO\.popen|%x\{|`[^`]*`|\bqx[{(/]|Kernel\.exec|Process\.spawn|Runtime\.getRuntime)/;
const EVAL = /\b(eval\s*\(|exec\s*\(|compile\s*\(|__import__|new Function|Function\s*\(|vm\.run\w*|importlib|marshal\.loads|pickle\.loads|instance_eval|class_eval)/;
const DECODE = /(b64decode|base64|atob\s*\(|fromCharCode|decode\(\s*['"](hex|base64|rot13|rot_13)|codecs\.decode|unhexlify|bytes\.fromhex|Buffer\.from\([^)]*['"](base64|hex)['"]|pack\s*\(\s*['"][Hu]|zlib\.decompress|gzip\.decompress)/;
const HOME = /\b(expanduser|os\.homedir|homedir\(\)|Path\.home|process\.env\.HOME|process\.env\[['"]HOME['"]\]|os\.environ\[['"]HOME['"]\]|os\.environ\.get\(['"]HOME['"]|getenv\(\s*['"]HOME['"]|\$ENV\{HOME\}|ENV\[['"]HOME['"]\]|Dir\.home|\$_SERVER\[['"]HOME['"]\]|Deno\.env\.get\(['"]HOME['"]\))/;
const PRIVILEGE = /\b(setuid|seteuid|setgid|os\.setre[ug]id|process\.setuid|ctypes|sudo\b|\bdoas\b|pkexec)/;
const ENV_DUMP = /\b(os\.environ\b(?!\[['"]|\.get)|process\.env\b(?!\.|\[)|%ENV\b|ENV\.to_h|getenv\(\s*\))/;

/** String literals that look like absolute or home paths: '/etc/passwd', "~/.ssh/id_rsa". */
function quotedPaths(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(/(['"`])((?:\/|~\/|\.\.\/)[^'"`\s]*)\1/g)) out.push(m[2]!);
  // Path pieces joined in code: open('/etc/' + 'passwd'), Path('/etc') / 'shadow'.
  for (const m of code.matchAll(/(['"`])(\/[A-Za-z0-9._-]+\/?)\1\s*[+/,]/g)) out.push(m[2]!);
  return out;
}

/** Shell command strings handed to os.system, subprocess, child_process, system(), backticks … */
const SPAWN_CALL = /(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|execSync|execFileSync|spawnSync|\bexec|\bspawn|\bsystem|\bpopen|shell_exec|passthru|proc_open|IO\.popen|Open3\.\w+)\s*\(?\s*(\[[^\]]*\]|(['"`])((?:\\.|(?!\2).)*)\2)/g;

function spawnedCommands(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(SPAWN_CALL)) {
    if (m[1]!.startsWith('[')) {
      const items = [...m[1]!.matchAll(/(['"])((?:\\.|(?!\1).)*)\1/g)].map((x) => x[2]!);
      if (items.length) out.push(items.map((x) => (/^[\w@%+=:,./-]+$/.test(x) ? x : `'${x.replace(/'/g, "'\\''")}'`)).join(' '));
    } else out.push(m[3]!);
  }
  for (const m of code.matchAll(/`([^`]+)`|\bqx\{([^}]*)\}/g)) out.push(m[1] ?? m[2]!);
  // Tcl and expect: `exec cmd args`, `spawn cmd args`, `system cmd`.
  for (const m of code.matchAll(/(?:^|[\s;[{])(?:exec|spawn)\s+(?!\()([^\]\n;}]+)/g)) out.push(m[1]!.trim());
  return out;
}

/** Judges the text of an inline program; `what` names it in messages ("python -c"). */
export function scanInlineCode(c: Cmd, code: string, what: string): void {
  c.add(['code_execution'], `${what} runs inline code`);
  const network = NETWORK.test(code);
  const spawn = SPAWN.test(code);
  const evals = EVAL.test(code);
  const decode = DECODE.test(code);
  if (network) c.add(['networked'], `${what} code uses the network`);
  if (network && (evals || spawn)) c.add(['opaque_code'], `${what} code fetches something and runs it`);
  if (decode && (evals || spawn)) c.add(['opaque_code'], `${what} code decodes something and runs it`);
  if (spawn) {
    c.add(['unknown'], `${what} code starts other programs the policy cannot see`);
    for (const cmd of spawnedCommands(code)) c.script(cmd, `${what} code`);
  }
  else if (evals) c.add(['unknown'], `${what} code evaluates computed code`);
  if (HOME.test(code)) c.add(['host_escape'], `${what} code reaches into the home directory`);
  if (PRIVILEGE.test(code)) c.add(['privilege'], `${what} code changes privileges`);
  if (ENV_DUMP.test(code) && network) c.add(['host_escape'], `${what} code sends the environment over the network`);
  for (const p of quotedPaths(code)) c.path(litWord(p, false), /\bopen\s*\([^)]*['"][wa]|writeFile|write_text|write_bytes|unlink|rmtree|remove\(/.test(code) ? 'write' : 'read');
  if (/\bopen\s*\(|writeFile|write_text|write_bytes|unlink|rmtree|os\.remove|fs\.rm/.test(code)) c.add(['mutating'], `${what} code may write files`);
}
