/**
 * Package managers and build tools. Installing from a registry needs approval (it downloads and
 * may run install scripts); running the project's own scripts and builds gets a checkpoint;
 * system package managers write outside the workspace and are denied.
 */
import type { Handler } from '../classify';
import { Cmd, parseOpts } from '../command';
import { literal } from '../words';

function install(c: Cmd, what: string): void {
  c.add(['package_install', 'networked', 'code_execution'], `${what} downloads packages and may run their install scripts`);
  if (c.vals.some((v) => v === '-g' || v === '--global' || v === '--location=global' || v === '--user' || v === '--system' || v === '--break-system-packages')) {
    c.add(['host_escape'], `${what} installs outside the workspace (global/user)`);
  }
  for (const [i, v] of c.vals.entries()) {
    if ((v === '--prefix' || v === '--target' || v === '-t' || v === '--root' || v === '--cache' || v === '--global-folder' || v === '--modules-folder' || v === '--dir' || v === '--cwd') && c.args[i + 1]) c.path(c.args[i + 1]!, 'write', 'installs into');
    else if (v !== null && /^--(prefix|target|root|cache|global-folder|modules-folder|dir|cwd)=/.test(v)) c.maybePath(c.args[i]!, 'write');
    else if (v !== null && (v.startsWith('/') || v.startsWith('~') || v.startsWith('../'))) c.path(c.args[i]!, 'read', 'installs from');
  }
}

function runsScripts(cmd: Cmd, what: string): void {
  cmd.add(['code_execution', 'mutating'], `${what} runs the project's scripts`);
  // --script-shell=PROG runs every script through PROG; --prefix/-C run another directory's scripts.
  const opts = parseOpts(cmd.args, 'C', ['script-shell', 'prefix', 'cwd', 'dir']);
  for (const shell of opts.values.get('script-shell') ?? []) cmd.runs(shell, `${what} --script-shell`);
  for (const dir of ['prefix', 'cwd', 'dir', 'C'].flatMap((key) => opts.values.get(key) ?? [])) cmd.path(dir, 'read', 'runs the scripts of');
  cmd.argumentPaths();
}

const NPM_READ = new Set(['ls', 'list', 'll', 'la', 'outdated', 'why', 'explain', 'help', 'help-search', 'prefix', 'root', 'bin', 'config-get', 'version-check', 'doctor', 'fund', 'query', 'sbom', 'get', 'find-dupes', '-v', '--version', '-h', '--help', 'completion']);
const NPM_NET_READ = new Set(['view', 'v', 'info', 'show', 'search', 's', 'se', 'find', 'audit', 'ping', 'whoami', 'access', 'owner', 'team', 'dist-tag', 'docs', 'home', 'bugs', 'repo', 'star', 'stars', 'unstar', 'org', 'hook', 'profile', 'token']);
const NPM_INSTALL = new Set(['install', 'i', 'in', 'ins', 'inst', 'insta', 'instal', 'isnt', 'isnta', 'isntal', 'isntall', 'add', 'ci', 'clean-install', 'install-clean', 'ic', 'update', 'up', 'upgrade', 'udpate', 'install-test', 'it', 'install-ci-test', 'cit', 'link', 'ln', 'dedupe', 'ddp', 'prune', 'create', 'init', 'innit']);
const NPM_PUBLISH = new Set(['publish', 'unpublish', 'deprecate', 'adduser', 'login', 'logout', 'add-user', 'undeprecate']);

