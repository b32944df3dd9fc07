// A small scripted "agent" for `npm start`: once an editor window is open on the demo (its vault host
// is up), it runs a few commands in the demo vault through `avfs proxy exec`, as a coding agent
// would: one reads, two change files (each after a checkpoint), and one needs approval (inline
// Python that opens a socket), so the newcomer sees the notification, answers it, and watches the
// runs and their diffs in the Executions view.
//
//   node scripts/demo-agent.mjs <avfs home>      (scripts/start.mjs starts it)
//
// It stops, with the command it is running, when its standard input closes: start.mjs holds the
// other end, so the agent ends with it however it ends (Ctrl-C, a crash, SIGKILL).
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const cli = join(root, 'dist', 'avfs.js');
const home = process.argv[2];
if (!home) {
  process.stderr.write('usage: node scripts/demo-agent.mjs <avfs home>\n');
  process.exit(2);
}
const env = { ...process.env, AVFS_HOME: home };
const say = (line) => process.stdout.write(`[agent] ${line}\n`);

/** The commands: what the agent says it does, and the shell line it runs in the vault. */
const STEPS = [
  { why: 'reads the code it is asked to change', shell: 'grep -n "def greet" -A3 src/util.py' },
  {
    why: 'adds a --shout option to the command-line tool',
    shell: `cat > src/cli.py <<'EOF'
import sys

from util import greet

args = [a for a in sys.argv[1:] if a != "--shout"]
text = greet(args[0] if args else "world")
print(text.upper() if "--shout" in sys.argv else text)
EOF`,
  },
  {
    why: 'picks a free port for the dev server (it opens a socket: this one needs your approval)',
    // Short enough (under 120 characters) for the notification to show it whole, with Approve Once.
    shell: `python3 -c 'import socket; s=socket.socket(); s.bind(("",0)); open(".env","w").write("PORT=%d\\n"%s.getsockname()[1])'`,
  },
  { why: 'documents the new option', shell: `printf '\\nRun it: python3 src/cli.py NAME [--shout]\\n' >> README.md` },
];

let current;
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  // The run in the host is cancelled when its CLI goes; nothing of the agent outlives this.
  current?.kill('SIGTERM');
  process.exit(0);
};
process.stdin.on('end', stop).on('close', stop).resume();
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, stop);

/** The host runs once an editor window opened the demo (its extension starts it). */
function hostRunning() {
  const r = spawnSync(process.execPath, [cli, '--json', 'host', 'status'], { env, encoding: 'utf8' });
  try {
    return JSON.parse(r.stdout).running === true;
  } catch {
    return false;
  }
}

function run(shell) {
  return new Promise((resolve) => {
    current = spawn(process.execPath, [cli, '--json', '--vault', 'demo', 'proxy', 'exec', '--shell', shell], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    current.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    current.stderr.resume();
    current.on('close', (code) => {
      current = undefined;
      try {
        resolve({ code, envelope: JSON.parse(out) });
      } catch {
        resolve({ code, envelope: undefined });
      }
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

say(`pid ${process.pid}: waiting for an editor window on the demo (open the address below), then it runs ${STEPS.length} commands in vault demo`);
while (!hostRunning()) await sleep(1000);
// Time for the window to finish loading and show its views.
await sleep(4000);
for (const step of STEPS) {
  say(`${step.why}: ${step.shell.split('\n')[0]}${step.shell.includes('\n') ? ' …' : ''}`);
  const { code, envelope } = await run(step.shell);
  const r = envelope?.result;
  if (!r) say(`  avfs proxy exec exited ${code} without an envelope`);
  else {
    const approval = r.approval ? `, ${r.approval.outcome}${r.approval.by ? ` by ${r.approval.by}` : ''}` : '';
    say(`  ${r.state} (exit ${r.exit_code ?? '-'}${approval})${r.checkpoint ? `, checkpoint ${r.checkpoint}` : ''}${r.changed_files.length ? `, changed ${r.changed_files.join(' ')}` : ''}`);
  }
  await sleep(2500);
}
say('done: every run, its output and its diff are in the Executions view (the AVFS tab of the panel)');
// Stays until start.mjs ends (its stdin closes), so it is stopped the same way either way.
