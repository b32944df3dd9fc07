/**
 * make: runs the project's Makefile (code execution, with a checkpoint), and whatever the command
 * line adds to it. `--eval`/`-E` text is a makefile whose recipes and `$(shell …)` are judged as
 * shell commands; `SHELL=` changes the program every recipe runs with; a tool variable
 * (`CC=…`) is a command every recipe that uses it runs; `PREFIX=/usr` sends installs there.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { literal, litWord } from '../words';

/** Variables whose value is a program recipes run. */
const TOOL_VARIABLE = new RegExp(
  [
    String.raw`^(CC|CXX|CPP|FC|F77|LD|AR|AS|RANLIB|STRIP|NM|OBJCOPY|OBJDUMP|MAKE|RM|CP|MV|LN|MKDIR|INSTALL|SED|AWK|GREP`,
    String.raw`|PYTHON\d*|PERL|RUBY|NODE|NPM|CARGO|GO|JAVA|JAVAC|YACC|LEX|BISON|FLEX|PKG_CONFIG|DOCKER|[A-Z_]*(CMD|COMMAND`,
    String.raw`|PROG|PROGRAM|TOOL|RUNNER|WRAPPER))$`,
  ].join(''),
);
/** Variables that name where things are installed or built. */
const DIR_VARIABLE = /^(PREFIX|DESTDIR|BINDIR|LIBDIR|INCLUDEDIR|DATADIR|MANDIR|SYSCONFDIR|LOCALSTATEDIR|EXEC_PREFIX|[A-Z_]*DIR|[A-Z_]*PATH|O|OUT|BUILD)$/;

/** A recipe line as the shell will see it, or null when make would substitute variables into it. */
function recipeText(line: string): string | null {
  const text = line.replace(/^[\s@+-]+/, '');
  if (/\$[({]|\$[A-Za-z@<^?*%+|]/.test(text.replace(/\$\$/g, ''))) return null;
  return text.replace(/\$\$/g, '$');
}

/** Judges makefile text from the command line (--eval): recipes, $(shell), includes, SHELL. */
export function makefileText(cmd: Cmd, text: string): void {
  for (const line of text.split('\n')) {
    const recipes: string[] = [];
    if (line.startsWith('\t')) recipes.push(line.slice(1));
    else {
      const rule = /^[^=#:]*[^=#:\s]\s*::?(?![=:])[^;#=]*;(.*)$/.exec(line);
      if (rule) recipes.push(rule[1]!);
      if (/^\s*(override\s+)?(export\s+)?(SHELL|\.SHELLFLAGS|MAKESHELL)\s*[:?+!]*=/.test(line)) cmd.add(['code_execution', 'unknown'],
          'make --eval changes the shell every recipe runs with');
      for (const found of line.matchAll(/^\s*-?s?include\s+(.+)$/g)) for (const file of found[1]!.split(/\s+/)) if (
          file) cmd.path(litWord(file, false), 'read');
    }
    for (const recipe of recipes) {
      const shellText = recipeText(recipe);
      if (shellText === null) cmd.add(['code_execution', 'unknown'], `a recipe from the command line uses make variables (${recipe.trim().slice(0, 40)})`);
      else if (shellText.trim() !== '') cmd.script(shellText, 'make recipe');
    }
    for (const found of line.matchAll(/\$[({]shell\s+([^)}]*)[)}]/g)) {
      if (/\$[({]/.test(found[1]!)) cmd.add(['code_execution', 'unknown'], 'make $(shell …) runs a computed command');
      else cmd.script(found[1]!, 'make $(shell)');
    }
    if (/\$[({](eval|file|guile|load)\b/.test(line)) cmd.add(['code_execution', 'unknown'],
        `make text uses $(eval), $(file), $(guile) or $(load) (${line.trim().slice(0, 40)})`);
  }
}

/** `NAME=value` on make's command line overrides the makefile's own. */
function makeVariable(cmd: Cmd, text: string): void {
  const eq = text.indexOf('=');
  const name = text.slice(0, eq).replace(/[:+?!]$/, '');
  const value = text.slice(eq + 1);
  if (name === 'SHELL' || name === 'MAKESHELL' || name === '.SHELLFLAGS') {
    cmd.add(['code_execution', 'unknown'], `make ${name}= changes the program every recipe runs with`);
    if (name !== '.SHELLFLAGS' && value) cmd.runs(litWord(value), `make ${name}=`);
    return;
  }
  if (TOOL_VARIABLE.test(name)) {
    if (value.trim()) cmd.runs(litWord(value), `make ${name}=`);
    return;
  }
  if (/[;&|`]|\$\(/.test(value)) {
    cmd.add(['code_execution', 'unknown'], `make ${name}= carries shell syntax into the recipes that use it`);
    return;
  }
  if (DIR_VARIABLE.test(name) && value) cmd.path(litWord(value, false), 'write', `make ${name}= installs or builds into`);
}

const make: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'CfIjlOoWE', [
    'directory', 'file', 'makefile', 'include-dir', 'jobs', 'load-average', 'output-sync', 'old-file', 'assume-old', 'what-if', 'new-file',
    'assume-new', 'eval', 'debug', 'jobserver-style',
  ]);
  cmd.add(['code_execution', 'mutating'], `${cmd.prog} builds, tests or runs project code`);
  for (const text of [...(opts.values.get('E') ?? []), ...(opts.values.get('eval') ?? [])]) {
    const body = cmd.codeText(text, `${cmd.prog} --eval`);
    if (body !== null) makefileText(cmd, body);
  }
  for (const file of [...(opts.values.get('f') ?? []), ...(opts.values.get('file') ?? []), ...(opts.values.get('makefile') ?? [])]) {
    cmd.path(file, 'read');
    // `make -f - <<< 'all: ; cmd'`: the makefile is the input.
    if (/^(-|\/dev\/stdin)$/.test(literal(file) ?? '')) {
      if (cmd.stdin.kind === 'data' && cmd.stdin.text !== null && cmd.stdin.taint.length === 0) makefileText(cmd, cmd.stdin.text);
      else if (cmd.stdin.kind === 'data' && cmd.stdin.taint.length > 0) cmd.add(['opaque_code'], `${cmd.prog} runs a downloaded or decoded makefile`);
      else cmd.add(['code_execution', 'unknown'], `${cmd.prog} reads its makefile from its input`);
    }
  }
  for (const dir of [...(opts.values.get('C') ?? []), ...(opts.values.get('directory') ?? []), ...(opts.values.get('I') ?? []),
      ...(opts.values.get('include-dir') ?? [])]) {
    cmd.path(dir, 'read', 'works in');
  }
  for (const word of opts.operands) {
    const text = literal(word);
    if (text === null) {
      if (/^[A-Za-z_.][A-Za-z0-9_.]*[:+?!]?=/.test(word.raw)) cmd.add(['unknown'], `make ${word.raw} sets a variable to a computed value`);
      continue;
    }
    if (/^[A-Za-z_.][A-Za-z0-9_.]*[:+?!]?=/.test(text)) makeVariable(cmd, text);
  }
};

export const MAKE_TOOLS: Record<string, Handler> = { make, gmake: make, bmake: make };