const npm: Handler = (c) => {
  const sub = c.vals.find((v) => v === null || !v.startsWith('-')) ?? c.vals[0];
  const at = sub === undefined ? -1 : c.vals.indexOf(sub);
  const rest = c.args.slice(at + 1);
  if (sub === undefined || sub === '--version' || sub === '-v' || sub === '--help' || sub === '-h') {
    c.add(['read_only'], 'npm prints information');
    return;
  }
  if (sub === null) {
    c.add(['obfuscation'], 'the npm command is computed');
    return;
  }
  if (NPM_READ.has(sub)) {
    c.add(['read_only'], `npm ${sub} only reads`);
    return;
  }
  if (NPM_NET_READ.has(sub)) {
    c.add(['networked'], `npm ${sub} asks the registry`);
    if (sub === 'token') c.add(['host_escape'], 'npm token handles host credentials');
    if (sub === 'audit' && rest.some((w) => literal(w) === 'fix')) install(c, 'npm audit fix');
    return;
  }
  if (sub === 'config' || sub === 'c' || sub === 'set') {
    const op = literal(rest[0] ?? { raw: '', segs: [] });
    if (op === 'get' || op === 'list' || op === 'ls') c.add(['read_only'], 'npm config reads settings');
    else c.add(['host_escape'], 'npm config writes the user\'s ~/.npmrc');
    return;
  }
  if (NPM_INSTALL.has(sub)) {
    if ((sub === 'init' || sub === 'innit') && !rest.some((w) => /^(-y|--yes)$/.test(literal(w) ?? '')) && rest.filter((w) => !(literal(w) ?? '-').startsWith('-')).length === 0) {
      c.add(['mutating', 'interactive'], 'npm init asks questions');
      return;
    }
    install(c, `npm ${sub}`);
    return;
  }
  if (NPM_PUBLISH.has(sub)) {
    c.add(['vcs_remote', 'networked'], `npm ${sub} publishes to the registry`);
    return;
  }
  if (sub === 'exec' || sub === 'x') {
    const inner = new Cmd('npx', rest, c.text, c.stdin, c.judge);
    npx(inner);
    c.findings.push(...inner.findings);
    return;
  }
  if (sub === 'pack' || sub === 'version' || sub === 'pkg' || sub === 'shrinkwrap' || sub === 'cache' || sub === 'uninstall' || sub === 'remove' || sub === 'rm' || sub === 'r' || sub === 'un' || sub === 'unlink') {
    c.add(['mutating'], `npm ${sub} changes the project`);
    return;
  }
  if (sub === 'edit') {
    c.add(['interactive'], 'npm edit opens an editor');
    return;
  }
  // run, test, start, stop, restart, rebuild, explore, and script names.
  runsScripts(c, `npm ${sub}`);
};

/** Tools that `npx` usually finds in the project's node_modules rather than downloading. */
const LOCAL_TOOLS = new Set(['tsc', 'eslint', 'prettier', 'jest', 'vitest', 'mocha', 'tsx', 'ts-node', 'webpack', 'vite', 'rollup', 'esbuild', 'biome', 'nodemon', 'c8', 'nyc', 'next', 'nuxt', 'astro', 'svelte-check', 'vue-tsc', 'stylelint', 'lint-staged', 'turbo', 'nx', 'lerna', 'babel', 'swc', 'ava', 'tap', 'playwright', 'cypress', 'storybook', 'knip', 'depcheck', 'typedoc', 'tsup', 'prisma', 'drizzle-kit', 'husky', 'changeset', 'semantic-release', 'standard', 'xo', 'oxlint', 'rimraf', 'concurrently', 'cross-env', 'jsdoc', 'sass', 'postcss', 'tailwindcss', 'uvu', 'node-gyp', 'wrangler', 'vsce']);

