/**
 * Programs of other ecosystems and tools the rest of the table does not know, judged by what
 * they do rather than left to the generic "unknown program": installers (cpanm, luarocks, opam,
 * cabal, pdm, pixi, volta, rustup …), network and publishing tools (mail senders, svn/hg/fossil,
 * yt-dlp, twine, serverless, cdk …), tools that plant code or change the host's configuration
 * (pre-commit install, husky, go env -w, rustup default, chsh, direnv allow, ssh-keygen -R),
 * privilege wrappers (gosu, su-exec), shells whose language is not bash (nu, xonsh, elvish, rc),
 * and tools with a shell escape in their input (dc `!`, m4 `esyscmd`, groff `.sy`, gnuplot and
 * octave `system`, latexmk `-e`, sqlite3 `.shell`).
 */
import type { Handler } from '../classify';
import type { Cmd } from '../command';
import { SYSTEM_TOOLS } from './system';
import { runInner } from './wrappers';

function installs(cmd: Cmd, what = `${cmd.prog} installs packages`): void {
  cmd.add(['package_install', 'networked'], `${what} from a registry (and may run their build scripts)`);
  cmd.argumentPaths();
}

/** A tool whose first operand is a verb: `verbs` install, `reads` only read, anything else runs project code. */
function verbTool(install: RegExp, reads: RegExp, extra: (cmd: Cmd, verb: string) => boolean = () => false): Handler {
  return (cmd) => {
    const verb = cmd.vals.find((value) => value !== null && !value.startsWith('-')) ?? '';
    if (cmd.vals.length === 1 && /^(--version|-V|--help|-h|version|help)$/.test(cmd.vals[0] ?? '')) {
      cmd.add(['read_only'], `${cmd.prog} ${cmd.vals[0]} only prints`);
      return;
    }
    if (extra(cmd, verb)) return;
    if (install.test(verb)) installs(cmd, `${cmd.prog} ${verb} installs packages`);
    else if (reads.test(verb)) {
      cmd.add(['read_only'], `${cmd.prog} ${verb} only reads`);
      cmd.argumentPaths();
    } else {
      cmd.add(['code_execution', 'mutating'], `${cmd.prog} ${verb || ''} runs project code or changes the project`.replace(/\s+/g, ' '));
      cmd.argumentPaths();
    }
  };
}

const always = (categories: Parameters<Cmd['add']>[0], why: string): Handler => (cmd) => {
  cmd.add(categories, `${cmd.prog} ${why}`);
  cmd.argumentPaths();
};

/** Network tools: every use reaches the network (and sends what it is given). */
const network = (why: string): Handler => always(['networked'], why);

/** Publishing and deploying: visible to others, hard to undo. */
const publishes = (verbs: RegExp): Handler => (cmd) => {
  const verb = cmd.vals.find((value) => value !== null && !value.startsWith('-')) ?? '';
  if (verbs.test(verb)) cmd.add(['vcs_remote', 'networked'], `${cmd.prog} ${verb} publishes or deploys to a remote`);
  else cmd.add(['networked', 'code_execution'], `${cmd.prog} ${verb} talks to a remote service`.replace(/\s+/g, ' '));
  cmd.argumentPaths();
};

/** Planting code that runs later (hooks), or changing configuration that lives outside the workspace. */
const persists = (why: string): Handler => always(['persistence'], why);
const hostConfig = (why: string): Handler => always(['host_escape'], why);

/** gosu USER CMD…, su-exec USER CMD…: run a command as another user. */
const asUser: Handler = (cmd) => {
  cmd.add(['privilege'], `${cmd.prog} runs a command as another user`);
  runInner(cmd, cmd.args.slice(1), true);
};

/**
 * A shell whose language is not bash: its `-c` text (or script) is read as shell text to find
 * denied commands, and is `unknown` besides (the policy does not read that language exactly).
 */
