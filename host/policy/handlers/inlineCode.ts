/**
 * A look inside inline programs (python -c, node -e, perl -e, here-docs fed to interpreters):
 * not a parser for every language, only the markers of network use, host paths, privilege,
 * starting other programs and decoding-then-running.
 */
import type { Cmd } from '../command';
import { litWord } from '../words';

const NETWORK = new RegExp(
  [
    String.raw`\b(urllib|urlopen|requests\.|import requests|httpx|aiohttp|http\.client|socket\b|smtplib|ftplib|telnetlib`,
    String.raw`|paramiko|websocket|fetch\s*\(|XMLHttpRequest|require\(\s*['"](node:)?(https?|net|dgram|tls|http2)['"]\s*\)`,
    String.raw`|from\s+['"](node:)?(https?|net|dgram|tls)['"]|\bLWP\b|Net::|IO::Socket|HTTP::Tiny|open-uri|Net::HTTP`,
    String.raw`|TCPSocket|fsockopen|curl_init|file_get_contents\(\s*['"]https?:|https?:\/\/|Deno\.connect|Bun\.connect`,
    String.raw`|WebSocket)`,
  ].join(''),
);
/**
 * Starting a program, in the languages' own words. The calls start with a word character, so they
 * follow a word boundary; the quote-like forms (`%x(…)` with any delimiter, backticks: see
 * RUNS_BACKTICKS) may start the code, so they are a group of their own: under one leading `\b`,
 * `` `rm -rf /` `` at the start of `ruby -e` was not seen.
 */
const SPAWN = new RegExp(
  [
    String.raw`\b(spawn\s|spawn\s*\(|spawn_sync|os\.system|os\.popen|os\.exec\w*|os\.spawn\w*|os\.posix_spawn\w*|subprocess|pty\.spawn`,
    String.raw`|commands\.getoutput|child_process|execSync|spawnSync|execFile|\bexec\s*\(|Deno\.run|Deno\.Command|Bun\.spawn|Bun\.\$`,
    String.raw`|shell_exec|passthru|proc_open|popen|pcntl_exec|\bsystem\s*\(|\bsystem\s+['"]|Open3|IO\.popen|Kernel\.exec`,
    String.raw`|Process\.spawn|Runtime\.getRuntime|ProcessBuilder|do shell script|run-program|\bos:cmd|System\.cmd|\bqx\W`,
    String.raw`|sys\.process|Start-Process|Invoke-Expression|\brun\s*\(\s*\`)`,
    // Quote-like forms, anywhere; Tcl's and expect's `exec cmd` as a statement; Perl's open of a pipe.
    String.raw`|%x[^\w\s]|\.execute\s*\(\s*\)|(?:^|[\s;[{])exec\s+[\w/.]|\bopen\s*\(?[^)]*,\s*['"](?:\s*\||[^'"]*\|\s*['"])|\bopen\s*\(?[^)]*['"]-?\|`,
  ].join(''),
);
const EVAL = new RegExp(
  [
    String.raw`\b(eval\s*\(|exec\s*\(|compile\s*\(|__import__|new Function|Function\s*\(|vm\.run\w*|importlib|marshal\.loads`,
    String.raw`|pickle\.loads|instance_eval|class_eval|instance_exec|module_eval|Kernel\.eval|binding\.eval|\.send\s*\(`,
    // Perl's and Ruby's `eval EXPR` without parentheses, Lua's load/loadstring/dofile, R's parse(text=),
    // PHP's create_function and assert of a string.
    String.raw`|\beval\s+[\w$@"'\[{]|\bload\s*\(|loadstring\s*\(|dofile\s*\(|parse\s*\(\s*text\s*=|eval\s*\(\s*parse|create_function|\bassert\s*\(\s*\$)`,
  ].join(''),
);
const DECODE = new RegExp(
  [
    String.raw`(b64decode|base64|atob\s*\(|fromCharCode|decode\(\s*['"](hex|base64|rot13|rot_13)|codecs\.decode|unhexlify`,
    String.raw`|bytes\.fromhex|Buffer\.from\([^)]*['"](base64|hex)['"]|pack\s*\(\s*['"][Hu]|zlib\.decompress`,
    String.raw`|gzip\.decompress`,
    // Building text from numbers or packed bytes: pack/unpack, chr, string.char, rawToChar, intToUtf8 …
    String.raw`|\bpack\s*\(|\.pack\s*\(|\bunpack\s*\(|\bchr\b|string\.char|\brawToChar|\bintToUtf8|decode_base64|MIME::Base64`,
    String.raw`|Base64\.|str_rot13|gzinflate|gzuncompress|hex2bin|\bstrrev\s*\(|\[::-1\]|\.reverse\(\)|(?:\\x[0-9a-fA-F]{2}){4}|(?:\\\d{2,3}){4})`,
  ].join(''),
);

