/**
 * Classifies one simple command: finds its program (through quotes, escapes, braces and paths)
 * and hands it to the handler that knows that program; unknown programs get a generic judgement.
 */
import { posix } from 'node:path';
import { Cmd, type Judge, type Outcome, type Stdin } from './command';
import { COMMAND_LISTS } from './handlers/commandLists';
import { DEBUGGERS } from './handlers/debuggers';
import { DIRECTORY_TOOLS } from './handlers/directories';
import { ECOSYSTEM_TOOLS } from './handlers/ecosystems';
import { EDITORS } from './handlers/editors';
import { FILE_TOOLS } from './handlers/fileTools';
import { GIT_TOOLS } from './handlers/git';
import { HOST_TOOLS } from './handlers/host';
import { scanInlineCode } from './handlers/inlineCode';
import { INTERPRETERS } from './handlers/interpreters';
import { MAKE_TOOLS, makefileText } from './handlers/make';
import { NETWORK_TOOLS } from './handlers/network';
import { PACKAGE_TOOLS } from './handlers/packages';
import { SECRET_TOOLS, SECRET_VARIABLE } from './handlers/secrets';
import { SYSTEM_TOOLS } from './handlers/system';
import { TEXT_PROGRAMS } from './handlers/textPrograms';
import { WRAPPERS } from './handlers/wrappers';
import { judgePath, looksRemote, programDirectory } from './paths';
import { braceExpansion, display, hasGlob, isLiteral, literal, litWord, taints, type Word } from './words';

export type Handler = (cmd: Cmd) => void;

/** Programs whose `--version` may be an argument of the command they run (`env --version` is fine; `exec --version` is not a program). */
const WRAPPER_NAMES = new Set(['exec', 'eval', 'command', 'builtin', 'source', '.', 'alias', 'trap', 'cd', 'pushd', 'set', 'export', 'declare', 'typeset', 'local', 'read']);

/**
 * Every known program's handler, by name. A Map: a program name is text from the command line, and
 * an object would answer `constructor` or `toString` with Object.prototype's members. (Spreading the
 * ~830 entries into one object literal also cost ~3 ms at each cold start.)
 */
const HANDLERS = new Map<string, Handler>();
for (const table of [
  FILE_TOOLS, TEXT_PROGRAMS, NETWORK_TOOLS, GIT_TOOLS, PACKAGE_TOOLS, INTERPRETERS, SYSTEM_TOOLS,
  EDITORS, MAKE_TOOLS, DEBUGGERS, HOST_TOOLS, DIRECTORY_TOOLS, WRAPPERS, COMMAND_LISTS, SECRET_TOOLS,
  // Last: these replace the generic judgements of the tables above for the programs they name.
  ECOSYSTEM_TOOLS,
]) for (const name of Object.keys(table)) HANDLERS.set(name, table[name]!);

/** `python3.12` → `python`, `pip3` → `pip`, `gcc-13` → `gcc`. */
export function programName(word: string): string {
  const base = posix.basename(word);
  const match = /^(python|pip|pypy|perl|ruby|php|lua|node|nodejs|gcc|g\+\+|clang|clang\+\+|java|javac|go|pwsh|bash|zsh|ksh)(?:[-]?[\d.]+)$/.exec(base);
  return match ? match[1]! : base;
}

/** Bash expands braces in every unquoted word before running: `{rm,-rf,/}` is three words. */
function expandAll(words: Word[]): Word[] {
  const out: Word[] = [];
  for (const word of words) {
    if (isLiteral(word) && word.segs.some((seg) => seg.t === 'lit' && !seg.q && seg.s.includes('{'))) {
      const expansion = braceExpansion(word);
      if (expansion.words.length > 1 || !expansion.complete) {
        for (const alt of expansion.words) out.push({ raw: word.raw, segs: [{ t: 'lit', s: alt, q: true }] });
        // Past the bounds of the expansion, more words whose values the policy did not compute.
        if (!expansion.complete) out.push({ raw: word.raw, segs: [{ t: 'val', v: { kind: 'unknown', taint: [], what: word.raw }, q: true }] });
        continue;
      }
    }
    out.push(word);
  }
  return out;
}

/**
 * What an unknown program's arguments say about it: a URL (or `user@host:path`) is where it
 * connects; a first operand `publish`, `deploy`, `upload` or `release` sends something out; an
 * `install`/`add` of names installs packages. (Its name may say nothing: mail senders, clients of
 * version control systems and deploy tools the table does not list.)
 */
function unknownProgramArguments(cmd: Cmd): void {
  const url = cmd.vals.find((value) => value !== null && (looksRemote(value) || /^[^\s@/=]+@[\w-]+(\.[\w-]+)+$/.test(value)));
  if (url) cmd.add(['networked'], `${cmd.prog} is given a network address (${url})`);
  const verb = cmd.vals.find((value) => value !== null && !value.startsWith('-'));
  if (verb && /^(publish|deploy|upload|release|push)$/.test(verb)) cmd.add(['vcs_remote', 'networked'], `${cmd.prog} ${verb} sends something to a remote`);
  else if (verb && /^(install|add|i|get|fetch|download|sync)$/.test(verb) && cmd.vals.length > 1) cmd.add(['package_install', 'networked'], `${cmd.prog} ${verb} fetches and installs packages`);
}

