/**
 * Package managers and build tools. Installing from a registry needs approval (it downloads and
 * may run install scripts); running the project's own scripts and builds gets a checkpoint;
 * system package managers write outside the workspace and are denied.
 */
import type { Handler } from '../classify';
import { Cmd, parseOpts } from '../command';
import { literal, type Word } from '../words';
import { cargoWatch } from './commandLists';
import { scanInlineCode } from './inlineCode';

const GLOBAL_INSTALL = new Set(['-g', '--global', '--location=global', '--user', '--system', '--break-system-packages']);
const INSTALL_DIR = new Set(['--prefix', '--target', '-t', '--root', '--cache', '--global-folder', '--modules-folder', '--dir', '--cwd']);

function install(cmd: Cmd, what: string): void {
  cmd.add(['package_install', 'networked', 'code_execution'], `${what} downloads packages and may run their install scripts`);
  if (cmd.vals.some((value) => value !== null && GLOBAL_INSTALL.has(value))) cmd.add(['host_escape'], `${what} installs outside the workspace (global/user)`);
  for (const [at, text] of cmd.vals.entries()) {
    if (text !== null && INSTALL_DIR.has(text) && cmd.args[at + 1]) cmd.path(cmd.args[at + 1]!, 'write', 'installs into');
    else if (text !== null && /^--(prefix|target|root|cache|global-folder|modules-folder|dir|cwd)=/.test(text)) cmd.maybePath(cmd.args[at]!, 'write');
    else if (text !== null && (text.startsWith('/') || text.startsWith('~') || text.startsWith('../'))) cmd.path(cmd.args[at]!, 'read', 'installs from');
  }
}

function runsScripts(cmd: Cmd, what: string): void {
  cmd.add(['code_execution', 'mutating'], `${what} runs the project's scripts`);
  // --script-shell=PROG runs every script through PROG; --prefix/-C run another directory's scripts.
  const opts = parseOpts(cmd.args, 'C', ['script-shell', 'prefix', 'cwd', 'dir']);
  for (const shell of opts.values.get('script-shell') ?? []) cmd.runs(shell, `${what} --script-shell`);
  for (const dir of ['prefix', 'cwd', 'dir', 'C'].flatMap((key) => opts.values.get(key) ?? [])) cmd.path(dir, 'read', 'runs the scripts of');
  // cargo --config 'target.x.runner="…"', 'build.rustc-wrapper=…': settings that name programs to run.
  for (const setting of cmd.args.map((word) => literal(word) ?? '')) {
    if (/^(--config=)?[\w.-]*(runner|wrapper|linker|rustc|rustdoc|editor|pager|shell|command|cmd)\b[\w.-]*\s*=/i.test(setting)) {
      cmd.add(['code_execution', 'unknown'], `${what} is given a setting that names a program to run (${setting.slice(0, 40)})`);
    }
  }
  cmd.argumentPaths();
}

const NPM_READ = new Set([
  'ls', 'list', 'll', 'la', 'outdated', 'why', 'explain', 'help', 'help-search', 'prefix', 'root', 'bin', 'config-get', 'version-check', 'doctor',
  'fund', 'query', 'sbom', 'get', 'find-dupes', '-v', '--version', '-h', '--help', 'completion',
]);
const NPM_NET_READ = new Set([
  'view', 'v', 'info', 'show', 'search', 's', 'se', 'find', 'audit', 'ping', 'whoami', 'access', 'owner', 'team', 'dist-tag', 'docs', 'home', 'bugs',
  'repo', 'star', 'stars', 'unstar', 'org', 'hook', 'profile', 'token',
]);
const NPM_INSTALL = new Set([
  'install', 'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal', 'isntall', 'add', 'ci', 'clean-install', 'install-clean', 'ic',
  'update', 'up', 'upgrade', 'udpate', 'install-test', 'it', 'install-ci-test', 'cit', 'link', 'ln', 'dedupe', 'ddp', 'prune', 'create', 'init',
  'innit',
]);
const NPM_PUBLISH = new Set(['publish', 'unpublish', 'deprecate', 'adduser', 'login', 'logout', 'add-user', 'undeprecate']);