/** Package installs from inside code: R, Julia, Python's pip module, Ruby's gem install. */
const INSTALL = /\b(install\.packages|remotes::install_\w+|devtools::install\w*|BiocManager::install|pak::pkg_install|Pkg\.add|Pkg\.install|Pkg\.develop|pip\.main|pip\._internal|ensurepip|Gem\.install|Gem::Installer)/;
const HOME = new RegExp(
  [
    String.raw`\b(expanduser|os\.homedir|homedir\(\)|Path\.home|process\.env\.HOME|process\.env\[['"]HOME['"]\]`,
    String.raw`|os\.environ\[['"]HOME['"]\]|os\.environ\.get\(['"]HOME['"]|getenv\(\s*['"]HOME['"]|\$ENV\{HOME\}`,
    String.raw`|ENV\[['"]HOME['"]\]|Dir\.home|\$_SERVER\[['"]HOME['"]\]|Deno\.env\.get\(['"]HOME['"]\))`,
  ].join(''),
);
const PRIVILEGE = /\b(setuid|seteuid|setgid|os\.setre[ug]id|process\.setuid|ctypes|sudo\b|\bdoas\b|pkexec)/;
const ENV_DUMP = /\b(os\.environ\b(?!\[['"]|\.get)|process\.env\b(?!\.|\[)|%ENV\b|ENV\.to_h|getenv\(\s*\))/;

/** Signals to other processes: os.kill, process.kill, Process.kill, perl/ruby kill, posix_kill. */
const SIGNAL = /\b(os\.kill|os\.killpg|process\.kill|Process\.kill|posix_kill|signal\.pthread_kill)\s*\(|\bkill\s*\(?\s*['"]?(-?\d+|[A-Z]+|'[A-Z]+')\s*,/;

/** String literals that look like absolute or home paths: '/etc/passwd', "~/.ssh/id_rsa". */
function quotedPaths(code: string): string[] {
  const out: string[] = [];
  for (const match of code.matchAll(/(['"`])((?:\/|~\/|\.\.\/)[^'"`\s]*)\1/g)) out.push(match[2]!);
  // Path pieces joined in code: open('/etc/' + 'passwd'), Path('/etc') / 'shadow'.
  for (const found of code.matchAll(/(['"`])(\/[A-Za-z0-9._-]+\/?)\1\s*[+/,]/g)) out.push(found[2]!);
  return out;
}

/** Languages whose backticks run a shell command; in JavaScript they are template strings. */
const JAVASCRIPT = new Set(['node', 'nodejs', 'deno', 'bun', 'tsx', 'ts-node', 'ts_node']);
const BACKTICKS = /`([^`]+)`/g;

function runsBackticks(judged: Cmd): boolean {
  return !JAVASCRIPT.has(judged.prog);
}

/** Shell command strings handed to os.system, subprocess, child_process, system(), backticks … */
const SPAWN_CALL = new RegExp(
  [
    String.raw`(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)`,
    String.raw`|execSync|execFileSync|spawnSync|\bexec|\bspawn|\bsystem|\bpopen|shell_exec|passthru|proc_open|IO\.popen`,
    String.raw`|Open3\.\w+)\s*\(?\s*(\[[^\]]*\]|(['"\`])((?:\\.|(?!\2).)*)\2)`,
  ].join(''),
  'g',
);

function spawnedCommands(code: string, backticks: boolean): string[] {
  const out: string[] = [];
  for (const match of code.matchAll(SPAWN_CALL)) {
    if (match[1]!.startsWith('[')) {
      const items = [...match[1]!.matchAll(/(['"])((?:\\.|(?!\1).)*)\1/g)].map((quoted) => quoted[2]!);
      if (items.length) out.push(items.map((item) => (/^[\w@%+=:,./-]+$/.test(item) ? item : `'${item.replace(/'/g, "'\\''")}'`)).join(' '));
    } else out.push(match[3]!);
  }
  if (backticks) for (const found of code.matchAll(BACKTICKS)) out.push(found[1]!);
  // `%x(…)`/`qx(…)` with a bracket or any other delimiter.
  for (const found of code.matchAll(/(?:%x|\bqx)(?:\(([^)]*)\)|\{([^}]*)\}|\[([^\]]*)\]|<([^>]*)>|([^\w\s({[<])(.*?)\5)/g)) {
    out.push(found[1] ?? found[2] ?? found[3] ?? found[4] ?? found[6]!);
  }
  // Groovy: "cmd args".execute().
  for (const found of code.matchAll(/(['"])((?:\\.|(?!\1).)*)\1\s*\.execute\s*\(/g)) out.push(found[2]!);
  // Tcl and expect: `exec cmd args`, `spawn cmd args`, `system cmd`.
  for (const call of code.matchAll(/(?:^|[\s;[{])(?:exec|spawn)\s+(?!\()([^\]\n;}]+)/g)) out.push(call[1]!.trim());
  return out;
}

/** Judges the text of an inline program; `what` names it in messages ("python -c"). */
export function scanInlineCode(judged: Cmd, code: string, what: string): void {
  judged.add(['code_execution'], `${what} runs inline code`);
  const network = NETWORK.test(code);
  const spawn = SPAWN.test(code) || (runsBackticks(judged) && /`[^`]*`/.test(code));
  const evals = EVAL.test(code);
  const decode = DECODE.test(code);
  if (network) judged.add(['networked'], `${what} code uses the network`);
  if (network && (evals || spawn)) judged.add(['opaque_code'], `${what} code fetches something and runs it`);
  if (decode && (evals || spawn)) judged.add(['opaque_code'], `${what} code decodes something and runs it`);
  if (spawn) {
    judged.add(['unknown'], `${what} code starts other programs the policy cannot see`);
    for (const cmd of spawnedCommands(code, runsBackticks(judged))) judged.script(cmd, `${what} code`);
  }
  else if (evals) judged.add(['unknown'], `${what} code evaluates computed code`);
  if (INSTALL.test(code)) judged.add(['package_install', 'networked'], `${what} code installs packages from a registry`);
  if (HOME.test(code)) judged.add(['host_escape'], `${what} code reaches into the home directory`);
  if (PRIVILEGE.test(code)) judged.add(['privilege'], `${what} code changes privileges`);
  if (ENV_DUMP.test(code) && network) judged.add(['host_escape'], `${what} code sends the environment over the network`);
  if (SIGNAL.test(code)) judged.add(['system'], `${what} code sends signals to processes, not only its own`);
  if (/\bfork\b/.test(code) && /\b(while|for|until|loop|repeat)\b/.test(code)) judged.add(['resource_exhaustion'],
      `${what} code forks in a loop (a fork bomb)`);
  for (const name of quotedPaths(code)) judged.path(litWord(name, false),
      /\bopen\s*\([^)]*['"][wa]|writeFile|write_text|write_bytes|unlink|rmtree|remove\(/.test(code) ? 'write' : 'read');
  if (/\bopen\s*\(|writeFile|write_text|write_bytes|unlink|rmtree|os\.remove|fs\.rm/.test(code)) judged.add(['mutating'], `${what} code may write files`);
}
