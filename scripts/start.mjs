// `npm start`: the product, opened. Builds, installs the editor once (code-server and its Node, cached
// in .vscode-test/), makes a demo avfs home with vaults, files, checkpoints and a fork (with the real
// CLI), installs the extension from its VSIX (built from this checkout, cached by its inputs' hash:
// scripts/vscode/installed.mjs), starts code-server on 127.0.0.1 with a window on the demo vault as
// a person has it (no smoke-test driver, so approvals pop up as toasts), with the AVFS view open, and
// prints the address. Ctrl-C stops it all.
//
//   npm start [-- --port <n>] [--dir <state dir>] [--fresh] [--no-agent]
//
// --dir   where the demo home, code-server's state and the workspace file live (default .avfs-start/)
// --fresh makes the demo vaults again (otherwise they are kept between runs, with your changes)
// --port  the port to listen on (default: a free one)
// --no-agent  do not start the scripted agent (scripts/demo-agent.mjs), which runs a few commands in
//         the demo vault through `avfs proxy exec` once the window is open, one needing approval
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildProduct } from './build.mjs';
import { QUIET_SETTINGS, startCodeServer } from './vscode/codeServer.mjs';
import { ensureCodeServer } from './vscode/install.mjs';
import { ensureInstalled } from './vscode/installed.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: opt } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    dir: { type: 'string', default: join(root, '.avfs-start') },
    fresh: { type: 'boolean', default: false },
    'no-agent': { type: 'boolean', default: false },
  },
});
const started = Date.now();
const seconds = () => ((Date.now() - started) / 1000).toFixed(1);
const say = (line) => process.stdout.write(`[start] ${line}\n`);
const dir = resolve(opt.dir);
const home = join(dir, 'home');
const cli = join(root, 'dist', 'avfs.js');

say('building the extension and the avfs CLI');
await buildProduct();
await ensureCodeServer({ log: say });