function foreignShell(cmd: Cmd): void {
  const at = cmd.vals.findIndex((value) => value === '-c' || value === '--command' || value === '-e' || value === '--execute');
  if (cmd.vals.length === 1 && /^(--version|-v|--help|-h)$/.test(cmd.vals[0] ?? '')) {
    cmd.add(['read_only'], `${cmd.prog} ${cmd.vals[0]} only prints`);
    return;
  }
  if (at >= 0) {
    const text = cmd.vals[at + 1];
    cmd.add(['code_execution', 'unknown'], `${cmd.prog} -c runs code in a shell language the policy does not read exactly`);
    if (text !== null && text !== undefined) cmd.script(text, `${cmd.prog} -c`);
    return;
  }
  const script = cmd.args.find((_, i) => !(cmd.vals[i] ?? '-').startsWith('-'));
  if (script) {
    cmd.add(['code_execution', 'unknown'], `${cmd.prog} runs a script in a shell language the policy does not read`);
    cmd.path(script, 'exec');
  } else cmd.add(['interactive'], `${cmd.prog} with no script is an interactive shell`);
}

/**
 * Tools whose input language can run shell commands. The text they read (arguments, a here-doc,
 * a pipe of known text) is searched for the escape; a command found is judged as shell text. An
 * escape whose command is not literal, or input the policy cannot read, is `unknown`.
 */
interface Escape {
  /** Options whose value is program text. */
  code: string[];
  /** The escape, with the command in group 1. */
  escape: RegExp;
  /** When the input is not known: the tool's input may hold an escape. */
  opaqueInput: boolean;
  /** Every argument may be program text (sqlite3 DB 'SQL; .shell …'). */
  allArgs?: boolean;
}

/** Searches the text a tool reads (its code options, a known stdin) for its shell escape. */
function scanEscapes(cmd: Cmd, spec: Escape): void {
  const texts: string[] = [];
  let unknownText = false;
  cmd.vals.forEach((value, i) => {
    if (value === null) return;
    const eq = spec.code.find((opt) => value.startsWith(`${opt}=`));
    if (spec.allArgs && !value.startsWith('-')) texts.push(value);
    else if (spec.code.includes(value)) {
      const next = cmd.vals[i + 1];
      if (next === null || next === undefined) unknownText = true;
      else texts.push(next);
    } else if (eq) texts.push(value.slice(eq.length + 1));
  });
  if (cmd.stdin.kind === 'data') {
    if (cmd.stdin.text !== null) texts.push(cmd.stdin.text);
    else unknownText = true;
  }
  const escape = new RegExp(spec.escape.source, spec.escape.flags.includes('g') ? spec.escape.flags : spec.escape.flags + 'g');
  for (const text of texts) {
    for (const found of text.matchAll(escape)) {
      cmd.add(['code_execution', 'unknown'], `${cmd.prog} input runs a shell command`);
      const inner = found[1];
      if (inner !== undefined && inner.trim() !== '') cmd.script(inner, `${cmd.prog} shell escape`);
    }
  }
  if (unknownText && spec.opaqueInput) cmd.add(['unknown'], `${cmd.prog} reads code the policy cannot see, which can start shell commands`);
}

function escapes(spec: Escape): Handler {
  return (cmd) => {
    if (cmd.vals.length === 1 && /^(--version|-V|--help|-h)$/.test(cmd.vals[0] ?? '')) {
      cmd.add(['read_only'], `${cmd.prog} ${cmd.vals[0]} only prints`);
      return;
    }
    cmd.add(['code_execution'], `${cmd.prog} runs a program in its own language, which can start shell commands`);
    scanEscapes(cmd, spec);
    cmd.argumentPaths();
  };
}

/** A known tool's own judgement, with its shell escape searched for besides. */
function withEscapes(spec: Escape, base: Handler): Handler {
  return (cmd) => {
    scanEscapes(cmd, spec);
    base(cmd);
  };
}

const TEX_ESCAPES = escapes({ code: ['-e', '-r'], escape: /(?:system\s*\(|`|\$\w+\s*=\s*["'])([^"'`)]*)/, opaqueInput: false });

/**
 * hash -p PATH NAME: from now on NAME runs PATH, whatever PATH holds: later `NAME …` is judged as
 * `PATH …` (like an alias). `hash -r`, `hash -d`, `hash` alone, `hash -t` only touch the table.
 */
const hash: Handler = (cmd) => {
  const at = cmd.vals.indexOf('-p');
  if (at < 0) {
    cmd.add(['read_only'], 'hash lists or clears remembered program locations');
    return;
  }
  const path = cmd.vals[at + 1];
  const names = cmd.vals.slice(at + 2);
  cmd.add(['code_execution'], 'hash -p makes a name run another program');
  if (path === null || path === undefined || names.some((name) => name === null)) {
    cmd.add(['obfuscation'], 'hash -p binds a computed program or name');
    return;
  }
  cmd.path(cmd.args[at + 1]!, 'exec');
  for (const name of names) cmd.judge.alias(name!, `'${path.replace(/'/g, "'\\''")}'`);
};