const npm: Handler = (cmd) => {
  const sub = cmd.vals.find((value) => value === null || !value.startsWith('-')) ?? cmd.vals[0];
  const at = sub === undefined ? -1 : cmd.vals.indexOf(sub);
  const rest = cmd.args.slice(at + 1);
  if (sub === undefined || sub === '--version' || sub === '-v' || sub === '--help' || sub === '-h') {
    cmd.add(['read_only'], 'npm prints information');
    return;
  }
  if (sub === null) {
    cmd.add(['obfuscation'], 'the npm command is computed');
    return;
  }
  if (NPM_READ.has(sub)) {
    cmd.add(['read_only'], `npm ${sub} only reads`);
    return;
  }
  if (NPM_NET_READ.has(sub)) {
    cmd.add(['networked'], `npm ${sub} asks the registry`);
    if (sub === 'token') cmd.add(['host_escape'], 'npm token handles host credentials');
    if (sub === 'audit' && rest.some((word) => literal(word) === 'fix')) install(cmd, 'npm audit fix');
    return;
  }
  if (sub === 'config' || sub === 'c' || sub === 'set') {
    const op = literal(rest[0] ?? { raw: '', segs: [] });
    if (op === 'get' || op === 'list' || op === 'ls') {
      cmd.add(['read_only'], 'npm config reads settings');
      printsCredential(cmd, rest.slice(1), 'npm config get');
    } else cmd.add(['host_escape'], 'npm config writes the user\'s ~/.npmrc');
    return;
  }
  if ((sub === 'pkg' && literal(rest[0] ?? { raw: '', segs: [] }) === 'set') || sub === 'set-script') {
    // A script stored in package.json runs on the next `npm run`: its text is judged now.
    const pairs = sub === 'set-script' ? [[literal(rest[0] ?? { raw: '', segs: [] }), literal(rest[1] ?? { raw: '', segs: [] })]] :
        rest.slice(1).map((word) => ((text) => (text === null ? [null, null] : [text.slice(0, text.indexOf('=')), text.slice(text.indexOf('=') + 1)]))(literal(word)));
    for (const [key, value] of pairs) {
      if (sub === 'set-script' || (key ?? 'scripts.').startsWith('scripts.')) {
        if (value === null || value === undefined) cmd.add(['unknown'], `npm ${sub} stores a computed script`);
        else cmd.script(value, `the package script set by npm ${sub}`, undefined, 'later');
      }
    }
  }
  if (NPM_INSTALL.has(sub)) {
    if (sub === 'init' || sub === 'innit') {
      // `npm init <initializer>` runs create-<initializer> from the registry; without one it only writes package.json.
      const initializer = rest.find((word) => literal(word) === null || !literal(word)!.startsWith('-'));
      if (initializer === undefined) {
        const asks = !rest.some((word) => /^(-y|--yes)$/.test(literal(word) ?? ''));
        cmd.add(asks ? ['mutating', 'interactive'] : ['mutating'], asks ? 'npm init asks questions' : 'npm init -y writes package.json');
        return;
      }
    }
    install(cmd, `npm ${sub}`);
    return;
  }
  if (NPM_PUBLISH.has(sub)) {
    cmd.add(['vcs_remote', 'networked'], `npm ${sub} publishes to the registry`);
    return;
  }
  if (sub === 'exec' || sub === 'x') {
    const inner = new Cmd('npx', rest, cmd.text, cmd.stdin, cmd.judge);
    npx(inner);
    cmd.findings.push(...inner.findings);
    return;
  }
  if (sub === 'pack' || sub === 'version' || sub === 'pkg' || sub === 'shrinkwrap' || sub === 'cache' || sub === 'uninstall' || sub === 'remove' ||
      sub === 'rm' || sub === 'r' || sub === 'un' || sub === 'unlink') {
    cmd.add(['mutating'], `npm ${sub} changes the project`);
    cmd.argumentPaths();
    return;
  }
  if (sub === 'edit') {
    cmd.add(['interactive'], 'npm edit opens an editor');
    return;
  }
  // run, test, start, stop, restart, rebuild, explore, and script names.
  runsScripts(cmd, `npm ${sub}`);
};