if (opt.fresh) rmSync(home, { recursive: true, force: true });
if (!existsSync(join(home, 'vaults', 'demo.avfs'))) {
  say(`creating the demo vaults in ${home}`);
  try {
    makeDemo();
  } catch (e) {
    // Half a demo would be taken for a whole one next time.
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
} else {
  say(`using the demo vaults in ${home} (--fresh makes them again)`);
}

// A workspace whose folder is the demo vault itself (served by the extension's file system), which
// opens the AVFS view and the vault's README on start.
const workspace = join(dir, 'demo.code-workspace');
writeFileSync(
  workspace,
  `${JSON.stringify({ folders: [{ uri: 'avfs://demo/', name: 'demo (vault)' }], settings: { 'avfs.showViewOnStartup': true, 'workbench.startupEditor': 'readme' } }, null, 2)}\n`,
);

// Installed as a person installs it: development mode would need the smoke-test driver, under
// which the workbench shows no toasts (an approval would wait unseen in the Notification Center).
const stateDir = join(dir, 'code-server');
const installed = await ensureInstalled({ stateDir, log: say });
say(installed.built || installed.installed ? `the extension is installed from ${installed.vsix}` : `the extension is installed already (its sources did not change: ${installed.hash})`);

const server = await startCodeServer({
  stateDir,
  smokeTestDriver: false,
  port: Number(opt.port),
  settings: QUIET_SETTINGS,
  // The extension host inherits this environment: its vault host serves the demo home.
  env: { AVFS_HOME: home },
  log: say,
});
// The scripted agent waits for the window's vault host, then runs its commands. Its stdin is a pipe
// from this process: when this process ends, however it ends, the agent sees it close and stops.
const agent = opt['no-agent']
  ? undefined
  : spawn(process.execPath, [join(root, 'scripts', 'demo-agent.mjs'), home], { stdio: ['pipe', 'inherit', 'inherit'] });
const agentExited = agent ? new Promise((r) => agent.once('exit', r)) : Promise.resolve();
let stopping = false;
const stop = async (why) => {
  if (stopping) return;
  stopping = true;
  say(`${why}: stopping the agent and code-server`);
  agent?.stdin.end();
  await Promise.all([agentExited, server.stop()]);
  // The window's vault host is nobody's child (it outlives windows): stopped with the rest.
  spawnSync(process.execPath, [cli, 'host', 'stop'], { env: { ...process.env, AVFS_HOME: home }, stdio: 'ignore', timeout: 30_000 });
  process.exit(0);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(signal, () => void stop(signal));
process.on('exit', () => {
  server.killNow();
  if (agent && agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
});
void server.exited.then(({ code, signal }) => {
  if (stopping) return;
  say(`code-server exited (${signal ?? `code ${code}`})`);
  process.exit(1);
});

const url = server.workbenchUrl({ workspace });
process.stdout.write(
  [
    '',
    `AVFS in VS Code is ready (${seconds()} s). Open this address in a browser on this machine:`,
    '',
    `  ${url}`,
    '',
    'The CLI works on the same vaults (the editor shows its changes as they happen):',
    `  export AVFS_HOME=${home}`,
    `  alias avfs="node ${cli}"`,
    '  avfs vault list; avfs --vault demo write /notes.md "hello from the terminal"',
    '',
    ...(agent
      ? [
          'Once the window is open, a scripted agent runs a few commands in vault demo through `avfs proxy exec`;',
          'one needs your approval: answer the notification, then watch the runs and their diffs in the',
          'AVFS tab of the panel (Executions). Its lines start with [agent].',
          '',
        ]
      : []),
    'Ctrl-C stops code-server.',
    '',
  ].join('\n'),
);

/** The demo: a small project with two checkpoints and work since, a fork trying something, and a second vault. */
function makeDemo() {
  mkdirSync(home, { recursive: true });
  const run = (args, input) => {
    const r = spawnSync(process.execPath, [cli, ...args], { env: { ...process.env, AVFS_HOME: home }, encoding: 'utf8', input });
    if (r.status !== 0) throw new Error(`avfs ${args.join(' ')} failed (exit ${r.status}): ${r.stderr || r.stdout}`);
  };
  const avfs = (...args) => run(args, '');
  // Contents go through standard input: a text may start with "-".
  const write = (vault, path, text) => run(['--vault', vault, 'write', path, '--parents'], text);
  avfs('vault', 'create', 'demo', '--max-size-mb', '256');
  write('demo', '/README.md', '# demo\n\nA small Python service an agent works on, in a vault: every change can be checkpointed, compared and undone.\n');
  write('demo', '/src/app.py', 'from util import greet\n\nprint(greet("world"))\n');
  write('demo', '/src/util.py', 'def greet(name):\n    return f"Hello, {name}"\n');
  write('demo', '/tests/test_util.py', 'from util import greet\n\n\ndef test_greet():\n    assert greet("x") == "Hello, x"\n');
  avfs('--vault', 'demo', 'checkpoint', 'save', 'scaffold', '-m', 'before the agent started');
  write('demo', '/src/util.py', 'def greet(name, punctuation="!"):\n    """Greets someone by name."""\n    return f"Hello, {name}{punctuation}"\n');
  write('demo', '/src/cli.py', 'import sys\n\nfrom util import greet\n\nprint(greet(sys.argv[1]))\n');
  write('demo', '/tests/test_util.py', 'from util import greet\n\n\ndef test_greet():\n    assert greet("x") == "Hello, x!"\n');
  avfs('--vault', 'demo', 'checkpoint', 'save', 'add-cli', '-m', 'greeting from the command line');
  write('demo', '/src/app.py', 'from util import greet\n\nfor name in ("world", "agents"):\n    print(greet(name))\n');
  write('demo', '/NOTES.md', '- try an async server in a fork\n');
  avfs('vault', 'fork', 'demo', 'demo-try-async');
  write('demo-try-async', '/src/server.py', 'import asyncio\n\n\nasync def main():\n    await asyncio.sleep(0)\n\nasyncio.run(main())\n');
  avfs('--vault', 'demo-try-async', 'checkpoint', 'save', 'async-skeleton');
  avfs('vault', 'create', 'scratch');
  write('scratch', '/todo.txt', 'nothing yet\n');
  avfs('vault', 'use', 'demo');
}
