/**
 * Editors and man: programs for a person at a terminal, which also run commands when told to:
 * vim's `-c '!cmd'`, `+cmd`, `--cmd`, `-S script`; emacs `--eval`; man's `-P pager` and
 * `-H browser`. Ex commands are read for shell escapes, which are judged as if typed here.
 */
import type { Handler } from '../classify';
import { type Cmd, parseOpts } from '../command';
import { literal, litWord, type Word } from '../words';

const VI_LIKE = new Set(['vi', 'vim', 'nvim', 'ex', 'view', 'vimdiff', 'rvim', 'gvim', 'evim']);

/**
 * One ex command line (`-c`, `+`, `--cmd`): `!cmd`, `r !cmd`, `w !cmd`, `silent !cmd`, `:shell`,
 * `:terminal` and `system()` run shell commands; python/lua/perl/ruby run code; `source` and
 * `runtime` load scripts; `w FILE` writes.
 */
function exCommand(cmd: Cmd, text: string): void {
  // `|` separates ex commands, except that `!cmd` takes the rest of the line.
  const shell = /(?:^|\|)\s*:*\s*(?:(?:sil(?:ent)?!?|exe(?:cute)?\s+['"])\s*)?(?:\d*,?\d*\s*)?(?:(?:r(?:ead)?|w(?:rite)?|\.)\s*)?!(.*)$/s.exec(text);
  if (shell) cmd.runs(litWord(shell[1]!.replace(/['"]\s*$/, '')), `${cmd.prog} -c '!…'`);
  if (new RegExp(
    [
      String.raw`\b(system|systemlist|jobstart|termopen|libcall|libcallnr)\s*\(|(?:^|\|)\s*:*\s*(sh(ell)?|te(rm(inal)?)?`,
      String.raw`|py(thon)?3?|pyx|lua|perl|ruby|mz(scheme)?|tcl|pydo|py3do|luado|perldo|rubydo|make|grep|lgrep)\b`,
    ].join(''),
  ).test(text)) {
    cmd.add(['code_execution', 'unknown'], `${cmd.prog} runs an ex command that starts programs or runs code (${text.slice(0, 40)})`);
  }
  for (const found of text.matchAll(/(?:^|\|)\s*:*\s*(?:so(?:urce)?|ru(?:ntime)?)!?\s+(\S+)/g)) cmd.path(litWord(found[1]!, false), 'read');
  for (const found of text.matchAll(/(?:^|\|)\s*:*\s*(?:w(?:rite)?|sav(?:eas)?|wq|x(?:it)?)!?\s+(?:>>\s*)?([^!|\s]\S*)/g)) cmd.path(
      litWord(found[1]!, false), 'write');
}

/** vi, vim, nvim, ex: interactive unless in batch mode; ex commands from options are read. */
function viLike(cmd: Cmd): void {
  // Ex mode (-e/-E, or ex itself) makes -s "silent" instead of "read keys from a file".
  const exMode = cmd.prog === 'ex' || cmd.vals.some((value) => value !== null && /^-[eE]s?$/.test(value));
  const batch = cmd.vals.some((value) => value !== null && /^(-[eE]s|--headless)$/.test(value)) || (exMode && cmd.vals.includes('-s'));
  const args = cmd.args.filter((word) => !/^(-[eE]s?|--headless)$/.test(literal(word) ?? '') && !(exMode && literal(word) === '-s'));
  const opts = parseOpts(args, 'cSuiswWTtqrUdoOp', ['cmd', 'cmds', 'startuptime', 'servername', 'listen']);
  if (batch) cmd.add(['code_execution', 'mutating'], `${cmd.prog} runs in batch mode`);
  else cmd.add(['interactive', 'mutating'], `${cmd.prog} is an interactive editor`);
  const commands = [...(opts.values.get('c') ?? []), ...(opts.values.get('cmd') ?? [])];
  const files: Word[] = [];
  for (const word of opts.operands) {
    const text = literal(word);
    if (text !== null && text.startsWith('+') && text.length > 1) commands.push(litWord(text.slice(1)));
    else files.push(word);
  }
  for (const command of commands) {
    const text = literal(command);
    if (text === null) cmd.add(['obfuscation'], `${cmd.prog} runs a computed ex command (${command.raw})`);
    else exCommand(cmd, text);
  }
  // -S and -u load vim scripts (code); -s reads typed keys (which can be `:!cmd`); -w/-W write them.
  for (const script of [...(opts.values.get('S') ?? []), ...(opts.values.get('u') ?? []), ...(opts.values.get('s') ?? [])]) {
    if (literal(script) === 'NONE') continue;
    cmd.path(script, 'read');
    cmd.add(['code_execution', 'unknown'], `${cmd.prog} runs the commands in ${script.raw}`);
  }
  for (const out of [...(opts.values.get('w') ?? []), ...(opts.values.get('W') ?? []), ...(opts.values.get('i') ?? [])]) if (
      literal(out) !== 'NONE') cmd.path(out, 'write');
  files.forEach((word) => cmd.maybePath(word, 'write'));
}

/** emacs: interactive, or elisp (--eval, -l, --batch, --script), which can do anything. */
function emacs(cmd: Cmd): void {
  const opts = parseOpts(cmd.args, 'lfLdtu', [
    'eval', 'execute', 'load', 'funcall', 'directory', 'script', 'file', 'visit', 'insert', 'user', 'init-directory',
  ]);
  const batch = opts.flags.has('batch') || opts.flags.has('script') || opts.values.has('script') || cmd.vals.includes('-batch');
  if (batch) cmd.add(['code_execution', 'mutating'], 'emacs --batch runs elisp');
  else cmd.add(['interactive', 'mutating'], 'emacs is an interactive editor');
  for (const code of [...(opts.values.get('eval') ?? []), ...(opts.values.get('execute') ?? [])]) {
    const text = cmd.codeText(code, 'emacs --eval');
    const shellCalls = text === null ? [] : [
        ...text.matchAll(new RegExp(
          [
            String.raw`\((?:shell-command(?:-to-string)?|call-process-shell-command|async-shell-command`,
            String.raw`|start-process-shell-command\s+"[^"]*"\s+\S+)\s+"((?:[^"\\]|\\.)*)"`,
          ].join(''),
          'g',
        ))];
    for (const call of shellCalls) cmd.runs(litWord(call[1]!.replace(/\\(["\\])/g, '$1')), 'emacs shell-command');
    if (text !== null && new RegExp(
      [
        String.raw`shell-command|call-process|start-process|make-process|process-|url-|network|delete-|write-region|copy-file`,
        String.raw`|rename-file|make-symbolic-link|shell|eshell|term\b|compile|\/|~`,
      ].join(''),
    ).test(text)) {
      cmd.add(['code_execution', 'unknown'], `emacs --eval runs elisp that reaches outside the buffer (${text.slice(0, 40)})`);
    }
  }
  for (const file of [...(opts.values.get('l') ?? []), ...(opts.values.get('load') ?? []), ...(opts.values.get('script') ?? [])]) {
    cmd.path(file, 'read');
    cmd.add(['code_execution', 'unknown'], `emacs loads and runs ${file.raw}`);
  }
  if (opts.values.has('f') || opts.values.has('funcall')) cmd.add(['code_execution', 'unknown'], 'emacs -f calls an elisp function');
  opts.operands.forEach((word) => cmd.maybePath(word, 'write'));
}

const editor: Handler = (cmd) => {
  if (VI_LIKE.has(cmd.prog)) viLike(cmd);
  else if (cmd.prog === 'emacs' || cmd.prog === 'emacsclient') emacs(cmd);
  else {
    cmd.add(['interactive', 'mutating'], `${cmd.prog} is an interactive editor`);
    cmd.args.forEach((word) => cmd.maybePath(word, 'write'));
  }
};

/** man: prints a page; -P/--pager and -H/--html name programs it runs; -l/-C read files. */
const man: Handler = (cmd) => {
  const opts = parseOpts(cmd.args, 'PHCMlLRSmepE', [
    'pager', 'config-file', 'manpath', 'locale', 'encoding', 'sections', 'systems', 'extension', 'preprocessor', 'html', 'local-file',
  ]);
  cmd.add(['read_only'], 'man only prints');
  for (const pager of [...(opts.values.get('P') ?? []), ...(opts.values.get('pager') ?? []), ...(opts.values.get('H') ?? []),
      ...(opts.values.get('html') ?? [])]) cmd.runs(pager, 'man -P');
  for (const file of [...(opts.values.get('C') ?? []), ...(opts.values.get('config-file') ?? []), ...(opts.values.get('M') ?? []),
      ...(opts.values.get('manpath') ?? [])]) cmd.path(file, 'read');
  const local = opts.flags.has('l') || opts.flags.has('local-file');
  for (const page of opts.operands) if (local || (literal(page) ?? '').includes('/')) cmd.path(page, 'read');
};

export const EDITORS: Record<string, Handler> = {
  ...Object.fromEntries([
    'vi', 'vim', 'nvim', 'nano', 'pico', 'emacs', 'emacsclient', 'joe', 'micro', 'ed', 'ex', 'kak', 'hx', 'helix', 'mcedit', 'jed', 'view', 'vimdiff',
    'rvim', 'gvim',
  ].map((name) => [name, editor])),
  man,
};