/** Tools that `npx` usually finds in the project's node_modules rather than downloading. */
const LOCAL_TOOLS = new Set([
  'tsc', 'eslint', 'prettier', 'jest', 'vitest', 'mocha', 'tsx', 'ts-node', 'webpack', 'vite', 'rollup', 'esbuild', 'biome', 'nodemon', 'c8', 'nyc',
  'next', 'nuxt', 'astro', 'svelte-check', 'vue-tsc', 'stylelint', 'lint-staged', 'turbo', 'nx', 'lerna', 'babel', 'swc', 'ava', 'tap', 'playwright',
  'cypress', 'storybook', 'knip', 'depcheck', 'typedoc', 'tsup', 'prisma', 'drizzle-kit', 'husky', 'changeset', 'semantic-release', 'standard', 'xo',
  'oxlint', 'rimraf', 'concurrently', 'cross-env', 'jsdoc', 'sass', 'postcss', 'tailwindcss', 'uvu', 'node-gyp', 'wrangler', 'vsce',
]);

const npx: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'pc', ['package', 'call'], true);
  const tool = opts.operands[0] ? literal(opts.operands[0]) : null;
  const offline = opts.flags.has('no-install') || opts.flags.has('offline') || opts.flags.has('no');
  if (opts.values.has('c') || opts.values.has('call')) {
    for (const word of [...(opts.values.get('c') ?? []), ...(opts.values.get('call') ?? [])]) {
      const value = literal(word);
      if (value === null) cmd.add(['obfuscation'], 'npx -c runs a computed command');
      else cmd.script(value, 'npx -c');
    }
    return;
  }
  if (tool === null) {
    cmd.add(['obfuscation'], 'the npx package is computed');
    return;
  }
  const name = tool?.replace(/@[^/]*$/, '') ?? '';
  if (/^(husky|lefthook|simple-git-hooks|pre-commit|yorkie|ghooks)$/.test(name) && !/^(-v|--version|--help|run)$/.test(literal(opts.operands[1] ?? { raw: '', segs: [] }) ?? '')) {
    cmd.add(['persistence'], `npx ${name} writes git hooks (or core.hooksPath) that run on later commits`);
    return;
  }
  if (!opts.values.has('p') && !opts.values.has('package') && (offline || (LOCAL_TOOLS.has(name) && !tool?.includes('@', 1)))) {
    runsScripts(cmd, `npx ${name}`);
    if (name === 'prisma' || name === 'playwright' || name === 'wrangler') {
      const sub = literal(opts.operands[1] ?? { raw: '', segs: [] });
      if (sub === 'install' || sub === 'deploy' || sub === 'publish' || sub === 'migrate') cmd.add(['networked'], `npx ${name} ${sub} uses the network`);
    }
    opts.operands.slice(1).forEach((word) => cmd.maybePath(word, 'read'));
    return;
  }
  install(cmd, `${cmd.prog} ${tool ?? ''}`.trim());
};

/** `npm config get KEY` of a token or password prints a secret of the user's ~/.npmrc, like `cat ~/.npmrc`. */
function printsCredential(cmd: Cmd, keys: Word[], what: string): void {
  for (const word of keys) {
    const key = literal(word);
    if (key === null || /auth|token|password|passwd|secret|credential|_auth|username/i.test(key)) {
      cmd.add(['host_escape'], `${what} ${word.raw} prints a credential from the user's configuration`);
    }
  }
}