const npx: Handler = (c) => {
  const o = parseOpts(c.args, 'pc', ['package', 'call'], true);
  const tool = o.operands[0] ? literal(o.operands[0]) : null;
  const offline = o.flags.has('no-install') || o.flags.has('offline') || o.flags.has('no');
  if (o.values.has('c') || o.values.has('call')) {
    for (const w of [...(o.values.get('c') ?? []), ...(o.values.get('call') ?? [])]) {
      const v = literal(w);
      if (v === null) c.add(['obfuscation'], 'npx -c runs a computed command');
      else c.script(v, 'npx -c');
    }
    return;
  }
  if (tool === null) {
    c.add(['obfuscation'], 'the npx package is computed');
    return;
  }
  const name = tool?.replace(/@[^/]*$/, '') ?? '';
  if (!o.values.has('p') && !o.values.has('package') && (offline || (LOCAL_TOOLS.has(name) && !tool?.includes('@', 1)))) {
    runsScripts(c, `npx ${name}`);
    if (name === 'prisma' || name === 'playwright' || name === 'wrangler') {
      const sub = literal(o.operands[1] ?? { raw: '', segs: [] });
      if (sub === 'install' || sub === 'deploy' || sub === 'publish' || sub === 'migrate') c.add(['networked'], `npx ${name} ${sub} uses the network`);
    }
    o.operands.slice(1).forEach((w) => c.maybePath(w, 'read'));
    return;
  }
  install(c, `${c.prog} ${tool ?? ''}`.trim());
};

const yarnLike = (tool: 'yarn' | 'pnpm' | 'bun'): Handler => (c) => {
  const sub = c.vals.find((v) => v === null || !v.startsWith('-'));
  if (sub === null) {
    c.add(['obfuscation'], `the ${tool} command is computed`);
    return;
  }
  if (sub === undefined) {
    if (c.vals.some((v) => v === '--version' || v === '-v' || v === '--help' || v === '-h')) c.add(['read_only'], `${tool} prints information`);
    else if (tool === 'bun') c.add(['read_only'], 'bun prints help');
    else install(c, `${tool} (install)`);
    return;
  }
  const rest = c.args.slice(c.vals.indexOf(sub) + 1);
  if (/^(install|i|add|up|upgrade|update|dedupe|import|link|create|init|patch-commit|rebuild|fetch)$/.test(sub)) {
    if (sub === 'init' && tool !== 'bun') c.add(['mutating'], `${tool} init creates package.json`);
    else install(c, `${tool} ${sub}`);
    return;
  }
  if (/^(dlx|x)$/.test(sub) || (tool === 'bun' && sub === 'x')) {
    install(c, `${tool} ${sub}`);
    return;
  }
  if (/^(publish|npm|login|logout|pack)$/.test(sub) && sub !== 'pack') {
    c.add(['vcs_remote', 'networked'], `${tool} ${sub} talks to the registry`);
    return;
  }
  if (/^(list|ls|why|info|outdated|licenses|audit|config|bin|root|store|-v|--version|help|version|which)$/.test(sub)) {
    c.add(sub === 'outdated' || sub === 'audit' || sub === 'info' ? ['networked'] : ['read_only'], `${tool} ${sub} reports`);
    return;
  }
  if (/^(remove|rm|uninstall|unlink|prune|pack|cache|clean)$/.test(sub)) {
    c.add(['mutating'], `${tool} ${sub} changes the project`);
    return;
  }
  if (tool === 'bun' && sub === 'run' && rest[0]) {
    const v = literal(rest[0]);
    if (v !== null && /\.(m?[jt]sx?|cjs)$/.test(v)) c.path(rest[0], 'exec');
  }
  if (tool === 'bun' && /\.(m?[jt]sx?|cjs)$/.test(sub)) c.path(c.args[c.vals.indexOf(sub)]!, 'exec');
  if (tool === 'bun' && (sub === '-e' || sub === '--eval')) c.add(['unknown'], 'bun -e runs inline code');
  runsScripts(c, `${tool} ${sub}`);
};

