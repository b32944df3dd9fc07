/**
 * The sandbox of `avfs proxy exec` (docs/exec.md), tested from the attacker's side: a script the
 * policy cannot read, allowed to run, tries what the issue's `evil.py` did. Real bubblewrap, real
 * FUSE mounts, a real host on a real socket, and an ordinary user made with useradd.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { spawn, type StdioOptions } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, realpathSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExecutionEnvelope } from '../../host/protocol/exec';
import type { ApprovalRequest } from '../../host/protocol/exec';
import { TOOL_VARS } from '../../host/sandbox/toolFolders';
import { alive, CLI, runCli, type RunOptions } from '../helpers';
import { sh, waitFor } from '../fuse/helpers';
import { client, startHost, type HostProcess } from '../daemon/helpers';

/** A fake user's world outside /tmp (which every run sees as its own, empty): a home with secrets, the avfs home, a place outside the vault. */
function world(prefix: string) {
  const base = mkdtempSync(join('/var/tmp', prefix));
  const home = join(base, 'home');
  const avfs = join(base, 'avfs');
  const outside = join(base, 'outside');
  for (const d of [home, join(home, '.ssh'), avfs, outside]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, 'notes.txt'), 'SECRET-HOME\n');
  writeFileSync(join(home, '.ssh', 'id_rsa'), 'SECRET-SSH\n');
  writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Sandbox Test\n\temail = sandbox@example.invalid\n');
  const rules = '{"version":1,"rules":[]}\n';
  writeFileSync(join(avfs, 'policy.json'), rules);
  return { base, home, avfs, outside, rules, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}
type World = ReturnType<typeof world>;

/** A loopback listener on the host's network that answers HTTP and counts who reached it. */
async function listener(): Promise<{ server: Server; port: number; hits: () => number }> {
  let hits = 0;
  const server = createServer((s) => {
    hits++;
    s.on('error', () => undefined); // a probe that connects and leaves at once
    s.end('HTTP/1.0 200 OK\r\nContent-Length: 5\r\n\r\nhello');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  return { server, port: typeof addr === 'object' && addr ? addr.port : 0, hits: () => hits };
}

/** Each probe prints name=yes when it worked, name=no when the sandbox stopped it. */
function evilScript(w: World, port: number): string {
  const probes: Record<string, string> = {
    read_home_secret: 'cat "$HOME/notes.txt"',
    read_home_secret_by_path: `cat '${w.home}/notes.txt'`,
    read_ssh_key: `cat '${w.home}/.ssh/id_rsa'`,
    list_ssh: `ls '${w.home}/.ssh' | grep -q id_rsa`,
    read_shadow: 'cat /etc/shadow',
    write_outside: `echo pwned > '${w.outside}/pwned'`,
    write_system: 'echo pwned > /etc/avfs-sandbox-pwned',
    see_vaults: `ls -A '${w.avfs}' | grep -v '^mnt$' | grep -q .`,
    see_rules: `cat '${w.avfs}/policy.json'`,
    see_host_socket: `test -S '${w.avfs}/host.sock'`,
    loopback: `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${port}), timeout=2)'`,
    read_gitconfig: 'grep -q "Sandbox Test" "$HOME/.gitconfig"',
    write_private_tmp: 'echo inside > /tmp/avfs-sandbox-inside && cat /tmp/avfs-sandbox-inside',
    write_vault: 'echo proof > proof.txt',
  };
  const lines = Object.entries(probes).map(([k, v]) => `if ( ${v} ) >/dev/null 2>&1; then echo ${k}=yes; else echo ${k}=no; fi`);
  // Then try to change the rules (inside, the avfs home is an empty place of the run's own).
  lines.push(`mkdir -p '${w.avfs}' 2>/dev/null; echo '{"version":1,"rules":[{"id":"x","category":"host_escape","action":"allow"}]}' > '${w.avfs}/policy.json' 2>/dev/null; true`);
  return lines.join('\n') + '\n';
}

function probesOf(stdout: string): Record<string, string> {
  return Object.fromEntries(stdout.split('\n').filter((l) => l.includes('=')).map((l) => l.split('=') as [string, string]));
}

/** What a contained run shows: nothing of the secrets, the system, the avfs home or the network. */
function assertContained(p: Record<string, string>, w: World): void {
  const expected = {
    read_home_secret: 'no',
    read_home_secret_by_path: 'no',
    read_ssh_key: 'no',
    list_ssh: 'no',
    read_shadow: 'no',
    write_outside: 'no',
    write_system: 'no',
    see_vaults: 'no',
    see_rules: 'no',
    see_host_socket: 'no',
    loopback: 'no',
    read_gitconfig: 'yes',
    write_private_tmp: 'yes',
    write_vault: 'yes',
  };
  assert.deepEqual(p, expected);
  assert.equal(existsSync(join(w.outside, 'pwned')), false);
  assert.equal(existsSync('/etc/avfs-sandbox-pwned'), false);
  assert.equal(existsSync('/tmp/avfs-sandbox-inside'), false, 'the run\'s /tmp was its own');
  assert.equal(readFileSync(join(w.avfs, 'policy.json'), 'utf8'), w.rules, 'the rules file is untouched');
}

const BUILD = [
  'set -e',
  'git init -q . && git add -A && git commit -qm init && git log --format=%an',
  'npm init -y >/dev/null && npm pkg set scripts.build="node -e \\"require(\'fs\').writeFileSync(\'built.txt\', \'npm-ok\')\\"" && npm run -s build && cat built.txt && echo',
  'python3 -c \'open("py.txt", "w").write("py")\' && python3 -m compileall -q . && echo python-ok',
  'printf "int main(void) { return 0; }\\n" > hello.c && printf "hello: hello.c\\n\\tcc -o hello hello.c\\n" > Makefile && make -s && ./hello && echo build-ok',
].join('\n') + '\n';

const BOMB = 'b() { b | b & }\nb\nsleep 60\n';
const FLOOD = 'head -c 1073741824 /dev/zero\n';

function envelopeOf(stdout: string): ExecutionEnvelope {
  return ExecutionEnvelope.parse(JSON.parse(stdout));
}

/** A program started with these descriptors (fd 1 a pipe), once it has ended: its exit code and what it wrote to its standard output. */
function spawned(file: string, args: string[], env: NodeJS.ProcessEnv, stdio: StdioOptions): Promise<{ code: number | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: out }));
  });
}

/** The CLI with a describe block's options (set in its before()), and `proxy exec --json` in vault main with its envelope. */
function cliIn(opts: () => RunOptions) {
  const cli = (args: string[], input?: string) => runCli(args, { ...opts(), ...(input !== undefined ? { input } : {}) });
  const exec = async (args: string[]) => {
    const r = await cli(['--json', '--vault', 'main', 'proxy', 'exec', ...args]);
    return { code: r.code, env: envelopeOf(r.stdout), stderr: r.stderr };
  };
  return { cli, exec };
}

