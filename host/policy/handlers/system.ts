/**
 * Programs judged by name: harmless informational commands, build and test tools, editors and
 * other terminal programs, privilege escalation, host services, container engines.
 */
import type { Handler } from '../classify';
import type { Cmd } from '../command';
import { literal } from '../words';

function simple(categories: Parameters<Cmd['add']>[0], why: string, paths: 'read' | 'write' | 'none' = 'read'): Handler {
  return (c) => {
    c.add(categories, `${c.prog} ${why}`);
    if (paths !== 'none') c.args.forEach((w) => c.maybePath(w, paths));
  };
}

const INFO = [
  'pwd', 'true', 'false', ':', 'whoami', 'id', 'uname', 'printenv', 'which', 'type', 'whereis', 'hash', 'seq', 'yes', 'sleep',
  'expr', 'bc', 'dc', 'factor', 'nproc', 'arch', 'locale', 'tty', 'groups', 'logname', 'uptime', 'free', 'lsb_release', 'sw_vers', 'getconf', 'tput',
  'clear', 'help', 'history', 'jobs', 'wait', 'umask', 'ulimit', 'exit', 'return', 'break', 'continue', 'shift', 'let', 'test', '[', '[[', 'cal', 'dirs', 'times', 'ps', 'pgrep', 'pidof', 'lscpu', 'lsblk', 'lsusb', 'lspci',
  'vmstat', 'iostat', 'w', 'who', 'last', 'users', 'tz', 'man', 'info', 'apropos', 'whatis', 'cowsay', 'figlet', 'numfmt', 'shuf', 'tsort', 'ptx',
  'md5pass', 'uuidgen', 'mkpasswd', 'getent', 'stty', 'set', 'unset', 'declare', 'typeset', 'local', 'readonly', 'export', 'disown', 'bg', 'fg',
  'enable', 'caller', 'compgen', 'complete', 'suspend', 'logout', 'envsubst', 'nm', 'objdump', 'readelf', 'ldd', 'size', 'otool', 'lipo',
];

const DEV_TOOLS = [
  'make', 'gmake', 'cmake', 'ninja', 'meson', 'bazel', 'bazelisk', 'buck', 'scons', 'ant', 'sbt', 'lein', 'mix', 'rebar3', 'stack', 'cabal',
  'gcc', 'g++', 'cc', 'c++', 'clang', 'clang++', 'ld', 'as', 'rustc', 'javac', 'java', 'kotlinc', 'scalac', 'swiftc', 'swift', 'zig', 'nim',
  'tsc', 'esbuild', 'webpack', 'vite', 'rollup', 'parcel', 'babel', 'swc', 'jest', 'vitest', 'mocha', 'ava', 'pytest', 'py.test', 'tox', 'nox',
  'ruff', 'black', 'isort', 'flake8', 'pylint', 'mypy', 'pyright', 'eslint', 'prettier', 'biome', 'stylelint', 'rubocop', 'rspec', 'rake',
  'phpunit', 'phpstan', 'psalm', 'flutter', 'dart', 'xcodebuild', 'gofmt', 'goimports', 'golangci-lint', 'staticcheck', 'clippy-driver',
  'shellcheck', 'shfmt', 'hadolint', 'yamllint', 'markdownlint', 'cspell', 'codespell', 'pre-commit', 'coverage', 'nyc', 'c8', 'turbo', 'nx',
  'lerna', 'tsup', 'unbuild', 'pkgroll', 'protoc', 'buf', 'sqlc', 'alembic', 'django-admin', 'manage.py', 'flask', 'uvicorn', 'gunicorn',
  'hugo', 'jekyll', 'mkdocs', 'sphinx-build', 'pandoc', 'latexmk', 'pdflatex', 'xelatex', 'lualatex', 'convert', 'magick', 'ffmpeg',
  'sqlite3', 'duckdb', 'diff3', 'git-lfs', 'pytype', 'jupyter', 'ipython', 'nbconvert', 'cython', 'maturin', 'wasm-pack', 'trunk', 'elm',
  'ocaml', 'dune', 'opam-exec', 'gdb', 'lldb', 'valgrind', 'perf', 'hyperfine', 'time',
];

const EDITORS = ['vi', 'vim', 'nvim', 'nano', 'pico', 'emacs', 'joe', 'micro', 'ed', 'ex', 'kak', 'hx', 'helix', 'mcedit', 'jed', 'view'];
const TERMINAL_UIS = ['top', 'htop', 'btop', 'atop', 'glances', 'tmux', 'screen', 'mc', 'ranger', 'nnn', 'lf', 'fzf', 'dialog', 'whiptail', 'tig', 'lazygit', 'k9s', 'vimdiff', 'watch', 'iftop', 'nethogs', 'ncdu', 'less-interactive', 'minicom', 'irssi', 'weechat', 'mutt', 'neomutt', 'lynx', 'w3m', 'links', 'elinks'];

