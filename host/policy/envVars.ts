/**
 * Environment assignments that change what runs: variables holding a command (GIT_SSH_COMMAND,
 * PAGER, EDITOR …), variables that load code into every program (LD_PRELOAD, NODE_OPTIONS,
 * BASH_ENV …), git's config-by-environment, and PATH.
 */
import type { Cmd } from './command';
import { literal, type Word } from './words';

const COMMAND_VARS = new Set([
  'GIT_SSH_COMMAND', 'GIT_SSH', 'GIT_EXTERNAL_DIFF', 'GIT_PAGER', 'PAGER', 'MANPAGER', 'EDITOR', 'VISUAL', 'GIT_EDITOR', 'GIT_SEQUENCE_EDITOR',
  'GIT_ASKPASS', 'SSH_ASKPASS', 'SUDO_ASKPASS', 'BROWSER', 'PROMPT_COMMAND', 'LESSOPEN', 'LESSCLOSE', 'FCEDIT', 'RSYNC_RSH', 'CVS_RSH',
  'GIT_PROXY_COMMAND', 'SYSTEMD_PAGER', 'PSQL_PAGER', 'GH_PAGER', 'GH_EDITOR', 'KUBE_EDITOR', 'npm_config_script_shell', 'NPM_CONFIG_SCRIPT_SHELL',
]);
const CODE_VARS = /^(LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_\w+|BASH_ENV|ENV|NODE_OPTIONS|NODE_PATH|PYTHONSTARTUP|PYTHONPATH|PYTHONHOME|PYTHONUSERBASE|PERL5OPT|PERL5LIB|PERLLIB|RUBYOPT|RUBYLIB|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|GCONV_PATH|GIT_EXEC_PATH|GIT_TEMPLATE_DIR|SHELLOPTS|BASHOPTS|PS4|npm_config_\w+|NPM_CONFIG_\w+)$/;
const GIT_CONFIG_VARS = /^(GIT_CONFIG_PARAMETERS|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM)$/;

/** Judges `NAME=value` set for a command (or for the rest of the line when standalone). */
export function judgeAssignment(c: Cmd, name: string, value: Word): void {
  const v = literal(value);
  if (COMMAND_VARS.has(name)) {
    if (v === null) c.add(['obfuscation'], `${name} is set to a computed command`);
    else if (v.trim() !== '') c.script(v, `${name}=`);
    return;
  }
  if (CODE_VARS.test(name)) {
    c.add(['code_execution'], `${name} changes what code programs load`);
    if (v === null) c.add(['unknown'], `${name} is set to a value the policy cannot know`);
    else {
      for (const piece of v.split(/[:\s]+/)) if (piece && !piece.startsWith('-')) c.maybePath({ raw: piece, segs: [{ t: 'lit', s: piece, q: true }] }, 'read');
      for (const m of v.matchAll(/--(?:require|import|loader|experimental-loader)[= ](\S+)/g)) c.maybePath({ raw: m[1]!, segs: [{ t: 'lit', s: m[1]!, q: true }] }, 'read');
    }
    return;
  }
  if (GIT_CONFIG_VARS.test(name)) {
    if (v === null) c.add(['unknown'], `${name} sets git configuration the policy cannot know`);
    else if (/hookspath/i.test(v)) c.add(['persistence'], `${name} points git's hooks somewhere else`);
    else if (/fsmonitor|sshcommand|pager|editor|askpass|external|textconv|filter\.|credential|alias\.|uploadpack|receivepack|gitproxy/i.test(v)) c.add(['code_execution', 'unknown'], `${name} sets a git option that runs programs`);
    if (v !== null && /^(GIT_CONFIG|GIT_CONFIG_GLOBAL|GIT_CONFIG_SYSTEM)$/.test(name)) c.maybePath(value, 'read');
    return;
  }
  if (name === 'GIT_DIR' || name === 'GIT_WORK_TREE' || name === 'GIT_INDEX_FILE' || name === 'GIT_OBJECT_DIRECTORY') {
    c.maybePath(value, 'write');
    return;
  }
  if (name === 'PATH') {
    c.add(['code_execution'], 'PATH is changed, so program names may resolve elsewhere');
    return;
  }
  if (name === 'HOME' || name === 'TMPDIR' || name === 'XDG_CONFIG_HOME' || name === 'XDG_DATA_HOME' || name === 'XDG_CACHE_HOME') {
    c.maybePath(value, 'write');
  }
}