/**
 * history -s TEXT adds TEXT to the history; `fc -s`, `fc -e -`, `fc` (an editor) and `fc N` run
 * lines of it again: those this line added are judged as shell text, older ones are unknown.
 */
const history: Handler = (cmd) => {
  const at = cmd.vals.indexOf('-s');
  if (at < 0) {
    cmd.add(['read_only'], 'history lists or edits the history');
    return;
  }
  const words = cmd.vals.slice(at + 1);
  if (words.some((word) => word === null)) cmd.judge.history.push('\u0000computed');
  else cmd.judge.history.push(words.join(' '));
  cmd.add(['read_only'], 'history -s adds a line to the history');
};

const fc: Handler = (cmd) => {
  if (cmd.vals.some((value) => value === '-l')) {
    cmd.add(['read_only'], 'fc -l lists the history');
    return;
  }
  const last = cmd.judge.history[cmd.judge.history.length - 1];
  const again = cmd.vals.includes('-s') || (cmd.vals.includes('-e') && cmd.vals[cmd.vals.indexOf('-e') + 1] === '-');
  if (!again) cmd.add(['interactive'], 'fc opens an editor on the history');
  if (last === undefined || last.startsWith('\u0000')) {
    cmd.add(['code_execution', 'unknown'], 'fc runs a line of the history again, which the policy cannot see');
    return;
  }
  cmd.add(['code_execution'], 'fc runs a line of the history again');
  cmd.script(last, 'fc (a line added by history -s)', undefined, 'current');
};