const pip: Handler = (c) => {
  const sub = c.vals.find((v) => v === null || !v.startsWith('-'));
  if (sub === undefined) {
    c.add(['read_only'], 'pip prints information');
    return;
  }
  if (sub === null) {
    c.add(['obfuscation'], 'the pip command is computed');
    return;
  }
  if (/^(install|download|wheel)$/.test(sub)) {
    install(c, `${c.prog} ${sub}`);
    for (const [i, v] of c.vals.entries()) if ((v === '-r' || v === '--requirement' || v === '-c' || v === '--constraint') && c.args[i + 1]) c.path(c.args[i + 1]!, 'read');
    return;
  }
  if (/^(list|show|freeze|check|help|debug|inspect|hash)$/.test(sub)) {
    c.add(['read_only'], `${c.prog} ${sub} only reads`);
    return;
  }
  if (/^(search|index)$/.test(sub)) {
    c.add(['networked'], `${c.prog} ${sub} asks the index`);
    return;
  }
  if (sub === 'config') {
    c.add(c.vals.some((v) => v === 'set' || v === 'unset' || v === 'edit') ? ['host_escape'] : ['read_only'], 'pip config');
    return;
  }
  c.add(['mutating'], `${c.prog} ${sub} changes installed packages`);
};

function subcommands(tool: string, table: Record<string, 'install' | 'run' | 'read' | 'mutate' | 'net' | 'publish' | 'host'>, fallback: 'run' | 'mutate' = 'run'): Handler {
  return (c) => {
    const sub = c.vals.find((v) => v === null || !v.startsWith('-'));
    if (sub === null) {
      c.add(['obfuscation'], `the ${tool} command is computed`);
      return;
    }
    if (sub === undefined) {
      c.add(['read_only'], `${tool} prints information`);
      return;
    }
    const kind = table[sub] ?? fallback;
    switch (kind) {
      case 'install':
        install(c, `${tool} ${sub}`);
        return;
      case 'run':
        runsScripts(c, `${tool} ${sub}`);
        return;
      case 'read':
        c.add(['read_only'], `${tool} ${sub} only reads`);
        return;
      case 'mutate':
        c.add(['mutating'], `${tool} ${sub} changes the project`);
        return;
      case 'net':
        c.add(['networked'], `${tool} ${sub} uses the network`);
        return;
      case 'publish':
        c.add(['vcs_remote', 'networked'], `${tool} ${sub} publishes`);
        return;
      case 'host':
        c.add(['host_escape'], `${tool} ${sub} changes the host outside the workspace`);
    }
  };
}

/** apt, brew and friends install into the host system. */
function systemPackages(tool: string): Handler {
  return (c) => {
    const sub = c.vals.find((v) => v === null || !v.startsWith('-'));
    if (sub !== null && sub !== undefined && /^(list|search|show|info|policy|depends|rdepends|madison|showpkg|stats|query|-Q|-Ss|-Si|outdated|doctor|config|--version|version|leaves|deps|desc|home|cat|uses|which|files)$/.test(sub)) {
      c.add(['read_only'], `${tool} ${sub} only reads`);
      return;
    }
    c.add(['package_install', 'host_escape'], `${tool} changes the host system's packages`);
  };
}

