/**
 * Programs judged by name: harmless informational commands, build and test tools, editors and
 * other terminal programs, privilege escalation, host services, container engines.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { literal, litWord } from '../words';

function simple(categories: Parameters<Cmd['add']>[0], why: string, paths: 'read' | 'write' | 'none' = 'read'): Handler {
  return (cmd) => {
    cmd.add(categories, `${cmd.prog} ${why}`);
    if (paths !== 'none') cmd.args.forEach((word) => cmd.maybePath(word, paths));
  };
}

const INFO = [
  'pwd', 'true', 'false', ':', 'whoami', 'id', 'uname', 'which', 'type', 'whereis', 'hash', 'seq', 'yes', 'sleep',
  'expr', 'bc', 'dc', 'factor', 'nproc', 'arch', 'locale', 'tty', 'groups', 'logname', 'uptime', 'free', 'lsb_release', 'sw_vers', 'getconf', 'tput',
  'clear', 'help', 'history', 'jobs', 'wait', 'umask', 'ulimit', 'exit', 'return', 'break', 'continue', 'let', 'test', '[', '[[', 'cal',
      'dirs', 'times', 'ps', 'pgrep', 'pidof', 'lscpu', 'lsblk', 'lsusb', 'lspci',
  'vmstat', 'iostat', 'w', 'who', 'last', 'users', 'tz', 'info', 'apropos', 'whatis', 'cowsay', 'figlet', 'numfmt', 'shuf', 'tsort', 'ptx',
  'md5pass', 'uuidgen', 'mkpasswd', 'getent', 'stty', 'unset', 'declare', 'typeset', 'local', 'readonly', 'export', 'disown', 'bg', 'fg',
  'enable', 'caller', 'suspend', 'logout', 'envsubst', 'nm', 'objdump', 'readelf', 'ldd', 'size', 'otool', 'lipo',
];

const DEV_TOOLS = [
  'cmake', 'ninja', 'meson', 'bazel', 'bazelisk', 'buck', 'scons', 'ant', 'sbt', 'lein', 'mix', 'rebar3', 'stack', 'cabal',
  'gcc', 'g++', 'cc', 'c++', 'clang', 'clang++', 'ld', 'as', 'rustc', 'javac', 'java', 'kotlinc', 'scalac', 'swiftc', 'swift', 'zig', 'nim',
  'tsc', 'esbuild', 'webpack', 'vite', 'rollup', 'parcel', 'babel', 'swc', 'jest', 'vitest', 'mocha', 'ava', 'pytest', 'py.test', 'tox', 'nox',
  'ruff', 'black', 'isort', 'flake8', 'pylint', 'mypy', 'pyright', 'eslint', 'prettier', 'biome', 'stylelint', 'rubocop', 'rspec', 'rake',
  'phpunit', 'phpstan', 'psalm', 'flutter', 'dart', 'xcodebuild', 'gofmt', 'goimports', 'golangci-lint', 'staticcheck', 'clippy-driver',
  'shellcheck', 'shfmt', 'hadolint', 'yamllint', 'markdownlint', 'cspell', 'codespell', 'pre-commit', 'coverage', 'nyc', 'c8', 'turbo', 'nx',
  'lerna', 'tsup', 'unbuild', 'pkgroll', 'protoc', 'buf', 'sqlc', 'alembic', 'django-admin', 'manage.py', 'flask', 'uvicorn', 'gunicorn',
  'hugo', 'jekyll', 'mkdocs', 'sphinx-build', 'pandoc', 'latexmk', 'pdflatex', 'xelatex', 'lualatex', 'convert', 'magick', 'ffmpeg',
  'sqlite3', 'diff3', 'git-lfs', 'pytype', 'jupyter', 'ipython', 'nbconvert', 'cython', 'maturin', 'wasm-pack', 'trunk', 'elm',
  'ocaml', 'dune', 'opam-exec',
];

const TERMINAL_UIS = [
  'top', 'htop', 'btop', 'atop', 'glances', 'mc', 'ranger', 'nnn', 'lf', 'fzf', 'dialog', 'whiptail', 'tig', 'lazygit', 'k9s', 'iftop', 'nethogs',
  'ncdu', 'less-interactive', 'minicom', 'irssi', 'weechat', 'mutt', 'neomutt', 'lynx', 'w3m', 'links', 'elinks',
];

const PRIVILEGE = [
  'run0', 'setpriv', 'capsh', 'setcap', 'sudoedit', 'visudo', 'passwd', 'chpasswd', 'useradd', 'userdel', 'usermod', 'groupadd', 'groupdel', 'adduser',
  'deluser', 'newgrp', 'umount', 'modprobe', 'insmod', 'rmmod', 'iptables', 'ip6tables', 'nft', 'ufw', 'setenforce', 'swapon', 'swapoff', 'fdisk',
  'parted', 'losetup', 'dmsetup', 'cryptsetup', 'ldconfig', 'update-alternatives', 'mknod', 'chcon', 'dscl', 'sysadminctl', 'spctl', 'csrutil',
  'nvram', 'kextload', 'launchd', 'fakeroot-ng', 'machinectl', 'systemd-nspawn', 'bwrap', 'firejail',
];
const SYSTEM = [
  'xkill', 'shutdown', 'telinit', 'init', 'reboot', 'halt', 'poweroff', 'launchctl', 'ionice-set', 'logger', 'open', 'xdg-open', 'pbcopy', 'pbpaste',
  'xclip', 'xsel', 'wl-copy', 'wl-paste', 'code', 'cursor', 'notify-send', 'say', 'networksetup', 'scutil', 'pmset', 'caffeinate-all', 'iwconfig',
  'journalctl', 'dmesg', 'dbus-send', 'busctl', 'gdbus', 'qdbus', 'gio', 'kioclient', 'kioclient5', 'kde-open', 'gnome-open', 'tcpdump', 'dtrace', 'dtruss', 'lsof', 'fuser',
];
const PERSISTENCE = ['crontab', 'at', 'batch', 'atq', 'systemd-run'];
const CONTAINERS = [
  'docker', 'docker-compose', 'podman', 'podman-compose', 'nerdctl', 'buildah', 'buildctl', 'skopeo', 'lxc', 'lxd', 'incus', 'ctr', 'crictl', 'kind',
  'minikube', 'k3d', 'colima', 'lima', 'limactl', 'vagrant', 'multipass', 'virsh', 'virt-install', 'qemu-system-x86_64', 'qemu-system-aarch64',
  'qemu-img', 'firecracker', 'orb', 'orbctl', 'devcontainer', 'container-use', 'cu',
];

/** Build and test tools run project code; their output options write where they say. */
const devTool: Handler = (cmd) => {
  cmd.add(['code_execution', 'mutating'], `${cmd.prog} builds, tests or runs project code`);
  cmd.argumentPaths();
};