const yarnLike = (tool: 'yarn' | 'pnpm' | 'bun'): Handler => (cmd) => {
  const sub = cmd.vals.find((value) => value === null || !value.startsWith('-'));
  if (sub === null) {
    cmd.add(['obfuscation'], `the ${tool} command is computed`);
    return;
  }
  if (sub === undefined) {
    if (cmd.vals.some((value) => value === '--version' || value === '-v' || value === '--help' || value === '-h')) cmd.add(['read_only'],
        `${tool} prints information`);
    else if (tool === 'bun') cmd.add(['read_only'], 'bun prints help');
    else install(cmd, `${tool} (install)`);
    return;
  }
  const rest = cmd.args.slice(cmd.vals.indexOf(sub) + 1);
  if (/^(install|i|add|up|upgrade|update|dedupe|import|link|create|init|patch-commit|rebuild|fetch)$/.test(sub)) {
    if (sub === 'init' && tool !== 'bun') cmd.add(['mutating'], `${tool} init creates package.json`);
    else install(cmd, `${tool} ${sub}`);
    return;
  }
  if (/^(dlx|x)$/.test(sub) || (tool === 'bun' && sub === 'x')) {
    install(cmd, `${tool} ${sub}`);
    return;
  }
  if (/^(publish|npm|login|logout|pack)$/.test(sub) && sub !== 'pack') {
    cmd.add(['vcs_remote', 'networked'], `${tool} ${sub} talks to the registry`);
    return;
  }
  if (sub === 'config' && /^(get|list)$/.test(rest[0] ? literal(rest[0]) ?? '' : '')) printsCredential(cmd, rest.slice(1), `${tool} config get`);
  if (/^(list|ls|why|info|outdated|licenses|audit|config|bin|root|store|-v|--version|help|version|which)$/.test(sub)) {
    cmd.add(sub === 'outdated' || sub === 'audit' || sub === 'info' ? ['networked'] : ['read_only'], `${tool} ${sub} reports`);
    return;
  }
  if (/^(remove|rm|uninstall|unlink|prune|pack|cache|clean)$/.test(sub)) {
    cmd.add(['mutating'], `${tool} ${sub} changes the project`);
    return;
  }
  if (tool === 'bun' && sub === 'run' && rest[0]) {
    const text = literal(rest[0]);
    if (text !== null && /\.(m?[jt]sx?|cjs)$/.test(text)) cmd.path(rest[0], 'exec');
  }
  if (tool === 'bun' && /\.(m?[jt]sx?|cjs)$/.test(sub)) cmd.path(cmd.args[cmd.vals.indexOf(sub)]!, 'exec');
  const flag = cmd.vals[0];
  if (tool === 'bun' && flag && /^(-e|--eval|-p|--print)$/.test(flag)) {
    // `bun -e CODE`: the code is the word after the flag (which the subcommand search took for one).
    const code = cmd.vals[1];
    if (code === null || code === undefined) cmd.add(['unknown'], `bun ${flag} runs inline code the policy cannot read`);
    else scanInlineCode(cmd, code, `bun ${flag}`);
    return;
  }
  runsScripts(cmd, `${tool} ${sub}`);
};

const pip: Handler = (cmd) => {
  const sub = cmd.vals.find((value) => value === null || !value.startsWith('-'));
  if (sub === undefined) {
    cmd.add(['read_only'], 'pip prints information');
    return;
  }
  if (sub === null) {
    cmd.add(['obfuscation'], 'the pip command is computed');
    return;
  }
  if (/^(install|download|wheel)$/.test(sub)) {
    install(cmd, `${cmd.prog} ${sub}`);
    for (const [at, text] of cmd.vals.entries()) if ((text === '-r' || text === '--requirement' || text === '-c' || text === '--constraint') &&
        cmd.args[at + 1]) cmd.path(cmd.args[at + 1]!, 'read');
    return;
  }
  if (/^(list|show|freeze|check|help|debug|inspect|hash)$/.test(sub)) {
    cmd.add(['read_only'], `${cmd.prog} ${sub} only reads`);
    return;
  }
  if (/^(search|index)$/.test(sub)) {
    cmd.add(['networked'], `${cmd.prog} ${sub} asks the index`);
    return;
  }
  if (sub === 'config') {
    cmd.add(cmd.vals.some((value) => value === 'set' || value === 'unset' || value === 'edit') ? ['host_escape'] : ['read_only'], 'pip config');
    return;
  }
  cmd.add(['mutating'], `${cmd.prog} ${sub} changes installed packages`);
};

/**
 * go: `go env -w`/`-u` writes the user's go configuration (read by every later go command, in
 * every project); `-exec PROG` (go run/test) and `-toolexec PROG` (build, test, vet …) run a
 * program of the caller's choosing around each binary or tool, judged as that command.
 */
const goTool: Handler = (cmd) => {
  const sub = cmd.vals.find((value) => value === null || !value.startsWith('-'));
  if (sub === 'env' && cmd.vals.some((value) => value === '-w' || value === '-u')) {
    cmd.add(['host_escape'], 'go env -w changes the go configuration of this user (~/.config/go/env), which every later go command reads');
    return;
  }
  cmd.vals.forEach((value, i) => {
    const m = /^--?(exec|toolexec)(?:=(.*))?$/.exec(value ?? '');
    if (!m) return;
    const program = m[2] ?? cmd.vals[i + 1];
    cmd.add(['code_execution'], `go -${m[1]} runs a program around each ${m[1] === 'exec' ? 'binary' : 'tool'}`);
    if (program === null || program === undefined) cmd.add(['unknown'], `go -${m[1]} runs a program the policy cannot know`);
    else if (program.trim() !== '') cmd.script(program, `go -${m[1]}`);
  });
  GO_SUBCOMMANDS(cmd);
};