export const PACKAGE_TOOLS: Record<string, Handler> = {
  npm,
  npx,
  yarn: yarnLike('yarn'),
  pnpm: yarnLike('pnpm'),
  bun: yarnLike('bun'),
  bunx: (c) => install(c, 'bunx'),
  pnpx: (c) => install(c, 'pnpx'),
  corepack: (c) => install(c, 'corepack'),
  pip,
  pip3: pip,
  pipx: subcommands('pipx', { install: 'install', run: 'install', upgrade: 'install', inject: 'install', list: 'read', uninstall: 'host' }),
  uv: subcommands('uv', { add: 'install', sync: 'install', pip: 'install', tool: 'install', lock: 'install', venv: 'mutate', run: 'run', init: 'mutate', remove: 'mutate', tree: 'read', version: 'read', python: 'install', build: 'run', publish: 'publish', help: 'read' }),
  uvx: (c) => install(c, 'uvx'),
  poetry: subcommands('poetry', { install: 'install', add: 'install', update: 'install', lock: 'install', run: 'run', build: 'run', publish: 'publish', show: 'read', check: 'read', config: 'host', init: 'mutate', new: 'mutate', remove: 'mutate', shell: 'run', env: 'mutate', version: 'mutate' }),
  pipenv: subcommands('pipenv', { install: 'install', update: 'install', lock: 'install', sync: 'install', run: 'run', shell: 'run', graph: 'read', check: 'net', uninstall: 'mutate' }),
  conda: subcommands('conda', { install: 'install', create: 'install', update: 'install', upgrade: 'install', list: 'read', info: 'read', search: 'net', run: 'run', remove: 'mutate', activate: 'run', config: 'host', env: 'install' }),
  mamba: subcommands('mamba', { install: 'install', create: 'install', update: 'install', list: 'read', run: 'run', remove: 'mutate' }),
  cargo: subcommands('cargo', { install: 'install', add: 'install', update: 'install', fetch: 'install', search: 'net', publish: 'publish', login: 'host', owner: 'publish', yank: 'publish', build: 'run', b: 'run', check: 'run', c: 'run', test: 'run', t: 'run', run: 'run', r: 'run', bench: 'run', doc: 'run', clippy: 'run', fmt: 'mutate', clean: 'mutate', new: 'mutate', init: 'mutate', remove: 'mutate', rm: 'mutate', tree: 'read', metadata: 'read', version: 'read', '--version': 'read', vendor: 'install', generate_lockfile: 'install', 'generate-lockfile': 'install', fix: 'run', uninstall: 'host' }),
  go: subcommands('go', { get: 'install', install: 'install', mod: 'install', build: 'run', test: 'run', run: 'run', vet: 'run', generate: 'run', fmt: 'mutate', clean: 'mutate', version: 'read', env: 'read', list: 'read', doc: 'read', help: 'read', work: 'mutate', tool: 'run', fix: 'mutate' }),
  gem: subcommands('gem', { install: 'install', update: 'install', list: 'read', search: 'net', query: 'net', info: 'read', push: 'publish', build: 'run', uninstall: 'host', env: 'read', contents: 'read', which: 'read' }),
  bundle: subcommands('bundle', { install: 'install', update: 'install', add: 'install', exec: 'run', list: 'read', show: 'read', outdated: 'net', check: 'read', config: 'mutate', init: 'mutate', lock: 'install', binstubs: 'mutate' }),
  composer: subcommands('composer', { install: 'install', require: 'install', update: 'install', create_project: 'install', 'create-project': 'install', 'global': 'host', show: 'read', validate: 'read', outdated: 'net', run: 'run', 'run-script': 'run', 'dump-autoload': 'mutate', remove: 'mutate', init: 'mutate', exec: 'run' }),
  dotnet: subcommands('dotnet', { add: 'install', restore: 'install', tool: 'install', new: 'mutate', build: 'run', test: 'run', run: 'run', publish: 'run', pack: 'run', format: 'mutate', clean: 'mutate', list: 'read', '--info': 'read', '--version': 'read', nuget: 'publish', remove: 'mutate', sln: 'mutate', watch: 'run' }),
  mvn: subcommands('mvn', { deploy: 'publish', 'dependency:get': 'install' }),
  gradle: subcommands('gradle', { publish: 'publish' }),
  gradlew: subcommands('gradlew', { publish: 'publish' }),
  rustup: subcommands('rustup', { show: 'read', which: 'read', '--version': 'read' }, 'run'),
  'apt-get': systemPackages('apt-get'),
  apt: systemPackages('apt'),
  'apt-cache': (c) => c.add(['read_only'], 'apt-cache only reads'),
  dpkg: (c) => (c.vals.some((v) => v !== null && /^-(l|L|s|S|-list|-listfiles|-status|-search|-print-architecture)$/.test(v)) ? c.add(['read_only'], 'dpkg lists packages') : systemPackages('dpkg')(c)),
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