describe('sandbox: workspace runs from a one-shot CLI, as root', () => {
  let w: World;
  let l: Awaited<ReturnType<typeof listener>>;
  let opts: RunOptions;
  const { cli, exec } = cliIn(() => opts);

  before(async () => {
    w = world('avfs-sandbox-');
    l = await listener();
    opts = { home: w.avfs, env: { HOME: w.home, AVFS_NO_HOST: '1', npm_config_update_notifier: 'false' } };
    assert.equal((await cli(['vault', 'create', 'main'])).code, 0);
    assert.equal((await cli(['--vault', 'main', 'write', '/evil.sh'], evilScript(w, l.port))).code, 0);
    assert.equal((await cli(['--vault', 'main', 'write', '/build.sh'], BUILD)).code, 0);
  });
  after(async () => {
    // The kept mount's server: unmounted, it leaves (and writes its record) before the home goes.
    const mounts = (JSON.parse((await cli(['--json', 'mounts'])).stdout) as { mounts?: Array<{ pid: number }> }).mounts ?? [];
    await sh('bash', ['-c', `for m in $(grep -o "${w.avfs}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    for (const m of mounts) await waitFor(() => !alive(m.pid), 10_000);
    l.server.close();
    w.cleanup();
  });

  test('an allowed script cannot read the home\'s secrets, write outside the vault, see the avfs home or reach a loopback listener', async () => {
    const { code, env } = await exec(['--', 'bash', 'evil.sh']);
    assert.equal(code, 0, env.result.stderr);
    assert.equal(env.result.decision?.action, 'allow_with_checkpoint');
    assertContained(probesOf(env.result.stdout), w);
    assert.equal(l.hits(), 0);
    assert.deepEqual(env.result.changed_files, ['/proof.txt']);
    const s = env.result.sandbox!;
    assert.equal(env.request.sandbox, 'workspace');
    assert.equal(s.mode, 'workspace');
    assert.match(s.tool ?? '', /^bubblewrap /);
    assert.equal(s.network, 'none');
    assert.equal(s.home, w.home);
    assert.deepEqual(s.home_read_only, [join(w.home, '.gitconfig')]);
    assert.equal(s.writable[0], env.result.mountpoint);
    assert.deepEqual(s.violations, []);
  });

  test('a root run cannot change the kernel\'s settings (/proc/sys: the host\'s name, core_pattern) nor pull its triggers', async () => {
    // Each write puts back the value read, so a sandbox that failed changes nothing on the host.
    const script = [
      'for f in kernel/hostname kernel/core_pattern kernel/domainname; do v=$(cat /proc/sys/$f); if (printf "%s\\n" "$v" > /proc/sys/$f) 2>/dev/null; then echo $f=written; else echo $f=refused; fi; done',
      'if [ -e /proc/sysrq-trigger ] && (printf "" > /proc/sysrq-trigger) 2>/dev/null; then echo sysrq=written; else echo sysrq=refused; fi',
      'grep -q "^kernel" /proc/sys/kernel/ostype || cat /proc/sys/kernel/ostype',
    ].join('\n') + '\n';
    assert.equal((await cli(['--vault', 'main', 'write', '/sysctl.sh'], script)).code, 0);
    const host = readFileSync('/proc/sys/kernel/hostname', 'utf8');
    const { code, env } = await exec(['--', 'bash', 'sysctl.sh']);
    assert.equal(code, 0, env.result.stderr);
    assert.equal(env.result.decision?.action, 'allow_with_checkpoint');
    assert.deepEqual(probesOf(env.result.stdout), { 'kernel/hostname': 'refused', 'kernel/core_pattern': 'refused', 'kernel/domainname': 'refused', sysrq: 'refused' });
    assert.equal(readFileSync('/proc/sys/kernel/hostname', 'utf8'), host);
  });

  test('a time-out gives the sandboxed command its grace (SIGTERM reaches it, not bwrap); signals from inside reach the run\'s own processes alone', async () => {
    // Outside the run: a process of the same user that an escaped signal would end.
    const sentinel = spawn('sleep', ['60'], { stdio: 'ignore' });
    try {
      const script = [
        'import os, signal, time',
        `SENTINEL = ${sentinel.pid}`,
        'try:',
        '    os.kill(SENTINEL, 0); print("see_outside=yes")',
        'except OSError:',
        '    print("see_outside=no")',
        // Every process it may signal: inside its pid namespace, nothing but its own.
        'signal.signal(signal.SIGTERM, signal.SIG_IGN)',
        'for sig in (signal.SIGTERM, signal.SIGKILL):',
        '    try: os.kill(-1, sig)',
        '    except ProcessLookupError: pass',
        'print("after_kill_all=yes", flush=True)',
        'def graceful(*_):',
        '    open("graceful.txt", "w").write("ended in its grace\\n")',
        '    os._exit(3)',
        'signal.signal(signal.SIGTERM, graceful)',
        'while True: time.sleep(0.05)',
      ].join('\n') + '\n';
      assert.equal((await cli(['--vault', 'main', 'write', '/signals.py'], script)).code, 0);
      const { env } = await exec(['--timeout', '1500', '--grace', '3000', '--', 'python3', 'signals.py']);
      assert.equal(env.result.state, 'timed_out', env.result.stderr);
      assert.deepEqual(probesOf(env.result.stdout), { see_outside: 'no', after_kill_all: 'yes' });
      // The command's own handler ran in its grace and chose its exit status.
      assert.equal(env.result.exit_code, 3);
      assert.ok(env.result.duration_ms < 4000, `${env.result.duration_ms} ms`);
      assert.equal((await cli(['--vault', 'main', 'cat', '/graceful.txt'])).stdout, 'ended in its grace\n');
      assert.ok(alive(sentinel.pid!), 'the process outside the run is alive');
    } finally {
      sentinel.kill('SIGKILL');
    }
  });

  test('a run started from a terminal cannot type into it (TIOCSTI) nor open it: it has no controlling terminal, and the terminal\'s device is not in its /dev', async () => {
    const script = [
      'import fcntl, os, termios',
      'def probe(name, f):',
      '    try:',
      '        f(); print(name + "=yes")',
      '    except OSError:',
      '        print(name + "=no")',
      'probe("open_dev_tty", lambda: os.open("/dev/tty", os.O_RDWR))',
      'for fd in (0, 1, 2):',
      '    probe("tiocsti_fd%d" % fd, lambda fd=fd: fcntl.ioctl(fd, termios.TIOCSTI, b"x"))',
      'print("ttys=" + ",".join(sorted(n for n in os.listdir("/dev/pts") if n != "ptmx")) or "ttys=")',
      `probe("open_callers_tty", lambda: os.open(open("${join(w.outside, 'tty-name')}").read().strip(), os.O_RDWR))`,
    ].join('\n') + '\n';
    assert.equal((await cli(['--vault', 'main', 'write', '/tty.py'], script)).code, 0);
    // The CLI in a terminal of its own (a pty that `script` makes), as an agent's shell would start it; the terminal's name is left where the run could read it, were it not hidden.
    const cmd = `tty > '${join(w.outside, 'tty-name')}'; exec '${process.execPath}' '${CLI}' --json --vault main proxy exec -- python3 tty.py`;
    const out = (await spawned('script', ['-qfec', cmd, '/dev/null'], { ...process.env, AVFS_HOME: opts.home, ...opts.env }, ['pipe', 'pipe', 'inherit'])).stdout;
    assert.match(readFileSync(join(w.outside, 'tty-name'), 'utf8'), /^\/dev\/pts\/\d+/, 'the CLI had a terminal');
    const env = envelopeOf(out.slice(out.indexOf('{')));
    assert.equal(env.result.exit_code, 0, env.result.stderr);
    const p = probesOf(env.result.stdout);
    assert.deepEqual(
      { open_dev_tty: p.open_dev_tty, tiocsti_fd0: p.tiocsti_fd0, tiocsti_fd1: p.tiocsti_fd1, tiocsti_fd2: p.tiocsti_fd2, open_callers_tty: p.open_callers_tty, ttys: p.ttys },
      { open_dev_tty: 'no', tiocsti_fd0: 'no', tiocsti_fd1: 'no', tiocsti_fd2: 'no', open_callers_tty: 'no', ttys: '' },
    );
  });

  test('no descriptor the CLI was started with reaches the run (a file open outside the vault, the mount\'s FUSE device): only stdin, stdout and stderr', async () => {
    const script = [
      'import os',
      'fds = {}',
      'for f in os.listdir("/proc/self/fd"):',
      '    try: fds[int(f)] = os.readlink("/proc/self/fd/" + f)',
      '    except OSError: pass',
      'extra = sorted(n for n, t in fds.items() if n > 2 and not t.startswith("/proc/"))',
      'print("extra=" + (",".join(map(str, extra)) or "none"))',
      'print("fuse=" + ("yes" if any("fuse" in t for t in fds.values()) else "no"))',
      'try:',
      '    os.write(3, b"pwned\\n"); print("write3=yes")',
      'except OSError:',
      '    print("write3=no")',
    ].join('\n') + '\n';
    assert.equal((await cli(['--vault', 'main', 'write', '/fds.py'], script)).code, 0);
    const outsideFile = join(w.outside, 'open-in-caller');
    writeFileSync(outsideFile, '');
    const fd = openSync(outsideFile, 'a');
    try {
      // The caller (an agent's harness) holds a file open outside the vault as fd 3 of the CLI.
      const r = await spawned(process.execPath, [CLI, '--json', '--vault', 'main', 'proxy', 'exec', '--', 'python3', 'fds.py'], { ...process.env, AVFS_HOME: opts.home, ...opts.env }, ['ignore', 'pipe', 'inherit', fd]);
      const env = envelopeOf(r.stdout);
      assert.equal(r.code, 0, env.result.stderr);
      assert.equal(env.result.sandbox?.mode, 'workspace');
      assert.deepEqual(probesOf(env.result.stdout), { extra: 'none', fuse: 'no', write3: 'no' });
      assert.equal(readFileSync(outsideFile, 'utf8'), '');
    } finally {
      closeSync(fd);
    }
  });

  test('git\'s credentials in ~/.config/git stay hidden while the folder (a default of home_read_only) is shown', async () => {
    const dir = join(w.home, '.config', 'git');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'config'), '[core]\n\tautocrlf = false\n');
    writeFileSync(join(dir, 'credentials'), 'https://agent:SECRET-GIT-TOKEN@example.invalid\n');
    try {
      const script = 'cat "$HOME/.config/git/config"\nprintf "protocol=https\\nhost=example.invalid\\n\\n" | git credential-store get\ncat "$HOME/.config/git/credentials"\ntrue\n';
      assert.equal((await cli(['--vault', 'main', 'write', '/creds.sh'], script)).code, 0);
      const { code, env } = await exec(['--', 'bash', 'creds.sh']);
      assert.equal(code, 0, env.result.stderr);
      assert.equal(env.result.decision?.action, 'allow_with_checkpoint');
      assert.match(env.result.stdout, /autocrlf = false/);
      assert.doesNotMatch(env.result.stdout + env.result.stderr, /SECRET-GIT-TOKEN/);
      assert.deepEqual(env.result.sandbox?.home_read_only, [join(w.home, '.gitconfig'), dir]);
    } finally {
      rmSync(join(w.home, '.config'), { recursive: true, force: true });
    }
  });

  test('the run\'s /tmp, /dev/shm and home are sized from its memory limit: filling /tmp ends in ENOSPC and an envelope, not in the host\'s memory', async () => {
    writeFileSync(join(w.avfs, 'sandbox.json'), JSON.stringify({ memory_mb: 512 }));
    try {
      const script = 'df -k /tmp /dev/shm "$HOME" | awk \'NR > 1 { print $6 "=" $2 }\'\nif head -c 400M /dev/zero > /tmp/fill 2>/dev/null; then echo fill=all; else echo fill=stopped; fi\n';
      assert.equal((await cli(['--vault', 'main', 'write', '/fill.sh'], script)).code, 0);
      const { code, env } = await exec(['--', 'bash', 'fill.sh']);
      assert.equal(code, 0, env.result.stderr);
      assert.equal(env.result.sandbox?.mode, 'workspace');
      assert.deepEqual(probesOf(env.result.stdout), { '/tmp': '262144', '/dev/shm': '131072', [w.home]: '262144', fill: 'stopped' });
    } finally {
      rmSync(join(w.avfs, 'sandbox.json'), { force: true });
    }
  });

  test('git, npm, python and a small build work inside', async () => {
    const { code, env } = await exec(['--', 'bash', 'build.sh']);
    assert.equal(code, 0, env.result.stderr);
    assert.equal(env.result.stdout, 'Sandbox Test\nnpm-ok\npython-ok\nbuild-ok\n');
    for (const f of ['/.git/HEAD', '/package.json', '/built.txt', '/py.txt', '/hello']) assert.ok(env.result.changed_files.includes(f), f);
  });

  test('tools the PATH names under the home or /tmp run with what they call (a manager\'s shims, prefixes, companions, a venv\'s base, a PATH link); their secrets, the rest of the home, sockets and a PATH folder that is a secret stay hidden', async () => {
    const h = (...p: string[]) => join(w.home, ...p);
    const put = (path: string, text: string, exec = false) => {
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, text);
      if (exec) chmodSync(path, 0o755);
    };
    const tmpBase = mkdtempSync('/tmp/avfs-sandbox-path-');
    mkdirSync(join(tmpBase, 'agent', 'bin'), { recursive: true });
    // A version manager as pyenv is made: a shim execs the manager, which reads the global version and execs that version's program.
    put(h('.pyenv', 'shims', 'fakepy'), `#!/bin/bash\nexec '${h('.pyenv', 'libexec', 'pyenv')}' exec fakepy "$@"\n`, true);
    put(h('.pyenv', 'libexec', 'pyenv'), `#!/bin/bash\nv=$(cat '${h('.pyenv', 'version')}')\nshift; p=$1; shift\nexec '${h('.pyenv', 'versions')}'/$v/bin/$p "$@"\n`, true);
    put(h('.pyenv', 'version'), '9.1\n');
    put(h('.pyenv', 'versions', '9.1', 'bin', 'fakepy'), `#!/bin/bash\necho "fakepy 9.1 $(cat '${h('.pyenv', 'versions', '9.1', 'lib', 'data.txt')}')"\n`, true);
    put(h('.pyenv', 'versions', '9.1', 'lib', 'data.txt'), 'with-lib');
    put(h('.pyenv', 'credentials'), 'SECRET-TOOL-TOKEN\n');
    put(h('.pyenv', 'versions', '9.1', 'pip.conf'), '[global]\nindex-url = https://u:SECRET-PIP@pypi.example/simple\n');
    // A tool that is no known manager: its bin and its prefix's lib, not the token beside them (~/.pulumi keeps credentials.json there).
    put(h('.pulumi', 'bin', 'pulumi'), `#!/bin/bash\necho "pulumi $(cat '${h('.pulumi', 'lib', 'v')}')"\n`, true);
    put(h('.pulumi', 'lib', 'v'), '3');
    put(h('.pulumi', 'credentials.json'), '{"accessTokens":{"x":"SECRET-PULUMI"}}\n');
    // A PATH folder named through a link (~/bin → ~/.dotfiles/bin), and a key in ~/.ssh that is a link into a shown folder.
    put(h('.dotfiles', 'bin', 'dot'), '#!/bin/bash\necho dot\n', true);
    put(h('.dotfiles', 'share', 'keys', 'id_link'), 'SECRET-LINKED-KEY\n');
    symlinkSync(h('.dotfiles', 'bin'), h('bin'));
    symlinkSync(h('.dotfiles', 'share', 'keys', 'id_link'), h('.ssh', 'id_link'));
    // A folder with a socket in it (an agent's, a multiplexer's) is never shown, even as a tool's.
    const sock = createServer();
    await new Promise<void>((r) => sock.listen(join(tmpBase, 'agent', 'bin', 'agent.sock'), r));
    // rustup's proxies in ~/.cargo/bin read toolchains in ~/.rustup; cargo's credentials stay hidden.
    put(h('.cargo', 'bin', 'cargo'), `#!/bin/bash\necho "cargo $(cat '${h('.rustup', 'toolchains', 'stable', 'version')}')"\n`, true);
    put(h('.rustup', 'toolchains', 'stable', 'version'), '1.99');
    put(h('.cargo', 'credentials.toml'), 'SECRET-CARGO\n');
    // pip --user: a program in ~/.local/bin loading from ~/.local/lib; other programs' data in ~/.local/share stays hidden.
    put(h('.local', 'bin', 'piptool'), `#!/bin/bash\necho "piptool $(cat '${h('.local', 'lib', 'pylib', 'mod.txt')}')"\n`, true);
    put(h('.local', 'lib', 'pylib', 'mod.txt'), 'mod');
    put(h('.local', 'share', 'other-app', 'history'), 'SECRET-HISTORY\n');
    // A Node installed as nvm does: its npm's global config (which can hold a registry token) in the version's prefix stays hidden.
    put(h('.nvm', 'versions', 'node', 'v99', 'bin', 'nodeish'), `#!/bin/bash\necho "nodeish $(ls '${h('.nvm', 'versions', 'node', 'v99', 'lib')}')"\n`, true);
    put(h('.nvm', 'versions', 'node', 'v99', 'lib', 'npm-lib'), '');
    put(h('.nvm', 'versions', 'node', 'v99', 'etc', 'npmrc'), '//registry.example/:_authToken=SECRET-NPM\n');
    // A project's own bin: that folder alone, not the project's secrets beside it.
    put(h('projects', 'p', 'node_modules', '.bin', 'ptool'), '#!/bin/bash\necho ptool\n', true);
    put(h('projects', 'p', '.env'), 'SECRET-DOTENV\n');
    // A virtual environment whose base interpreter lives in a prefix under /tmp that PATH does not name.
    put(join(tmpBase, 'base', 'bin', 'basepy'), '#!/bin/bash\necho basepy\n', true);
    put(h('venvs', 'v', 'pyvenv.cfg'), `home = ${join(tmpBase, 'base', 'bin')}\n`);
    put(h('venvs', 'v', 'bin', 'vpy'), `#!/bin/bash\nexec '${join(tmpBase, 'base', 'bin', 'basepy')}'\n`, true);
    // A tool under /tmp: its prefix.
    put(join(tmpBase, 'tool', 'bin', 'tmptool'), `#!/bin/bash\necho "tmptool $(cat '${join(tmpBase, 'tool', 'share', 'x')}')"\n`, true);
    put(join(tmpBase, 'tool', 'share', 'x'), 'x');
    const secrets = { tool_token: h('.pyenv', 'credentials'), pip_token: h('.pyenv', 'versions', '9.1', 'pip.conf'), pulumi_token: h('.pulumi', 'credentials.json'), linked_key: h('.dotfiles', 'share', 'keys', 'id_link'), npm_token: h('.nvm', 'versions', 'node', 'v99', 'etc', 'npmrc'), cargo_token: h('.cargo', 'credentials.toml'), app_history: h('.local', 'share', 'other-app', 'history'), dotenv: h('projects', 'p', '.env'), ssh: h('.ssh', 'id_rsa'), notes: h('notes.txt') };
    const script = [
      'fakepy', 'cargo', 'nodeish', 'piptool', 'ptool', 'vpy', 'tmptool', 'pulumi', 'dot', `test -e '${join(tmpBase, 'agent', 'bin', 'agent.sock')}' && echo socket-seen || echo socket-hidden`,
      ...Object.entries(secrets).map(([k, f]) => `if grep -q SECRET '${f}' 2>/dev/null; then echo ${k}=read; else echo ${k}=hidden; fi`),
    ].join('\n');
    // This machine's own tools (PYENV_ROOT…) are not this test's.
    const noToolVars = Object.fromEntries(TOOL_VARS.map((v) => [v, '']));
    try {
      const path = [h('.pyenv', 'shims'), h('.cargo', 'bin'), h('.pulumi', 'bin'), h('bin'), join(tmpBase, 'agent', 'bin'), h('.nvm', 'versions', 'node', 'v99', 'bin'), h('.local', 'bin'), h('projects', 'p', 'node_modules', '.bin'), h('venvs', 'v', 'bin'), join(tmpBase, 'tool', 'bin'), h('.ssh'), '/usr/bin', '/bin'].join(':');
      assert.equal((await runCli(['--vault', 'main', 'write', '/tools.sh'], { ...opts, input: script + '\n' })).code, 0);
      const r = await runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--', 'bash', 'tools.sh'], { ...opts, env: { ...opts.env, ...noToolVars, PATH: path } });
      const env = envelopeOf(r.stdout);
      assert.equal(r.code, 0, env.result.stderr);
      const hidden = Object.keys(secrets).map((k) => `${k}=hidden\n`).join('');
      assert.equal(env.result.stdout, `fakepy 9.1 with-lib\ncargo 1.99\nnodeish npm-lib\npiptool mod\nptool\nbasepy\ntmptool x\npulumi 3\ndot\nsocket-hidden\n${hidden}`);
      assert.equal(env.result.sandbox?.mode, 'workspace');
      const t = realpathSync(tmpBase);
      assert.deepEqual([...(env.result.sandbox?.path_read_only ?? [])].sort(), [
        h('.cargo'), h('.pyenv'), h('.local', 'bin'), h('.nvm'), h('.local', 'lib'), h('.rustup'), h('projects', 'p', 'node_modules', '.bin'), h('venvs', 'v', 'bin'), join(t, 'base', 'bin'), join(t, 'tool', 'bin'), join(t, 'tool', 'share'),
        h('.pulumi', 'bin'), h('.pulumi', 'lib'), h('.dotfiles', 'bin'), h('.dotfiles', 'share'),
      ].sort());
      // From the attacker's side: what a request sets (an agent's `env`) chooses nothing of the home, nor does a file on PATH.
      put(h('Documents', 'bin', 'x'), '#!/bin/bash\n', true);
      put(h('Documents', 'private.txt'), 'SECRET-DOCUMENT\n');
      const probe = `for f in '${h('Documents', 'private.txt')}' '${h('notes.txt')}'; do grep -q SECRET "$f" 2>/dev/null && echo "read $f"; done; true`;
      assert.equal((await runCli(['--vault', 'main', 'write', '/probe.sh'], { ...opts, input: probe + '\n' })).code, 0);
      const asked = async (...env: string[]) => {
        const r = await runCli(['--json', '--vault', 'main', 'proxy', 'exec', ...env.flatMap((e) => ['--env', e]), '--', 'bash', 'probe.sh'], { ...opts, env: { ...opts.env, ...noToolVars, PATH: `${h('notes.txt')}:/usr/bin:/bin` } });
        return envelopeOf(r.stdout).result;
      };
      // A PATH into the home is the policy's to refuse (nothing runs)…
      assert.equal((await asked(`PATH=${h('Documents', 'bin')}:/usr/bin:/bin`)).state, 'denied');
      // …and a tool variable the policy lets pass shows nothing either: the sandbox reads the caller's environment, not the request's.
      const widened = await asked(`PYENV_ROOT=${h('Documents')}`, `VIRTUAL_ENV=${h('Documents')}`, `NVM_DIR=${h('Documents')}`, `GOPATH=${h('Documents')}:${h()}`);
      assert.equal(widened.state, 'completed', JSON.stringify(widened.decision));
      assert.equal(widened.stdout, '');
      assert.deepEqual(widened.sandbox?.path_read_only, []);
    } finally {
      sock.close();
      rmSync(tmpBase, { recursive: true, force: true });
      for (const d of ['.pyenv', '.cargo', '.rustup', '.nvm', '.local', 'projects', 'venvs', 'Documents', '.pulumi', '.dotfiles', 'bin', join('.ssh', 'id_link')]) rmSync(h(d), { recursive: true, force: true });
    }
  });

  test('links into the run\'s own mount (a PATH folder, a secret place, a home file shown read-only) are not followed by the plan: the one-shot CLI serving that mount does not wait on itself', async () => {
    const h = (...p: string[]) => join(w.home, ...p);
    // A mount point of the caller's choosing, so links can lead into it before the run mounts it.
    const mp = mkdtempSync('/tmp/avfs-sandbox-own-mount-');
    const links = [h('vbin'), h('.aws'), h('.gitconfig')];
    const noToolVars = Object.fromEntries(TOOL_VARS.map((v) => [v, '']));
    try {
      symlinkSync(join(mp, 'bin'), h('vbin'));
      symlinkSync(join(mp, 'aws'), h('.aws'));
      renameSync(h('.gitconfig'), h('.gitconfig.saved'));
      symlinkSync(join(mp, 'gitconfig'), h('.gitconfig'));
      assert.equal((await cli(['--vault', 'main', 'write', '/gitconfig'], '[user]\n  name = From The Vault\n')).code, 0);
      // Before the plan followed links by hand, the CLI stat'ed into the mount it serves itself and waited forever.
      const r = await Promise.race([
        runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--mountpoint', mp, '--', 'true'], { ...opts, env: { ...opts.env, ...noToolVars, PATH: `${h('vbin')}:/usr/bin:/bin` } }),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the run did not end in 60 s: the plan waited on the mount its own process serves')), 60_000).unref()),
      ]);
      const env = envelopeOf(r.stdout);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(env.result.state, 'completed');
      // Nothing of the mount is shown as a tool folder: it is the run's writable place already.
      assert.ok(!(env.result.sandbox?.path_read_only ?? []).some((p) => p.startsWith(mp)), JSON.stringify(env.result.sandbox?.path_read_only));
    } finally {
      for (const l of links) rmSync(l, { force: true });
      if (existsSync(h('.gitconfig.saved'))) renameSync(h('.gitconfig.saved'), h('.gitconfig'));
      await sh('bash', ['-c', `grep -q ' ${mp} ' /proc/self/mounts && fusermount -uz '${mp}' || true`]);
      rmSync(mp, { recursive: true, force: true });
    }
  });

  test('a home that is a link (with the avfs home under it) is private where it leads: the link is made again inside, its secrets stay out of sight by either path', async () => {
    const lw = world('avfs-sandbox-link-');
    const link = `/home/avfs-link-${process.pid}`;
    mkdirSync('/home', { recursive: true });
    symlinkSync(lw.home, link);
    // The same world seen through the link: $HOME and the avfs home are spelled with it.
    const via: World = { ...lw, home: link, avfs: join(link, '.avfs') };
    mkdirSync(via.avfs);
    writeFileSync(join(via.avfs, 'policy.json'), lw.rules);
    const o: RunOptions = { home: via.avfs, env: { HOME: link, AVFS_NO_HOST: '1' } };
    try {
      assert.equal((await runCli(['vault', 'create', 'main'], o)).code, 0);
      const script = evilScript(via, l.port) + `if cat '${join(lw.home, '.ssh', 'id_rsa')}' >/dev/null 2>&1; then echo by_real_path=yes; else echo by_real_path=no; fi\necho mine > "$HOME/mine" && cat "$HOME/mine" >/dev/null && echo home_writable=yes\n`;
      assert.equal((await runCli(['--vault', 'main', 'write', '/evil.sh'], { ...o, input: script })).code, 0);
      const r = await runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--', 'bash', 'evil.sh'], o);
      const env = envelopeOf(r.stdout);
      assert.equal(r.code, 0, `${env.result.stderr}\n${r.stderr}`);
      const p = probesOf(env.result.stdout);
      assert.deepEqual([p.by_real_path, p.home_writable], ['no', 'yes']);
      delete p.by_real_path;
      delete p.home_writable;
      assertContained(p, via);
      assert.equal(existsSync(join(lw.home, 'mine')), false, 'the private home was not the real one');
      assert.deepEqual(env.result.changed_files, ['/proof.txt']);
    } finally {
      await sh('bash', ['-c', `for m in $(grep -o "${lw.home}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
      rmSync(link, { force: true });
      lw.cleanup();
    }
  });

  test('a fork bomb and a 1 GB flood end with an envelope; the next run is fine', async () => {
    assert.equal((await cli(['--vault', 'main', 'write', '/bomb.sh'], BOMB)).code, 0);
    assert.equal((await cli(['--vault', 'main', 'write', '/flood.sh'], FLOOD)).code, 0);
    const bomb = await exec(['--timeout', '4000', '--grace', '500', '--', 'bash', 'bomb.sh']);
    assert.equal(bomb.env.result.state, 'timed_out');
    assert.equal(bomb.code, 124);
    const limits = bomb.env.result.sandbox!.limits;
    assert.equal(limits.processes, 1024);
    if (limits.processes_by === 'cgroup') assert.equal(bomb.env.result.sandbox!.violations[0]?.kind, 'process_limit');
    const flood = await exec(['--', 'bash', 'flood.sh']);
    assert.equal(flood.env.result.state, 'completed');
    assert.equal(flood.env.result.stdout_bytes, 2 ** 30);
    assert.equal(flood.env.result.stdout_truncated, true);
    const next = await exec(['--', 'sh', '-c', 'echo alive']);
    assert.equal(next.env.result.stdout, 'alive\n', JSON.stringify(next.env.result) + next.stderr);
  });

  test('the probe\'s answer is kept in the avfs home for the same bwrap, user, boot and kernel settings; another key, or avfs doctor, probes again', async () => {
    const file = join(w.avfs, 'sandbox-probe.json');
    assert.equal((await exec(['--', 'true'])).env.result.sandbox?.mode, 'workspace');
    const kept = JSON.parse(readFileSync(file, 'utf8')) as { key: string; support: { ok: boolean; version: string } };
    assert.equal(kept.support.ok, true);
    // A kept answer for this key is used as it is (the version it names shows in the envelope) …
    writeFileSync(file, JSON.stringify({ key: kept.key, support: { ...kept.support, version: 'bubblewrap (as kept)' } }));
    assert.equal((await exec(['--', 'true'])).env.result.sandbox?.tool, 'bubblewrap (as kept)');
    // … one for another bwrap (or user, boot, kernel setting) is not: probed again, and rewritten.
    writeFileSync(file, JSON.stringify({ key: `${kept.key}-other`, support: { ok: false, bwrap: null, reason: 'kept for another key' } }));
    const again = await exec(['--', 'true']);
    assert.equal(again.env.result.sandbox?.mode, 'workspace');
    assert.match(again.env.result.sandbox?.tool ?? '', /^bubblewrap \d/);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).key, kept.key);
    // avfs doctor never trusts the kept answer.
    writeFileSync(file, JSON.stringify({ key: kept.key, support: { ok: false, bwrap: null, reason: 'kept' } }));
    assert.equal(JSON.parse((await cli(['--json', 'doctor'])).stdout).sandbox.ok, true);
    assert.equal(JSON.parse(readFileSync(file, 'utf8')).support.ok, true);
  });

  test('what a sandboxed command leaves running ends with it and is no leftover', async () => {
    const marker = `avfs-left-${process.pid}`;
    const { env } = await exec(['--', 'bash', '-c', `(exec -a ${marker} sleep 30) & setsid bash -c 'exec -a ${marker} sleep 30' & echo started`]);
    assert.equal(env.result.state, 'completed', env.result.stderr);
    assert.equal(env.result.stdout, 'started\n');
    assert.equal(env.result.leftover_processes, 0);
    assert.equal((await sh('pgrep', ['-f', marker])).stdout, '');
  });

  test('a run handed to a kept mount\'s server is sandboxed the same way', async () => {
    const kept = await exec(['--keep-mount', '--', 'true']);
    assert.equal(kept.env.result.state, 'completed');
    const { env } = await exec(['--', 'bash', 'evil.sh']);
    assert.equal(env.result.mount_reused, true);
    assertContained(probesOf(env.result.stdout), w);
    assert.equal(env.result.sandbox?.mode, 'workspace');
  });

  test('a kept mount\'s server starts each run\'s sandbox ahead of it, one per run: nothing of one run is in the next; unmounting ends the waiting one', async () => {
    const marker = `avfs-ahead-${process.pid}`;
    // Handed to the mount's server (AVFS_NO_HOST=1 would keep each run in its CLI; no host runs in this home).
    const handed = async (args: string[]) => {
      const r = await runCli(['--json', '--vault', 'main', 'proxy', 'exec', ...args], { ...opts, env: { ...opts.env, AVFS_NO_HOST: '0' } });
      return { code: r.code, env: envelopeOf(r.stdout), stderr: r.stderr };
    };
    // What a run can see of itself: its cgroups, how long its sandbox's init waited for it. (Its
    // namespaces' numbers say nothing: the kernel gives a freed one's number to the next.)
    const self = `echo "cgroup=$(grep -E ':(pids|memory):' /proc/self/cgroup | sort | tr '\\n' ' ')"; echo "waited=$(( $(cut -d' ' -f22 /proc/self/stat) - $(cut -d' ' -f22 /proc/1/stat) ))"`;
    // Scripts the policy cannot read (allowed with a checkpoint, in the sandbox).
    assert.equal((await cli(['--vault', 'main', 'write', '/first.sh'], `${self}\necho left > /tmp/${marker}; echo left > "$HOME/${marker}"\nsetsid bash -c 'exec -a ${marker} sleep 30' &\necho started\n`)).code, 0);
    assert.equal((await cli(['--vault', 'main', 'write', '/second.sh'], `${self}\nls -A /tmp "$HOME"\npgrep -f ${marker} || echo none\n`)).code, 0);
    // The mount's server has run one command at least: it keeps the next one's sandbox ready from then on.
    assert.equal((await handed(['--keep-mount', '--', 'true'])).env.result.state, 'completed');
    assert.equal((await handed(['--', 'true'])).env.result.mount_reused, true);
    const first = await handed(['--', 'bash', 'first.sh']);
    assert.equal(first.env.result.mount_reused, true);
    assert.equal(first.env.result.state, 'completed', first.env.result.stderr);
    const mount = (JSON.parse((await cli(['--json', 'mounts'])).stdout) as { mounts: Array<{ pid: number; mountpoint: string }> }).mounts[0]!;
    // The next run's sandbox is made after this one ended, and waits for it.
    await new Promise((r) => setTimeout(r, 1500));
    const second = await handed(['--', 'bash', 'second.sh']);
    assert.equal(second.env.result.state, 'completed', second.env.result.stderr);
    assert.equal(second.env.result.mount_reused, true);
    const facts = (out: string) => Object.fromEntries(out.split('\n').filter((l) => /^\w+=/.test(l)).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    const a = facts(first.env.result.stdout);
    const b = facts(second.env.result.stdout);
    // Started ahead: its init had waited (in clock ticks of 10 ms) for the request, a start on request a few.
    assert.ok(Number(b.waited) >= 100, `the second run's sandbox was started ahead of it: ${second.env.result.stdout}`);
    assert.match(b.cgroup ?? '', /avfs-run-/);
    assert.notEqual(b.cgroup, a.cgroup, 'each run has cgroups of its own');
    assert.ok(!second.env.result.stdout.includes(marker), `nothing of the first run is in the second: ${second.env.result.stdout}`);
    assert.match(second.env.result.stdout, /^none$/m);
    assert.equal(second.env.result.leftover_processes, 0);
    assert.equal(second.env.result.sandbox?.mode, 'workspace');
    assert.equal(second.env.result.sandbox?.limits?.processes_by, first.env.result.sandbox?.limits?.processes_by);
    // A third run's sandbox is waiting now, holding a bind of the mount: unmounting lets it go, and the server leaves.
    assert.ok(await waitFor(async () => (await sh('pgrep', ['-f', `${mount.mountpoint}.*avfs-wait`])).stdout !== '', 10_000), 'a sandbox waits for the next run');
    assert.equal((await cli(['unmount', mount.mountpoint])).code, 0);
    assert.ok(await waitFor(() => !alive(mount.pid), 10_000), 'the mount\'s server has left');
    assert.equal((await sh('pgrep', ['-f', `${mount.mountpoint}.*avfs-wait`])).stdout, '');
    assert.equal((await sh('grep', ['-c', mount.mountpoint, '/proc/self/mounts'])).stdout.trim(), '0');
  });

  test('without bubblewrap --sandbox workspace fails with SandboxUnavailable and nothing runs; the default falls back to none and says so; avfs doctor says why', async () => {
    const noBwrap = { ...opts, env: { ...opts.env, PATH: '/nonexistent' } };
    const fallback = await runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--', '/bin/sh', '-c', 'echo unboxed'], noBwrap);
    const fell = envelopeOf(fallback.stdout);
    assert.equal(fell.result.stdout, 'unboxed\n', fell.result.stderr);
    assert.equal(fell.request.sandbox, 'none');
    assert.equal(fell.result.sandbox?.mode, 'none');
    assert.match(fell.result.sandbox?.note ?? '', /bubblewrap cannot run here .*not installed.*fell back/);
    const r = await runCli(['--json', '--vault', 'main', 'proxy', 'exec', '--sandbox', 'workspace', '--', '/bin/sh', '-c', 'echo ran > ran.txt'], noBwrap);
    assert.equal(r.code, 125);
    const env = envelopeOf(r.stdout);
    assert.equal(env.result.error?.error, 'SandboxUnavailable');
    assert.match(env.result.error?.message ?? '', /bubblewrap/);
    assert.equal(env.result.exit_code, null);
    assert.notEqual((await cli(['--vault', 'main', 'stat', '/ran.txt'])).code, 0, 'nothing ran');
    const doctor = await runCli(['--json', 'doctor'], noBwrap);
    assert.equal(doctor.code, 1);
    assert.match(JSON.parse(doctor.stdout).sandbox.reason, /not installed/);
    assert.equal(JSON.parse(doctor.stdout).sandbox.default_mode, 'none');
    const ok = JSON.parse((await cli(['--json', 'doctor'])).stdout).sandbox;
    assert.equal(ok.ok, true);
  });
});

describe('sandbox: runs through a real host', () => {
  let w: World;
  let l: Awaited<ReturnType<typeof listener>>;
  let host: HostProcess;
  let opts: RunOptions;
  const { cli, exec } = cliIn(() => opts);

  before(async () => {
    w = world('avfs-sandbox-host-');
    l = await listener();
    opts = { home: w.avfs, env: { HOME: w.home } };
    assert.equal((await cli(['vault', 'create', 'main'])).code, 0);
    assert.equal((await cli(['--vault', 'main', 'write', '/evil.sh'], evilScript(w, l.port))).code, 0);
    assert.equal((await cli(['--vault', 'main', 'write', '/bomb.sh'], BOMB)).code, 0);
    assert.equal((await cli(['--vault', 'main', 'write', '/flood.sh'], FLOOD)).code, 0);
    // The host's own home is the fake one: its runs' private home hides that one.
    const realHome = process.env.HOME;
    process.env.HOME = w.home;
    try {
      host = await startHost(w.avfs);
    } finally {
      process.env.HOME = realHome;
    }
  });
  after(async () => {
    await host.stop();
    await sh('bash', ['-c', `for m in $(grep -o "${w.avfs}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    l.server.close();
    w.cleanup();
  });

  test('the host\'s runs are contained: its socket, the vaults and the rules are out of sight', async () => {
    assert.ok(statSync(join(w.avfs, 'host.sock')).isSocket());
    const { code, env } = await exec(['--', 'bash', 'evil.sh']);
    assert.equal(code, 0, env.result.stderr);
    assertContained(probesOf(env.result.stdout), w);
    assert.equal(env.result.sandbox?.mode, 'workspace');
  });

  test('an approved networked run reaches a loopback listener it names; the network is recorded as filtered to that host', async () => {
    const approver = await client(w.avfs, {
      name: 'test approver',
      approver: true,
      setup: (conn) => conn.onRequest('approval/request', (_req: ApprovalRequest) => ({ answer: 'approve_once' })),
    });
    try {
      const before = l.hits();
      const { env } = await exec(['--', 'curl', '-s', `http://127.0.0.1:${l.port}/`]);
      assert.equal(env.result.approval?.outcome, 'approved');
      assert.equal(env.result.stdout, 'hello');
      assert.equal(l.hits(), before + 1);
      assert.equal(env.result.sandbox?.network, 'filtered');
      assert.deepEqual(env.result.sandbox?.network_hosts, ['127.0.0.1']);
      assert.match(env.result.sandbox?.network_why ?? '', /^approved by .*client \(pid \d+.*127\.0\.0\.1 alone/);
    } finally {
      approver.close();
    }
  });

  test('an approved run reaches only the hosts the policy read from it: another name is refused by the proxy and recorded, and there is no way around it', async () => {
    const approver = await client(w.avfs, {
      name: 'test approver',
      approver: true,
      setup: (conn) => conn.onRequest('approval/request', (_req: ApprovalRequest) => ({ answer: 'approve_once' })),
    });
    const refused = await listener();
    try {
      // The script the policy cannot read tries the refused name through the proxy, then directly.
      const tries = [
        `curl -s -o /dev/null -w 'proxied=%{http_code}\\n' http://127.0.0.1:${refused.port}/`,
        `curl -s -o /dev/null -w 'tunnel=%{http_connect}\\n' -p http://127.0.0.1:${refused.port}/`,
        `curl -s --noproxy '*' -o /dev/null -w 'direct=%{http_code}\\n' --max-time 2 http://127.0.0.1:${refused.port}/ || echo direct=none`,
        `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${refused.port}), timeout=2); print("socket=yes")' 2>/dev/null || echo socket=no`,
      ].join('\n') + '\n';
      assert.equal((await cli(['--vault', 'main', 'write', '/net.sh'], tries)).code, 0);
      const before = l.hits();
      const { code, env } = await exec(['--shell', `curl -s http://localhost:${l.port}/ && echo && curl -s -p http://localhost:${l.port}/ && echo && bash net.sh`]);
      assert.equal(code, 0, env.result.stderr);
      assert.equal(env.result.approval?.outcome, 'approved');
      // The allowed name: once as a proxied request, once through a CONNECT tunnel (as HTTPS goes).
      assert.equal(env.result.stdout, 'hello\nhello\nproxied=403\ntunnel=403\ndirect=000\ndirect=none\nsocket=no\n');
      assert.equal(l.hits(), before + 2, 'the allowed name was reached');
      assert.equal(refused.hits(), 0, 'the refused name was never reached');
      const s = env.result.sandbox!;
      assert.equal(s.network, 'filtered');
      assert.deepEqual(s.network_hosts, ['localhost']);
      const v = s.violations.filter((x) => x.kind === 'network_refused');
      assert.equal(v.length, 1, JSON.stringify(s.violations));
      assert.match(v[0]!.message, /127\.0\.0\.1 \(2 times\).*localhost/);
    } finally {
      refused.server.close();
      approver.close();
    }
  });

  test('a git remote\'s host is read from the repository: an approved `git ls-remote` reaches origin\'s host alone', async () => {
    const approver = await client(w.avfs, {
      name: 'test approver',
      approver: true,
      setup: (conn) => conn.onRequest('approval/request', (_req: ApprovalRequest) => ({ answer: 'approve_once' })),
    });
    try {
      const setup = await exec(['--cwd', '/repo', '--shell', `git init -q . && git remote add origin http://localhost:${l.port}/repo.git`]);
      assert.equal(setup.code, 0, setup.env.result.stderr);
      const before = l.hits();
      // The listener is no git server: git fails once it has its answer, but it got there through the proxy.
      const { env } = await exec(['--cwd', '/repo', '--', 'git', 'ls-remote']);
      assert.equal(env.result.approval?.outcome, 'approved');
      assert.equal(env.result.sandbox?.network, 'filtered');
      assert.deepEqual(env.result.sandbox?.network_hosts, ['localhost']);
      assert.ok(l.hits() > before, `the remote's host was reached: ${env.result.stderr}`);
      assert.deepEqual(env.result.sandbox?.violations, []);
    } finally {
      approver.close();
    }
  });

  test('git\'s insteadOf, pushurl and a global insteadOf are followed as git follows them: each run reaches the host git goes to, and nothing is refused', async () => {
    const approver = await client(w.avfs, {
      name: 'test approver',
      approver: true,
      setup: (conn) => conn.onRequest('approval/request', (_req: ApprovalRequest) => ({ answer: 'approve_once' })),
    });
    // The home's ~/.gitconfig (shown read-only to runs) rewrites a short alias, as many users' do.
    const gitconfig = join(w.home, '.gitconfig');
    const before0 = readFileSync(gitconfig, 'utf8');
    appendFileSync(gitconfig, `[url "http://localhost:${l.port}/"]\n\tinsteadOf = lh:\n`);
    // An include on a condition of where git runs (this repository's folder), from a file the home shows, and one whose condition does not hold.
    const inc = join(w.home, '.config', 'git');
    mkdirSync(inc, { recursive: true });
    writeFileSync(join(inc, 'work.inc'), `[url "http://127.0.0.1:${l.port}/"]\n\tinsteadOf = wk:\n`);
    writeFileSync(join(inc, 'other.inc'), '[url "https://elsewhere.example/"]\n\tinsteadOf = wk:\n');
    appendFileSync(gitconfig, '[includeIf "gitdir:rewritten/"]\n\tpath = .config/git/work.inc\n[includeIf "gitdir:not-this-one/"]\n\tpath = .config/git/other.inc\n');
    try {
      const setup = await exec([
        '--cwd', '/rewritten', '--shell',
        [
          'git init -q . && git remote add origin https://code.example/repo.git',
          `git config url.http://localhost:${l.port}/.insteadOf https://code.example/`,
          'git config remote.origin.pushurl https://push.example/repo.git',
          `git config url.http://127.0.0.1:${l.port}/.insteadOf https://push.example/`,
          'git commit -q --allow-empty -m one',
        ].join(' && '),
      ]);
      assert.equal(setup.code, 0, setup.env.result.stderr);
      // The listener is no git server: git fails once it has its answer, but it got there through the proxy.
      const cases: Array<[string[], string[]]> = [
        [['git', 'ls-remote'], ['localhost']],
        [['git', 'push', 'origin', 'HEAD'], ['127.0.0.1']],
        [['git', 'ls-remote', 'lh:other.git'], ['localhost']],
        [['git', 'ls-remote', 'wk:other.git'], ['127.0.0.1']],
        // The run's environment configures git too (GIT_CONFIG_COUNT / KEY / VALUE).
        [['--env', 'GIT_CONFIG_COUNT=1', '--env', 'GIT_CONFIG_KEY_0=url.http://localhost:' + l.port + '/.insteadOf', '--env', 'GIT_CONFIG_VALUE_0=ev:', '--', 'git', 'ls-remote', 'ev:x.git'], ['localhost']],
      ];
      for (const [argv, hosts] of cases) {
        const before = l.hits();
        const { env } = await exec(['--cwd', '/rewritten', ...(argv[0] === '--env' ? argv : ['--', ...argv])]);
        assert.equal(env.result.approval?.outcome, 'approved', argv.join(' '));
        assert.equal(env.result.sandbox?.network, 'filtered', argv.join(' '));
        assert.deepEqual(env.result.sandbox?.network_hosts, hosts, argv.join(' '));
        assert.ok(l.hits() > before, `${argv.join(' ')} reached its host: ${env.result.stderr}`);
        assert.deepEqual(env.result.sandbox?.violations, [], argv.join(' '));
      }
    } finally {
      writeFileSync(gitconfig, before0);
      rmSync(join(w.home, '.config'), { recursive: true, force: true });
      approver.close();
    }
  });

  test('--sandbox none behaves as before (once a person approves code it cannot read) and says so', async () => {
    const approver = await client(w.avfs, {
      name: 'test approver',
      approver: true,
      setup: (conn) => conn.onRequest('approval/request', (_req: ApprovalRequest) => ({ answer: 'approve_once' })),
    });
    try {
      // Only what does no harm: reading the home's secret and reaching the listener.
      const peek = `cat "$HOME/notes.txt"; python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${l.port}), timeout=2); print("reached")'\n`;
      assert.equal((await cli(['--vault', 'main', 'write', '/peek.sh'], peek)).code, 0);
      const { code, env } = await exec(['--sandbox', 'none', '--', 'bash', 'peek.sh']);
      assert.equal(code, 0, env.result.stderr);
      assert.equal(env.result.approval?.outcome, 'approved');
      assert.equal(env.result.stdout, 'SECRET-HOME\nreached\n');
      assert.equal(env.request.sandbox, 'none');
      assert.equal(env.result.sandbox?.mode, 'none');
      assert.equal(env.result.sandbox?.network, 'shared');
      assert.equal(env.result.sandbox?.tool, null);
      assert.equal(env.result.sandbox?.note, '--sandbox none: no isolation');
    } finally {
      approver.close();
    }
  });

  test('a fork bomb and a 1 GB flood end with an envelope and a healthy host whose memory stays bounded', async () => {
    const bomb = await exec(['--timeout', '4000', '--grace', '500', '--', 'bash', 'bomb.sh']);
    assert.equal(bomb.env.result.state, 'timed_out');
    if (bomb.env.result.sandbox!.limits.processes_by === 'cgroup') assert.equal(bomb.env.result.sandbox!.violations[0]?.kind, 'process_limit');
    const flood = await exec(['--', 'bash', 'flood.sh']);
    assert.equal(flood.env.result.state, 'completed');
    assert.equal(flood.env.result.stdout_bytes, 2 ** 30);
    // The host never held the flood: its peak resident memory stays far below it.
    const peak = Number(/^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${host.pid}/status`, 'utf8'))?.[1]) * 1024;
    assert.ok(peak < 512 * 2 ** 20, `the host's peak resident memory: ${peak} bytes`);
    assert.equal(flood.env.result.stdout_truncated, true);
    assert.equal(host.child.exitCode, null, `the host is alive:\n${host.log()}`);
    assert.equal((await cli(['host', 'status'])).code, 0);
    const next = await exec(['--', 'sh', '-c', 'echo alive']);
    assert.equal(next.env.result.stdout, 'alive\n', JSON.stringify(next.env.result) + next.stderr);
    assert.doesNotMatch(host.log(), /ERR_WORKER_INIT_FAILED|uncaught/i);
  });
});

describe('sandbox: an ordinary user (a user namespace)', () => {
  const name = `avfs-sbx-${process.pid}`;
  let w: World;
  let user: { uid: number; gid: number };
  let fuseMode: number | undefined;
  let opts: RunOptions;
  const { cli, exec } = cliIn(() => opts);

  before(async () => {
    w = world('avfs-sandbox-user-');
    chmodSync(w.base, 0o755);
    const made = await sh('useradd', ['--no-create-home', '--home-dir', w.home, '--shell', '/bin/sh', name]);
    assert.equal(made.code, 0, made.stderr);
    const id = await sh('id', ['-u', name]);
    const gid = await sh('id', ['-g', name]);
    user = { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
    await sh('chown', ['-R', `${user.uid}:${user.gid}`, w.home, w.avfs, w.outside]);
    chownSync(w.outside, 0, 0); // the user may not write there anyway; the sandbox must not either
    chmodSync(w.outside, 0o777);
    // An ordinary user mounts through fusermount, which needs /dev/fuse open to everyone (as udev
    // makes it on a desktop; this machine's is root-only): for the test's duration only.
    const mode = statSync('/dev/fuse').mode & 0o777;
    if ((mode & 0o006) !== 0o006) {
      fuseMode = mode;
      chmodSync('/dev/fuse', 0o666);
    }
    opts = { home: w.avfs, user, env: { HOME: w.home, AVFS_NO_HOST: '1', USER: name, LOGNAME: name } };
    assert.equal((await cli(['vault', 'create', 'main'])).code, 0);
  });
  after(async () => {
    if (fuseMode !== undefined) chmodSync('/dev/fuse', fuseMode);
    await sh('bash', ['-c', `for m in $(grep -o "${w.avfs}/[^ ]*" /proc/self/mounts); do fusermount -uz "$m"; done`]);
    // Whatever of the user's is left (nothing should be) is stopped by pid before the user goes.
    const left = await sh('pgrep', ['-u', String(user.uid)]);
    for (const pid of left.stdout.split('\n').filter(Boolean)) {
      try {
        process.kill(Number(pid), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await sh('userdel', [name]);
    w.cleanup();
  });

  test('its runs are contained the same way, and a fork bomb counts against the run alone', async () => {
    const l = await listener();
    try {
      assert.equal((await cli(['--vault', 'main', 'write', '/evil.sh'], evilScript(w, l.port))).code, 0);
      const { code, env, stderr } = await exec(['--', 'bash', 'evil.sh']);
      assert.equal(code, 0, `${env.result.stderr}\n${stderr}`);
      const p = probesOf(env.result.stdout);
      // The user could not read /etc/shadow anyway; everything else as for root.
      assertContained(p, w);
      assert.equal(l.hits(), 0);
      const limits = env.result.sandbox!.limits;
      assert.deepEqual([limits.processes, limits.processes_by], [1024, 'rlimit']);
    } finally {
      l.server.close();
    }
    assert.equal((await cli(['--vault', 'main', 'write', '/bomb.sh'], BOMB)).code, 0);
    const bomb = await exec(['--timeout', '3000', '--grace', '500', '--', 'bash', 'bomb.sh']);
    // Timed out (its `sleep 60` waits), or failed where the script's own fork of sleep was refused for
    // good before then (seen with two test runs at once on two cores): an envelope either way.
    assert.ok(['timed_out', 'failed'].includes(bomb.env.result.state), bomb.env.result.state);
    assert.match(bomb.env.result.stderr, /fork|Resource temporarily unavailable/);
    assert.doesNotMatch(bomb.stderr, /ERR_WORKER_INIT_FAILED/);
    const next = await exec(['--', 'sh', '-c', 'echo alive']);
    assert.equal(next.env.result.stdout, 'alive\n', JSON.stringify(next.env.result) + next.stderr);
  });
});
