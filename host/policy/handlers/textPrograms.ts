/**
 * Text tools that take a program: sed, awk, jq. Their programs are read for what reaches outside
 * the text: shell commands (sed `e`, awk `system()` and pipes), files written and read, and the
 * files their options name (`-f` scripts, `--rawfile`, `--slurpfile`). A program in a file is
 * code the policy does not read, as a script is.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { dropPrefix, literal, literalPrefix, litWord, type Word } from '../words';
import { sedEffects } from './sedScript';

const sed: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'efl', ['expression', 'file', 'line-length']);
  const inPlaceWord = cmd.args.find((word) => /^-[a-zA-Z]*i|^--in-place/.test(literal(word) ?? ''));
  const inPlace = inPlaceWord !== undefined;
  const scripts = [...(opts.values.get('e') ?? []), ...(opts.values.get('expression') ?? [])];
  const scriptFiles = [...(opts.values.get('f') ?? []), ...(opts.values.get('file') ?? [])];
  const files = scripts.length > 0 || scriptFiles.length > 0 ? opts.operands : opts.operands.slice(1);
  if (scripts.length === 0 && scriptFiles.length === 0 && opts.operands[0]) scripts.push(opts.operands[0]);
  cmd.add(inPlace ? ['mutating'] : ['read_only'], inPlace ? 'sed -i edits files in place' : 'sed only reads');
  const sandbox = opts.flags.has('sandbox');
  for (const file of scriptFiles) {
    cmd.path(file, 'read');
    // A sed script can run commands (e) and write files (w): what it does is not on this line.
    if (!sandbox) cmd.add(['code_execution'], `sed runs the script in ${file.raw}, which can run commands`);
  }
  // -i.bak keeps a backup; a suffix with a `/` puts it elsewhere (`-i'/tmp/*'`).
  const suffix = inPlaceWord ? (literal(inPlaceWord) ?? '').replace(/^--in-place=?|^-[a-zA-Z]*i/, '') : '';
  if (suffix.includes('/')) cmd.path(litWord(suffix.replace(/\*/g, 'backup'), false), 'write', 'keeps backups in');
  for (const word of scripts) {
    const text = literal(word);
    if (text === null) {
      cmd.add(['unknown'], `sed runs a script whose text is unknown (${word.raw})`);
      continue;
    }
    const effects = sedEffects(text);
    if (effects.unreadable) cmd.add(['unknown'], `the sed script is not one the policy can read (${text.slice(0, 40)})`);
    for (const command of effects.runs) cmd.runs(litWord(command), 'sed e');
    if (effects.runsInput) cmd.add(['code_execution', 'unknown'], 'the sed script runs its input as shell commands (e)');
    for (const file of effects.writes) cmd.path(litWord(file, false), 'write');
    for (const file of effects.reads) cmd.path(litWord(file, false), 'read');
  }
  files.forEach((word) => cmd.path(word, inPlace ? 'write' : 'read', 'edits'));
  if (files.length === 0) cmd.passesInput();
};

