/**
 * gdb and lldb: they run the program being debugged (code execution, with a checkpoint), attach
 * to host processes when asked (`-p`, `attach`: system), and run whatever their command options
 * say: `-ex '!cmd'`, `-ex 'shell cmd'`, `platform shell cmd` are judged as if typed here;
 * python, guile and `call system()` run code the policy does not read.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { literal, litWord, type Word } from '../words';

/** One debugger command line, from -ex / -o / a batch option. */
function debuggerCommand(cmd: Cmd, text: string): void {
  const line = text.trim();
  const shell = /^(?:!|shell\s+|platform\s+shell\s+(?:-\S+\s+)*|pipe\s+[^|]*\|\s*|\|\s*[^|]*\|\s*|set\s+exec-wrapper\s+|make\s+)(.*)$/s.exec(line);
  if (shell) {
    const program = line.startsWith('make') ? `make ${shell[1]}` : shell[1]!;
    cmd.runs(litWord(program), `${cmd.prog} ${line.split(/\s+/)[0]}`);
    return;
  }
  if (/^(py|python|python-interactive|pi|guile|gu|script|command\s+script)\b|\bsystem\s*\(|\bexecve?\w*\s*\(|\bpopen\s*\(/.test(line)) {
    cmd.add(['code_execution', 'unknown'], `${cmd.prog} runs code the policy does not read (${line.slice(0, 40)})`);
  }
  if (/^(attach|at|process\s+attach|detach)\b/.test(line)) cmd.add(['system'], `${cmd.prog} ${line} attaches to a host process`);
  if (/^(target\s+(extended-)?remote|gdb-remote|platform\s+connect|process\s+connect)\b/.test(line)) cmd.add(['networked'],
      `${cmd.prog} connects to a remote target`);
  for (const found of line.matchAll(/^(?:dump|append)\s+\S+(?:\s+\S+)?\s+(\S+)\s|^(?:set\s+logging\s+file|generate-core-file|gcore|save\s+\S+)\s+(\S+)/g)) {
    cmd.path(litWord((found[1] ?? found[2])!, false), 'write');
  }
  for (const found of line.matchAll(/^(?:source|so|command\s+source)\s+(\S+)/g)) {
    cmd.path(litWord(found[1]!, false), 'read');
    cmd.add(['code_execution', 'unknown'], `${cmd.prog} runs the commands in ${found[1]}`);
  }
}

function judgeCommands(cmd: Cmd, words: Word[]): void {
  for (const word of words) {
    const text = cmd.codeText(word, `${cmd.prog} command`);
    if (text !== null) debuggerCommand(cmd, text);
  }
}

/** The program to debug and its arguments run, as if typed here. */
function debuggee(cmd: Cmd, words: Word[]): void {
  if (words.length > 0) cmd.nested(words, { kind: 'inherit' });
}

const gdb: Handler = (cmd) => {
  // gdb takes single-dash long options too (-ex, -batch, -p): map them to the double-dash form.
  const args = cmd.args.map((word) => {
    const text = literal(word);
    return text !== null && /^-[a-z]{2,}(=|$)/.test(text) ? litWord('-' + text) : word;
  });
  const argsAt = args.findIndex((word) => literal(word) === '--args');
  const opts = parseOpts(argsAt >= 0 ? args.slice(0, argsAt) : args, 'pxcdsebDi', [
    'ex', 'eval-command', 'iex', 'init-eval-command', 'x', 'command', 'ix', 'init-command', 'pid', 'core', 'directory', 'cd', 'symbols', 'exec',
    'se', 'data-directory', 'tty', 'interpreter', 'init-file',
  ]);
  cmd.add(['code_execution', 'mutating'], 'gdb runs the program it debugs');
  if (opts.values.has('p') || opts.values.has('pid') || opts.values.has('c') && /^\d+$/.test(literal(opts.values.get('c')![0]!) ?? '')) cmd.add(
      ['system'], 'gdb -p attaches to a host process');
  judgeCommands(cmd, ['ex', 'eval-command', 'iex', 'init-eval-command'].flatMap((key) => opts.values.get(key) ?? []));
  for (const file of ['x', 'command', 'ix', 'init-command', 'init-file'].flatMap((key) => opts.values.get(key) ?? [])) {
    cmd.path(file, 'read');
    cmd.add(['code_execution', 'unknown'], `gdb runs the commands in ${file.raw}`);
  }
  if (opts.flags.has('tui') || (!opts.flags.has('batch') && !opts.flags.has('q') && opts.values.size === 0 && opts.operands.length <= 2)) {
    if (!opts.flags.has('batch')) cmd.add(['interactive'], 'gdb without -batch waits for commands');
  }
  if (argsAt >= 0) debuggee(cmd, args.slice(argsAt + 1));
  else if (opts.operands[0] && !/^\d+$/.test(literal(opts.operands[1] ?? litWord('')) ?? '')) cmd.path(opts.operands[0], 'exec');
  else if (opts.operands[1]) cmd.add(['system'], 'gdb PROGRAM PID attaches to a host process');
};

const lldb: Handler = (cmd) => {
  const dash = cmd.args.findIndex((word) => literal(word) === '--');
  const opts = parseOpts(dash >= 0 ? cmd.args.slice(0, dash) : cmd.args, 'oOkKsSpnacfl', [
    'one-line', 'one-line-before-file', 'one-line-on-crash', 'source', 'source-before-file', 'source-on-crash', 'attach-pid', 'attach-name', 'arch',
    'core', 'file', 'script-language',
  ]);
  cmd.add(['code_execution', 'mutating'], 'lldb runs the program it debugs');
  if (['p', 'attach-pid', 'n', 'attach-name'].some((key) => opts.values.has(key))) cmd.add(['system'], 'lldb attaches to a host process');
  judgeCommands(cmd, ['o', 'one-line', 'O', 'one-line-before-file', 'k', 'one-line-on-crash'].flatMap((key) => opts.values.get(key) ?? []));
  for (const file of ['s', 'source', 'S', 'source-before-file', 'K', 'source-on-crash'].flatMap((key) => opts.values.get(key) ?? [])) {
    cmd.path(file, 'read');
    cmd.add(['code_execution', 'unknown'], `lldb runs the commands in ${file.raw}`);
  }
  if (!opts.flags.has('batch') && !opts.flags.has('b')) cmd.add(['interactive'], 'lldb without --batch waits for commands');
  if (dash >= 0) debuggee(cmd, cmd.args.slice(dash + 1));
  else if (opts.operands[0]) cmd.path(opts.operands[0], 'exec');
};

export const DEBUGGERS: Record<string, Handler> = { gdb, lldb };
