// Leader of code-server's process group: `node groupLeader.mjs <program> <args…>`, spawned detached
// (a new group) with a pipe on stdin. It runs the program in its group and exits with its status.
// Its other job is the case where its owner dies without stopping the group (even by SIGKILL): the
// pipe then reaches end of file, and it stops the whole group: SIGTERM, up to 5 s for the others to
// exit, then SIGKILL. It ignores SIGTERM itself, so a group-wide SIGTERM ends the program first and
// this process reports how it ended.
import { spawn } from 'node:child_process';
import { groupMembers } from './proc.mjs';

const [program, ...args] = process.argv.slice(2);
const child = spawn(program, args, { stdio: ['ignore', 'inherit', 'inherit'] });
process.on('SIGTERM', () => {});
child.on('error', (e) => {
  process.stderr.write(`groupLeader: cannot start ${program}: ${e.message}\n`);
  process.exit(127);
});
child.on('exit', (code, signal) => process.exit(code ?? 128 + (signal === 'SIGKILL' ? 9 : 15)));

process.stdin.resume();
process.stdin.on('close', async () => {
  const others = () => groupMembers(process.pid).filter((p) => p.pid !== process.pid);
  process.kill(0, 'SIGTERM');
  for (let waited = 0; waited < 5000 && others().length > 0; waited += 50) await new Promise((r) => setTimeout(r, 50));
  process.kill(0, 'SIGKILL');
});