/** The contents of an awk string literal. */
function awkString(body: string): string {
  return body.replace(/\\(["\\/])/g, '$1').replace(/\\n/g, '\n').replace(/\\t/g, '\t');
}

const AWK_STRING = '"((?:[^"\\\\]|\\\\.)*)"';

/**
 * Shell commands in an awk program: `system("cmd")`, `"cmd" | getline`, `print | "cmd"`,
 * `"cmd" |& getline`. A command that is not a plain string could be anything.
 */
function awkProgram(cmd: Cmd, program: string): void {
  const commands: string[] = [];
  for (const found of program.matchAll(new RegExp(`\\bsystem\\s*\\(\\s*${AWK_STRING}\\s*\\)`, 'g'))) commands.push(awkString(found[1]!));
  for (const found of program.matchAll(new RegExp(`${AWK_STRING}\\s*\\|&?\\s*getline`, 'g'))) commands.push(awkString(found[1]!));
  for (const found of program.matchAll(new RegExp(`\\|&?\\s*${AWK_STRING}`, 'g'))) commands.push(awkString(found[1]!));
  const literalCalls = program.match(new RegExp(`\\bsystem\\s*\\(\\s*${AWK_STRING}\\s*\\)`, 'g'))?.length ?? 0;
  const allCalls = program.match(/\bsystem\s*\(/g)?.length ?? 0;
  // Every pipe, strings blanked: `"cmd" | getline` and `print | "cmd"` name their command, others compute it.
  const blanked = program.replace(new RegExp(AWK_STRING, 'g'), '""').replace(/\|\|/g, ' or ');
  const computedPipe = [...blanked.matchAll(/(\S+)\s*\|&?\s*(\S+)/g)].some(([, before, after]) =>
      (after!.startsWith('getline') ? !before!.endsWith('""') : !after!.startsWith('""')));
  if (allCalls > literalCalls || computedPipe) cmd.add(['code_execution', 'unknown'], 'the awk program runs shell commands it computes');
  for (const command of commands) cmd.runs(litWord(command), 'awk');
  for (const found of program.matchAll(new RegExp(`(?:print|printf)[^;}]*?>>?\\s*${AWK_STRING}`, 'g'))) cmd.path(litWord(awkString(found[1]!), false), 'write');
  for (const found of program.matchAll(new RegExp(`getline[^;}|]*<\\s*${AWK_STRING}`, 'g'))) cmd.path(litWord(awkString(found[1]!), false), 'read');
  // Strings blanked, so that a string printed before the redirection (`printf "x" > ENVIRON["HOME"] "/.bashrc"`) does not hide it.
  // A string followed by more of the expression (`> "out/" $1`) is a name computed from the input too.
  if (/(?:print|printf)[^;}]*?>>?\s*(?:""\s*)?[A-Za-z_($]/.test(program.replace(new RegExp(AWK_STRING, 'g'), '""')) ||
      /getline[^;}|]*?<\s*[A-Za-z_($]/.test(program.replace(new RegExp(AWK_STRING, 'g'), '""'))) {
    cmd.add(['unknown'], 'the awk program reads or writes a file whose name it computes');
  }
  for (const found of program.matchAll(new RegExp(`@include\\s+${AWK_STRING}`, 'g'))) cmd.path(litWord(awkString(found[1]!), false), 'read');
  if (/@load\b/.test(program)) cmd.add(['code_execution', 'unknown'], 'the awk program loads a compiled extension');
  if (/\/inet\//.test(program)) cmd.add(['networked'], 'the awk program opens a network connection (/inet/)');
}

/**
 * awk [options] PROGRAM [FILES], or with -f/-E FILE or gawk's -e/--source TEXT the program comes
 * from there (then every operand is a file). gawk's -d/--dump-variables, -o/--pretty-print and
 * -p/--profile write a file, named only when attached (`-o/etc/x`, `--profile=FILE`).
 */
const awk: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'fvFilEe', ['file', 'assign', 'field-separator', 'include', 'load', 'exec', 'source']);
  const programFiles = [...(opts.values.get('f') ?? []), ...(opts.values.get('file') ?? []), ...(opts.values.get('E') ?? []),
      ...(opts.values.get('exec') ?? [])];
  const sources = [...(opts.values.get('e') ?? []), ...(opts.values.get('source') ?? [])];
  const program = programFiles.length > 0 || sources.length > 0 ? null : opts.operands[0];
  const files = program ? opts.operands.slice(1) : opts.operands;
  for (const source of sources) {
    const text = literal(source);
    if (text === null) cmd.add(['unknown'], `awk runs a program whose text is unknown (${source.raw})`);
    else awkProgram(cmd, text);
  }
  for (const [name, values] of opts.values) {
    if (/^(dump-variables|pretty-print|profile|debug)$/.test(name)) values.forEach((file) => cmd.path(file, 'write'));
  }
  for (const word of cmd.args) {
    const text = literal(word) ?? literalPrefix(word);
    if (/^-[dop]./.test(text)) cmd.path(dropPrefix(word, 2), 'write');
  }
  const inPlace = (opts.values.get('i') ?? []).some((word) => literal(word) === 'inplace');
  cmd.add(inPlace ? ['mutating'] : ['read_only'], inPlace ? 'awk -i inplace edits files' : 'awk reads and prints');
  for (const file of programFiles) {
    cmd.path(file, 'read');
    cmd.add(['code_execution'], `awk runs the program in ${file.raw}, which can run commands`);
  }
  for (const include of [...(opts.values.get('i') ?? []), ...(opts.values.get('include') ?? [])]) if (literal(include) !== 'inplace') cmd.path(include, 'read');
  for (const extension of [...(opts.values.get('l') ?? []), ...(opts.values.get('load') ?? [])]) {
    cmd.add(['code_execution', 'unknown'], `awk loads the compiled extension ${extension.raw}`);
    cmd.maybePath(extension, 'read');
  }
  if (program) {
    const text = literal(program);
    if (text === null) cmd.add(['unknown'], `awk runs a program whose text is unknown (${program.raw})`);
    else awkProgram(cmd, text);
  }
  files.filter((word) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(literal(word) ?? '')).forEach((word) => cmd.path(word, inPlace ? 'write' : 'read'));
  if (files.length === 0) cmd.passesInput();
};

/**
 * jq [options] FILTER [FILES]: --rawfile/--slurpfile NAME FILE read FILE; -f FILE reads the filter
 * from FILE (then every operand is an input file); --args/--jsonargs make the rest arguments.
 */
const jq: Handler = (cmd) => {
  cmd.add(['read_only'], 'jq only reads');
  const files: Word[] = [];
  let filterFromFile = false;
  let filterSeen = false;
  let positionalArgs = false;
  for (let at = 0; at < cmd.args.length; at++) {
    const word = cmd.args[at]!;
    const flag = literal(word);
    if (flag === '--rawfile' || flag === '--slurpfile') {
      const file = cmd.args[at + 2];
      if (file) cmd.path(file, 'read');
      at += 2;
    } else if (flag === '--arg' || flag === '--argjson') at += 2;
    else if (flag === '-f' || flag === '--from-file') {
      const file = cmd.args[++at];
      if (file) cmd.path(file, 'read');
      filterFromFile = true;
    } else if (flag === '-L' || flag === '--indent' || flag === '--library-path') {
      const value = cmd.args[++at];
      if (value && flag !== '--indent') cmd.path(value, 'read');
    } else if (flag !== null && /^-L./.test(flag)) cmd.path(litWord(flag.slice(2), false), 'read');
    else if (flag === '--args' || flag === '--jsonargs') positionalArgs = true;
    else if (flag !== null && flag.startsWith('-') && flag !== '-') continue;
    else if (!filterSeen && !filterFromFile) filterSeen = true;
    else if (!positionalArgs) files.push(word);
  }
  files.forEach((word) => cmd.path(word, 'read'));
  if (files.length === 0) cmd.passesInput();
};

export const TEXT_PROGRAMS: Record<string, Handler> = {
  sed,
  gsed: sed,
  awk,
  gawk: awk,
  mawk: awk,
  nawk: awk,
  jq,
};