export const ECOSYSTEM_TOOLS: Record<string, Handler> = {
  hash,
  history,
  fc,
  // Installers of other ecosystems.
  cpanm: (cmd) => installs(cmd),
  cpan: (cmd) => installs(cmd),
  cpm: verbTool(/^install$/, /^$/),
  easy_install: (cmd) => installs(cmd),
  luarocks: verbTool(/^(install|build|make|download|upload|pack)$/, /^(list|search|show|doc|path|config|which|lint|help)$/),
  opam: verbTool(/^(install|reinstall|upgrade|update|pin|switch|init|repository|repo|source)$/, /^(list|show|search|info|config|var|env|help)$/),
  cabal: verbTool(/^(install|update|get|fetch|v2-install|new-install)$/, /^(list|info|check|help)$/),
  stack: verbTool(/^(install|update|setup|upgrade)$/, /^(list|ls|path|query|ide|help)$/),
  pdm: verbTool(/^(add|install|sync|update|lock|self)$/, /^(list|show|info|search|config|help)$/, (cmd, verb) => {
    if (verb !== 'publish') return false;
    cmd.add(['vcs_remote', 'networked'], 'pdm publish uploads a package');
    return true;
  }),
  pixi: verbTool(/^(add|install|update|upgrade|global|self-update|exec|x)$/, /^(list|info|search|tree|help)$/),
  volta: verbTool(/^(install|fetch|pin|setup)$/, /^(list|which|help)$/),
  rustup: (cmd) => {
    const verb = cmd.vals.find((value) => value !== null && !value.startsWith('-')) ?? '';
    if (/^(default|set|override)$/.test(verb)) {
      cmd.add(['host_escape'], `rustup ${verb} changes the toolchain for every project of this user (~/.rustup)`);
      return;
    }
    verbTool(/^(install|update|toolchain|target|component|self|init)$/, /^(show|which|doc|help|check|completions|run)$/)(cmd);
  },
  micromamba: verbTool(/^(install|create|update|self-update)$/, /^(list|info|search)$/),
  nimble: verbTool(/^(install|refresh|develop)$/, /^(list|search|path|dump)$/),
  raco: verbTool(/^(pkg)$/, /^(help|docs)$/),
  dub: verbTool(/^(fetch|add|upgrade)$/, /^(list|describe|search)$/),
  rebar3: verbTool(/^(get-deps|upgrade|update)$/, /^(tree|help)$/),
  // Network and publishing tools.
  mail: network('sends mail'),
  mailx: network('sends mail'),
  sendmail: network('sends mail'),
  msmtp: network('sends mail'),
  ssmtp: network('sends mail'),
  swaks: network('sends mail'),
  sendemail: network('sends mail'),
  svn: verbTool(/^$/, /^(status|st|info|log|diff|di|cat|list|ls|blame|help)$/, (cmd, verb) => {
    if (!/^(status|st|info|log|diff|di|cat|list|ls|blame|help|add|revert|resolve|cleanup)$/.test(verb) || cmd.vals.some((v) => v !== null && /:\/\//.test(v))) {
      cmd.add(/^(commit|ci|import|copy|cp|move|mv|delete|del|rm|mkdir|lock|propset)$/.test(verb) ? ['vcs_remote', 'networked'] : ['networked', 'mutating'],
          `svn ${verb} talks to the repository server`);
      cmd.argumentPaths();
      return true;
    }
    return false;
  }),
  hg: verbTool(/^$/, /^(status|st|log|diff|cat|annotate|blame|summary|sum|heads|branches|tags|identify|id|help|root|files|locate)$/, (cmd, verb) => {
    if (!/^(clone|pull|push|incoming|in|outgoing|out|fetch|serve)$/.test(verb)) return false;
    cmd.add(verb === 'push' ? ['vcs_remote', 'networked'] : ['networked', 'mutating'], `hg ${verb} talks to a remote`);
    cmd.argumentPaths();
    return true;
  }),
  fossil: verbTool(/^$/, /^(status|changes|timeline|diff|info|help|ls|finfo)$/, (cmd, verb) => {
    if (!/^(clone|pull|push|sync|update|up|open|server|ui|remote|remote-url)$/.test(verb)) return false;
    cmd.add(verb === 'push' || verb === 'sync' ? ['vcs_remote', 'networked'] : ['networked', 'mutating'], `fossil ${verb} talks to a remote or serves one`);
    cmd.argumentPaths();
    return true;
  }),
  bzr: publishes(/^(push|commit|send)$/),
  darcs: publishes(/^(push|send)$/),
  'yt-dlp': network('downloads from the network'),
  'youtube-dl': network('downloads from the network'),
  mosquitto_pub: network('publishes to a message broker'),
  twine: publishes(/^(upload|register)$/),
  flit: publishes(/^(publish)$/),
  serverless: publishes(/^(deploy|remove|rollback|invoke|publish)$/),
  sls: publishes(/^(deploy|remove|rollback|invoke|publish)$/),
  cdk: publishes(/^(deploy|destroy|bootstrap|import|watch)$/),
  sam: publishes(/^(deploy|delete|sync|publish)$/),
  amplify: publishes(/^(push|publish|add|delete)$/),
  // Servers (often as busybox applets): they listen on the network.
  httpd: network('serves files on the network'),
  telnetd: network('serves logins on the network'),
  ftpd: network('serves files on the network'),
  tftpd: network('serves files on the network'),
  tcpsvd: network('serves a program on the network'),
  udpsvd: network('serves a program on the network'),
  inetd: network('serves programs on the network'),
  // Code planted to run later, and configuration outside the workspace.
  'pre-commit': (cmd) => {
    const verb = cmd.vals.find((value) => value !== null && !value.startsWith('-')) ?? '';
    if (/^(install|install-hooks|init-templatedir)$/.test(verb)) cmd.add(['persistence'], `pre-commit ${verb} writes git hooks that run on later commits`);
    else if (/^(run|try-repo|autoupdate|gc|clean|migrate-config|validate-config|validate-manifest|sample-config)$/.test(verb)) {
      cmd.add(['code_execution', 'mutating', 'networked'], `pre-commit ${verb} fetches hook repositories and runs them`);
    } else cmd.add(['code_execution', 'mutating'], `pre-commit ${verb}`);
    cmd.argumentPaths();
  },
  husky: persists('sets git\'s hooks path (core.hooksPath) so its scripts run on later commits'),
  'simple-git-hooks': persists('writes git hooks that run on later commits'),
  lefthook: (cmd) => (/^(install|add)$/.test(cmd.vals[0] ?? '') ? persists('writes git hooks that run on later commits')(cmd) : verbTool(/^$/, /^(version|help|dump|validate)$/)(cmd)),
  overcommit: persists('writes git hooks that run on later commits'),
  direnv: (cmd) => {
    const verb = cmd.vals[0] ?? '';
    if (/^(allow|permit|grant|approve)$/.test(verb)) cmd.add(['persistence'], `direnv ${verb} trusts an .envrc, which then runs in the user's shell on every cd`);
    else if (/^(status|version|help|dump|--version|--help)$/.test(verb)) cmd.add(['read_only'], `direnv ${verb} only reads`);
    else cmd.add(['code_execution', 'unknown'], `direnv ${verb} runs an .envrc`);
  },
  chsh: hostConfig('changes the login shell of a user'),
  chfn: hostConfig('changes a user\'s account details'),
  'ssh-keygen': (cmd) => {
    const opt = cmd.vals.find((value) => value !== null && /^-[RHF]/.test(value));
    if (opt !== undefined && opt !== null) {
      cmd.add(['host_escape'], `ssh-keygen ${opt} reads or edits ~/.ssh/known_hosts`);
      return;
    }
    if (cmd.vals.some((value) => value === '-l' || value === '-y' || value === '-e' || value === '-i' || value === '-L')) {
      cmd.add(['read_only'], 'ssh-keygen prints a key');
      cmd.argumentPaths();
      return;
    }
    // A new key: where it is written decides (-f FILE; without one, ~/.ssh).
    const at = cmd.vals.indexOf('-f');
    if (at < 0) cmd.add(['host_escape'], 'ssh-keygen writes a key into ~/.ssh');
    else {
      cmd.add(['mutating'], 'ssh-keygen writes a key');
      const file = cmd.args[at + 1];
      if (file) cmd.path(file, 'write');
    }
  },
  'git-credential-store': hostConfig('reads or writes stored git credentials'),
  // Privilege.
  gosu: asUser,
  'su-exec': asUser,
  chpst: asUser,
  // Shells whose language is not bash.
  nu: foreignShell,
  nushell: foreignShell,
  xonsh: foreignShell,
  elvish: foreignShell,
  rc: foreignShell,
  es: foreignShell,
  ion: foreignShell,
  ysh: foreignShell,
  osh: foreignShell,
  oil: foreignShell,
  murex: foreignShell,
  closh: foreignShell,
  // Tools with a shell escape in their input language.
  dc: escapes({ code: ['-e', '--expression'], escape: /!([^\n]*)/, opaqueInput: true }),
  m4: escapes({ code: ['-D', '--define'], escape: /(?:esyscmd|syscmd)\s*\(\s*`?([^)']*)'?\s*\)/, opaqueInput: true }),
  groff: escapes({ code: [], escape: /^\s*\.\s*(?:sy|pi|open)\s+([^\n]*)/m, opaqueInput: false }),
  troff: escapes({ code: [], escape: /^\s*\.\s*(?:sy|pi)\s+([^\n]*)/m, opaqueInput: false }),
  nroff: escapes({ code: [], escape: /^\s*\.\s*(?:sy|pi)\s+([^\n]*)/m, opaqueInput: false }),
  gnuplot: escapes({ code: ['-e'], escape: /(?:system\s*\(?\s*["']|^\s*!|`)([^"'`\n]*)/m, opaqueInput: true }),
  octave: escapes({ code: ['--eval'], escape: /(?:system|unix|shell_cmd|dos|popen)\s*\(\s*["']([^"']*)/, opaqueInput: true }),
  'octave-cli': escapes({ code: ['--eval'], escape: /(?:system|unix|shell_cmd|dos|popen)\s*\(\s*["']([^"']*)/, opaqueInput: true }),
  matlab: escapes({ code: ['-r', '-batch'], escape: /(?:system|unix|dos|!)\s*\(?\s*["']?([^"'\n)]*)/, opaqueInput: true }),
  maxima: escapes({ code: ['--batch-string', '-r'], escape: /system\s*\(\s*"([^"]*)/, opaqueInput: true }),
  latexmk: TEX_ESCAPES,
  sqlite3: withEscapes({ code: ['-cmd'], escape: /(?:^|;)\s*\.(?:shell|system)\s+([^\n]*)/m, opaqueInput: false, allArgs: true }, SYSTEM_TOOLS.sqlite3!),
  duckdb: withEscapes({ code: ['-c', '-cmd', '-s'], escape: /(?:^|;)\s*\.(?:shell|system)\s+([^\n]*)/m, opaqueInput: false, allArgs: true }, SYSTEM_TOOLS.duckdb!),
  bc: escapes({ code: [], escape: /^\s*!([^\n]*)/m, opaqueInput: false }),
};