/** `$GITHUB_TOKEN`, `"${AWS_SECRET_ACCESS_KEY}"` in an argument: a credential from the environment, handed to the command. */
function secretExpansions(cmd: Cmd): void {
  for (const word of cmd.args) {
    for (const seg of word.segs) {
      if (seg.t !== 'val' || seg.v.kind !== 'unknown') continue;
      const name = /^\$\{?!?([A-Za-z_][A-Za-z0-9_]*)/.exec(seg.v.what)?.[1];
      if (name && SECRET_VARIABLE.test(name)) cmd.add(['host_escape'], `${cmd.prog} is given $${name}, a credential from the environment`);
    }
  }
}

/** Project files that say what a build, test run or package script does. */
const PROJECT_FILE = /(^|\/)(GNUmakefile|[Mm]akefile|[^/]+\.mk|package\.json|[^/]+\.(py|sh|bash|js|mjs|cjs|ts|pl|rb))$/;

/**
 * Project code about to run (make, npm test, pytest, cargo test …) after this line wrote project
 * files: a Makefile's recipes, package.json's scripts, a conftest.py or test module, a script. What
 * was written with known text is judged as the code it is; what was downloaded or decoded is
 * opaque_code. (`printf 'all:\n\trm -rf ~\n' > Makefile && make` was allow_with_checkpoint.)
 */
let inProjectFiles = false;

function writtenProjectFiles(cmd: Cmd): void {
  // The scripts judged here run project code too: they are judged once, not again from inside.
  if (inProjectFiles) return;
  inProjectFiles = true;
  try {
    judgeProjectFiles(cmd);
  } finally {
    inProjectFiles = false;
  }
}

function judgeProjectFiles(cmd: Cmd): void {
  for (const path of cmd.judge.downloaded) {
    if (PROJECT_FILE.test(path)) cmd.add(['opaque_code'], `${cmd.prog} may run ${path}, which this command line downloaded or decoded`);
  }
  for (const [path, text] of cmd.judge.written) {
    if (!PROJECT_FILE.test(path)) continue;
    const what = `${posix.basename(path)}, written earlier on this line`;
    const base = posix.basename(path);
    if (/^(GNUmakefile|[Mm]akefile)$|\.mk$/.test(base)) makefileText(cmd, text);
    else if (base === 'package.json') {
      let scripts: unknown;
      try {
        scripts = (JSON.parse(text) as { scripts?: unknown }).scripts;
      } catch {
        cmd.add(['unknown'], `${what} is not JSON the policy can read`);
        continue;
      }
      if (scripts && typeof scripts === 'object') {
        for (const [name, body] of Object.entries(scripts as Record<string, unknown>)) {
          if (typeof body === 'string') cmd.script(body, `the package.json script ${name}, written earlier on this line`);
        }
      }
    } else if (/\.(sh|bash)$/.test(base)) cmd.script(text, what);
    else scanInlineCode(cmd, text, what);
  }
}

export function classifyCommand(rawWords: Word[], text: string, stdin: Stdin, judge: Judge, inShell = true): Outcome {
  const words = expandAll(rawWords);
  const progWord = words[0];
  if (!progWord) return new Cmd('', [], text, stdin, judge).outcome();
  const progText = literal(progWord);
  if (progText === null || hasGlob(progWord) || progText === '') {
    const cmd = new Cmd(display(progWord), words.slice(1), text, stdin, judge, inShell);
    const taint = taints(progWord);
    if (taint.size > 0) cmd.add(['opaque_code'], `runs a program named by downloaded or decoded text (${progWord.raw})`);
    cmd.add(['obfuscation'], progText === '' ? 'runs a program with an empty name' : `the program name ${progWord.raw} is computed, so it could be anything`);
    for (const word of cmd.args) cmd.maybePath(word, 'read');
    return cmd.outcome();
  }
  const prog = programName(progText);
  const judged = new Cmd(prog, words.slice(1), text, stdin, judge, inShell);
  if (progText.includes('/')) {
    const verdict = judgePath(litWord(progText), judge.paths());
    const resolved = verdict.shown;
    if (judge.downloaded.has(resolved)) judged.add(['opaque_code'], `runs ${progText}, which this command line downloaded`);
    if (verdict.cls === 'inside') {
      judged.add(['code_execution', 'mutating'], `runs the workspace program ${progText}`);
      const writtenText = judge.written.get(resolved);
      if (writtenText !== undefined) judge.script(writtenText.replace(/^#![^\n]*\n/, ''), `${progText}, written earlier on this line`);
      for (const arg of judged.args) judged.maybePath(arg, 'read');
      return judged.outcome();
    } else {
      const finding = programDirectory(verdict);
      if (finding) judged.add(finding.categories, finding.why);
    }
  }
  secretExpansions(judged);
  const handler = HANDLERS.get(prog);
  // A known program asked only for its version or help prints it and exits (`docker --version`).
  if (handler && !progText.includes('/') && words.length === 2 && /^(--version|--help)$/.test(literal(words[1]!) ?? '') && !WRAPPER_NAMES.has(prog)) {
    judged.add(['read_only'], `${prog} ${literal(words[1]!)} only prints`);
    return judged.outcome();
  }
  if (handler) {
    handler(judged);
    if (judged.has('code_execution') && (judge.written.size > 0 || judge.downloaded.size > 0)) writtenProjectFiles(judged);
  } else {
    judged.add(['mutating', 'code_execution'], `runs ${prog}, a program the policy does not know (what it does is not on the line)`);
    unknownProgramArguments(judged);
    judged.argumentPaths();
  }
  return judged.outcome();
}