function subcommands(tool: string, table: Record<string, 'install' | 'run' | 'read' | 'mutate' | 'net' | 'publish' | 'host'>, fallback:
    'run' | 'mutate' = 'run'): Handler {
  return (cmd) => {
    const sub = cmd.vals.find((value) => value === null || !value.startsWith('-'));
    if (sub === null) {
      cmd.add(['obfuscation'], `the ${tool} command is computed`);
      return;
    }
    if (sub === undefined) {
      cmd.add(['read_only'], `${tool} prints information`);
      return;
    }
    const kind = Object.hasOwn(table, sub) ? table[sub]! : fallback;
    switch (kind) {
      case 'install':
        install(cmd, `${tool} ${sub}`);
        return;
      case 'run':
        // `go run host/path@version` downloads the module and runs it, like npx.
        if (tool === 'go' && cmd.vals.some((value) => value !== null && /^[^-@][^@]*\.[^@]*\/[^@]*@[^/]+$/.test(value))) {
          install(cmd, `${tool} ${sub} of a remote module`);
          return;
        }
        runsScripts(cmd, `${tool} ${sub}`);
        if (tool === 'cargo' && sub === 'watch') cargoWatch(cmd);
        return;
      case 'read':
        cmd.add(['read_only'], `${tool} ${sub} only reads`);
        return;
      case 'mutate':
        cmd.add(['mutating'], `${tool} ${sub} changes the project`);
        return;
      case 'net':
        cmd.add(['networked'], `${tool} ${sub} uses the network`);
        return;
      case 'publish':
        cmd.add(['vcs_remote', 'networked'], `${tool} ${sub} publishes`);
        return;
      case 'host':
        cmd.add(['host_escape'], `${tool} ${sub} changes the host outside the workspace`);
    }
  };
}

/** apt, brew and friends install into the host system. */
function systemPackages(tool: string): Handler {
  return (cmd) => {
    const sub = cmd.vals.find((value) => value === null || !value.startsWith('-'));
    if (sub !== null && sub !== undefined &&
        new RegExp(
          [
            String.raw`^(list|search|show|info|policy|depends|rdepends|madison|showpkg|stats|query|-Q|-Ss|-Si|outdated|doctor|config`,
            String.raw`|--version|version|leaves|deps|desc|home|cat|uses|which|files)$`,
          ].join(''),
        ).test(sub)) {
      cmd.add(['read_only'], `${tool} ${sub} only reads`);
      return;
    }
    cmd.add(['package_install', 'host_escape'], `${tool} changes the host system's packages`);
  };
}

const GO_SUBCOMMANDS = subcommands('go', {
    get: 'install', install: 'install', mod: 'install', build: 'run', test: 'run', run: 'run', vet: 'run', generate: 'run', fmt: 'mutate',
    clean: 'mutate', version: 'read', env: 'read', list: 'read', doc: 'read', help: 'read', work: 'mutate', tool: 'run', fix: 'mutate',
  });