const PRIVILEGE = ['sudo', 'su', 'doas', 'pkexec', 'runuser', 'setpriv', 'chroot', 'nsenter', 'unshare', 'capsh', 'setcap', 'sudoedit', 'visudo', 'passwd', 'chpasswd', 'useradd', 'userdel', 'usermod', 'groupadd', 'groupdel', 'adduser', 'deluser', 'newgrp', 'sg', 'umount', 'modprobe', 'insmod', 'rmmod', 'iptables', 'ip6tables', 'nft', 'ufw', 'setenforce', 'swapon', 'swapoff', 'fdisk', 'parted', 'losetup', 'dmsetup', 'cryptsetup', 'ldconfig', 'update-alternatives', 'mknod', 'chcon', 'dscl', 'sysadminctl', 'spctl', 'csrutil', 'nvram', 'kextload', 'launchd', 'fakeroot-ng', 'machinectl', 'systemd-nspawn', 'bwrap', 'firejail'];
const SYSTEM = ['xkill', 'shutdown', 'telinit', 'init', 'reboot', 'halt', 'poweroff', 'launchctl', 'renice', 'ionice-set', 'logger', 'open', 'xdg-open', 'pbcopy', 'pbpaste', 'xclip', 'xsel', 'wl-copy', 'wl-paste', 'code', 'cursor', 'notify-send', 'say', 'networksetup', 'scutil', 'pmset', 'caffeinate-all', 'iwconfig', 'journalctl', 'dmesg', 'tcpdump', 'strace', 'ltrace', 'dtrace', 'dtruss', 'lsof', 'fuser'];
const PERSISTENCE = ['crontab', 'at', 'batch', 'atq', 'systemd-run'];
const CONTAINERS = ['docker', 'docker-compose', 'podman', 'podman-compose', 'nerdctl', 'buildah', 'buildctl', 'skopeo', 'lxc', 'lxd', 'incus', 'ctr', 'crictl', 'kind', 'minikube', 'k3d', 'colima', 'lima', 'limactl', 'vagrant', 'multipass', 'virsh', 'virt-install', 'qemu-system-x86_64', 'qemu-system-aarch64', 'qemu-img', 'firecracker', 'orb', 'orbctl', 'devcontainer', 'container-use', 'cu'];

const printInfo: Handler = (c) => {
  c.add(['read_only'], `${c.prog} only prints`);
  c.args.forEach((w) => c.maybePath(w, 'read'));
};

const sqlite: Handler = (c) => {
  c.add(['mutating'], `${c.prog} opens a database`);
  c.args.forEach((w) => c.maybePath(w, 'write'));
  for (const v of c.vals) {
    if (v === null) continue;
    if (/(^|\n|;)\s*\.(shell|system|once|output|import|load|read|open|save|backup|restore|excel|cd)\b/.test(v) || /\bload_extension\s*\(|\bATTACH\b|\bwritefile\s*\(|\breadfile\s*\(/i.test(v)) {
      c.add(['code_execution', 'unknown'], `${c.prog} dot-commands or functions reach outside the database (${v.slice(0, 40)})`);
    }
  }
  const ops = c.args.filter((w) => !(literal(w) ?? '-').startsWith('-'));
  if (ops.length <= 1 && c.stdin.kind === 'inherit') c.add(['interactive'], `${c.prog} without SQL is an interactive shell`);
  if (c.stdin.kind === 'data' && c.stdin.taint.length > 0) c.add(['opaque_code'], `${c.prog} runs downloaded or decoded SQL`);
};

const dbClient: Handler = (c) => {
  c.add(['networked'], `${c.prog} connects to a database server`);
  const hasQuery = c.vals.some((v) => v !== null && /^(-c|-e|--command|--execute|-f|--file|--eval)$/.test(v));
  if (!hasQuery && c.stdin.kind === 'inherit') c.add(['interactive'], `${c.prog} without a query is interactive`);
  for (const v of c.vals) if (v !== null && /(^|\n)\s*\\!/.test(v)) c.add(['code_execution', 'unknown'], `${c.prog} \\! runs shell commands`);
};

const editor: Handler = (c) => {
  if (c.prog === 'emacs' && c.vals.some((v) => v === '--batch' || v === '-batch' || v === '--script')) {
    c.add(['code_execution', 'mutating'], 'emacs --batch runs elisp');
  } else if ((c.prog === 'vim' || c.prog === 'nvim' || c.prog === 'vi' || c.prog === 'ex') && c.vals.some((v) => v === '-es' || v === '-Es' || v === '--headless' || v === '-e' && c.vals.includes('-s'))) {
    c.add(['code_execution', 'mutating'], `${c.prog} runs in batch mode`);
  } else c.add(['interactive', 'mutating'], `${c.prog} is an interactive editor`);
  for (const v of c.vals) if (v !== null && /^(\+|-c)/.test(v) && /!|system|:!|shell/.test(v)) c.add(['code_execution', 'unknown'], `${c.prog} command runs shell commands`);
  c.args.forEach((w) => c.maybePath(w, 'write'));
};

export const SYSTEM_TOOLS: Record<string, Handler> = {
  ...Object.fromEntries(INFO.map((p) => [p, printInfo])),
  ...Object.fromEntries(DEV_TOOLS.map((p) => [p, simple(['code_execution', 'mutating'], 'builds, tests or runs project code')])),
  ...Object.fromEntries(EDITORS.map((p) => [p, editor])),
  ...Object.fromEntries(TERMINAL_UIS.map((p) => [p, simple(['interactive'], 'needs a terminal')])),
  ...Object.fromEntries(PRIVILEGE.map((p) => [p, simple(['privilege'], 'changes privileges or the host system')])),
  ...Object.fromEntries(SYSTEM.map((p) => [p, simple(['system'], 'acts on host processes, devices or services')])),
  ...Object.fromEntries(PERSISTENCE.map((p) => [p, (c: Cmd) => (c.vals.includes('-l') || c.prog === 'atq' ? c.add(['read_only'], `${c.prog} -l lists jobs`) : c.add(['persistence'], `${c.prog} schedules commands to run later, outside the policy`))])),
  ...Object.fromEntries(CONTAINERS.map((p) => [p, simple(['container'], 'drives a container or VM engine, which can reach any host path')])),
  sqlite3: sqlite,
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
};