const printInfo: Handler = (cmd) => {
  cmd.add(['read_only'], `${cmd.prog} only prints`);
  cmd.args.forEach((word) => cmd.maybePath(word, 'read'));
};

const sqlite: Handler = (cmd) => {
  cmd.add(['mutating'], `${cmd.prog} opens a database`);
  cmd.args.forEach((word) => cmd.maybePath(word, 'write'));
  for (const value of cmd.vals) {
    if (value === null) continue;
    if (/(^|\n|;)\s*\.(shell|system|once|output|import|load|read|open|save|backup|restore|excel|cd)\b/.test(value) ||
        /\bload_extension\s*\(|\bATTACH\b|\bwritefile\s*\(|\breadfile\s*\(/i.test(value) ||
        // duckdb: COPY … TO/FROM a file, read_csv('/etc/…'), EXPORT DATABASE, INSTALL/LOAD of extensions (httpfs).
        /\bCOPY\b[\s\S]*\b(TO|FROM)\b|\bread_\w+\s*\(|\bEXPORT\s+DATABASE\b|\b(INSTALL|LOAD)\s+\w|\bglob\s*\(|'[a-z0-9]+:\/\//i.test(value)) {
      cmd.add(['code_execution', 'unknown'], `${cmd.prog} dot-commands or functions reach outside the database (${value.slice(0, 40)})`);
    }
  }
  const ops = cmd.args.filter((word) => !(literal(word) ?? '-').startsWith('-'));
  if (ops.length <= 1 && cmd.stdin.kind === 'inherit') cmd.add(['interactive'], `${cmd.prog} without SQL is an interactive shell`);
  if (cmd.stdin.kind === 'data' && cmd.stdin.taint.length > 0) cmd.add(['opaque_code'], `${cmd.prog} runs downloaded or decoded SQL`);
};

/**
 * Database clients: the server is on the network. Client commands run local programs: `\\!`,
 * mysql's `system`, psql's `\\o |cmd` and `\\copy … program 'cmd'`, `--pager`, `-o '|cmd'`.
 */
const dbClient: Handler = (cmd) => {
  cmd.add(['networked'], `${cmd.prog} connects to a database server`);
  const hasQuery = cmd.vals.some((value) => value !== null && /^(-c|-e|--command|--execute|-f|--file|--eval)(=.*)?$/.test(value));
  if (!hasQuery && cmd.stdin.kind === 'inherit') cmd.add(['interactive'], `${cmd.prog} without a query is interactive`);
  const opts = parseOpts(cmd.args, 'cefoPhpUudDv', [
    'command', 'execute', 'file', 'output', 'pager', 'host', 'port', 'user', 'dbname', 'database', 'defaults-file', 'defaults-extra-file',
    'init-command', 'eval', 'set', 'variable',
  ]);
  for (const pager of opts.values.get('pager') ?? []) cmd.runs(pager, `${cmd.prog} --pager`);
  for (const file of [...(opts.values.get('f') ?? []), ...(opts.values.get('file') ?? []), ...(opts.values.get('defaults-file') ?? []),
      ...(opts.values.get('defaults-extra-file') ?? [])]) cmd.path(file, 'read');
  for (const out of [...(cmd.prog === 'psql' ? opts.values.get('o') ?? [] : []), ...(opts.values.get('output') ?? [])]) {
    const text = literal(out);
    if (text !== null && text.startsWith('|')) cmd.runs(litWord(text.slice(1)), `${cmd.prog} -o |`);
    else cmd.path(out, 'write');
  }
  for (const value of cmd.vals) {
    if (value === null) continue;
    for (const found of value.matchAll(/(?:^|\n|;)\s*(?:\\!|system\s)\s*([^\n;]*)/g)) cmd.runs(litWord(found[1]!), `${cmd.prog} \\!`);
    for (const found of value.matchAll(/\\o\s*\|\s*([^\n]*)/g)) cmd.runs(litWord(found[1]!), `${cmd.prog} \\o |`);
    for (const found of value.matchAll(/\bprogram\s+'((?:[^']|'')*)'/gi)) cmd.runs(litWord(found[1]!.replace(/''/g, "'")), `${cmd.prog} copy … program`);
  }
};

const persistence: Handler = (cmd) => {
  if (cmd.vals.includes('-l') || cmd.prog === 'atq') cmd.add(['read_only'], `${cmd.prog} -l lists jobs`);
  else cmd.add(['persistence'], `${cmd.prog} schedules commands to run later, outside the policy`);
};

/**
 * Groups of names that share a handler, then single entries. Filled by assignment into an object
 * without a prototype: at a cold start V8 does that in a fifth of the time Object.fromEntries or
 * spreading tables into one literal takes (~2 ms for these ~380 names).
 */
function table(groups: [names: readonly string[], handler: Handler][], single: Record<string, Handler>): Record<string, Handler> {
  const out = Object.create(null) as Record<string, Handler>;
  for (const [names, handler] of groups) for (const name of names) out[name] = handler;
  return Object.assign(out, single);
}

export const SYSTEM_TOOLS: Record<string, Handler> = table(
  [
    [INFO, printInfo],
    [DEV_TOOLS, devTool],
    [TERMINAL_UIS, simple(['interactive'], 'needs a terminal')],
    [PRIVILEGE, simple(['privilege'], 'changes privileges or the host system')],
    [SYSTEM, simple(['system'], 'acts on host processes, devices or services')],
    [PERSISTENCE, persistence],
    [CONTAINERS, simple(['container'], 'drives a container or VM engine, which can reach any host path')],
  ],
  {
    sqlite3: sqlite,
    duckdb: sqlite,
    psql: dbClient,
    mysql: dbClient,
    mariadb: dbClient,
    mongo: dbClient,
    mongosh: dbClient,
    'redis-cli': dbClient,
    irb: simple(['interactive'], 'is a REPL'),
    mkfs: simple(['privilege'], 'formats a device', 'write'),
    'mkfs.ext4': simple(['privilege'], 'formats a device', 'write'),
    diskutil: simple(['privilege'], 'changes disks', 'write'),
  },
);