export const PACKAGE_TOOLS: Record<string, Handler> = {
  npm,
  npx,
  yarn: yarnLike('yarn'),
  pnpm: yarnLike('pnpm'),
  bun: yarnLike('bun'),
  bunx: (cmd) => install(cmd, 'bunx'),
  pnpx: (cmd) => install(cmd, 'pnpx'),
  corepack: (cmd) => install(cmd, 'corepack'),
  pip,
  pip3: pip,
  pipx: subcommands('pipx', { install: 'install', run: 'install', upgrade: 'install', inject: 'install', list: 'read', uninstall: 'host' }),
  uv: subcommands('uv', {
    add: 'install', sync: 'install', pip: 'install', tool: 'install', lock: 'install', venv: 'mutate', run: 'run', init: 'mutate', remove: 'mutate',
    tree: 'read', version: 'read', python: 'install', build: 'run', publish: 'publish', help: 'read',
  }),
  uvx: (cmd) => install(cmd, 'uvx'),
  poetry: subcommands('poetry', {
    install: 'install', add: 'install', update: 'install', lock: 'install', run: 'run', build: 'run', publish: 'publish', show: 'read', check: 'read',
    config: 'host', init: 'mutate', new: 'mutate', remove: 'mutate', shell: 'run', env: 'mutate', version: 'mutate',
  }),
  pipenv: subcommands('pipenv', {
    install: 'install', update: 'install', lock: 'install', sync: 'install', run: 'run', shell: 'run', graph: 'read', check: 'net',
    uninstall: 'mutate',
  }),
  conda: subcommands('conda', {
    install: 'install', create: 'install', update: 'install', upgrade: 'install', list: 'read', info: 'read', search: 'net', run: 'run',
    remove: 'mutate', activate: 'run', config: 'host', env: 'install',
  }),
  mamba: subcommands('mamba', { install: 'install', create: 'install', update: 'install', list: 'read', run: 'run', remove: 'mutate' }),
  cargo: subcommands('cargo', {
    install: 'install', add: 'install', update: 'install', fetch: 'install', search: 'net', publish: 'publish', login: 'host', owner: 'publish',
    yank: 'publish', build: 'run', b: 'run', check: 'run', c: 'run', test: 'run', t: 'run', run: 'run', r: 'run', bench: 'run', doc: 'run',
    clippy: 'run', fmt: 'mutate', clean: 'mutate', new: 'mutate', init: 'mutate', remove: 'mutate', rm: 'mutate', tree: 'read', metadata: 'read',
    version: 'read', '--version': 'read', vendor: 'install', generate_lockfile: 'install', 'generate-lockfile': 'install', fix: 'run',
    uninstall: 'host',
  }),
  go: goTool,
  gem: subcommands('gem', {
    install: 'install', update: 'install', list: 'read', search: 'net', query: 'net', info: 'read', push: 'publish', build: 'run', uninstall: 'host',
    env: 'read', contents: 'read', which: 'read',
  }),
  bundle: subcommands('bundle', {
    install: 'install', update: 'install', add: 'install', exec: 'run', list: 'read', show: 'read', outdated: 'net', check: 'read', config: 'mutate',
    init: 'mutate', lock: 'install', binstubs: 'mutate',
  }),
  composer: subcommands('composer', {
    install: 'install', require: 'install', update: 'install', create_project: 'install', 'create-project': 'install', 'global': 'host', show: 'read',
    validate: 'read', outdated: 'net', run: 'run', 'run-script': 'run', 'dump-autoload': 'mutate', remove: 'mutate', init: 'mutate', exec: 'run',
  }),
  dotnet: subcommands('dotnet', {
    add: 'install', restore: 'install', tool: 'install', new: 'mutate', build: 'run', test: 'run', run: 'run', publish: 'run', pack: 'run',
    format: 'mutate', clean: 'mutate', list: 'read', '--info': 'read', '--version': 'read', nuget: 'publish', remove: 'mutate', sln: 'mutate',
    watch: 'run',
  }),
  mvn: subcommands('mvn', { deploy: 'publish', 'dependency:get': 'install' }),
  gradle: subcommands('gradle', { publish: 'publish' }),
  gradlew: subcommands('gradlew', { publish: 'publish' }),
  rustup: subcommands('rustup', { show: 'read', which: 'read', '--version': 'read' }, 'run'),
  'apt-get': systemPackages('apt-get'),
  apt: systemPackages('apt'),
  'apt-cache': (cmd) => cmd.add(['read_only'], 'apt-cache only reads'),
  dpkg: (cmd) => (cmd.vals.some((value) => value !== null && /^-(l|L|s|S|-list|-listfiles|-status|-search|-print-architecture)$/.test(value)) ?
      cmd.add(['read_only'], 'dpkg lists packages') : systemPackages('dpkg')(cmd)),
  yum: systemPackages('yum'),
  dnf: systemPackages('dnf'),
  apk: systemPackages('apk'),
  pacman: systemPackages('pacman'),
  zypper: systemPackages('zypper'),
  brew: systemPackages('brew'),
  port: systemPackages('port'),
  snap: systemPackages('snap'),
  flatpak: systemPackages('flatpak'),
  nix: systemPackages('nix'),
  'nix-env': systemPackages('nix-env'),
  choco: systemPackages('choco'),
  winget: systemPackages('winget'),
  scoop: systemPackages('scoop'),
  sdk: systemPackages('sdk'),
  asdf: systemPackages('asdf'),
  mise: systemPackages('mise'),
  nvm: systemPackages('nvm'),
  pyenv: systemPackages('pyenv'),
};
