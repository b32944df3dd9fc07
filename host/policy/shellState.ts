/**
 * What one command tells the next within a command line: the current directory and the ones
 * pushd saved, variables (and namerefs, which make a name stand for another), aliases, and the
 * functions defined so far with whom they call — which is how a fork bomb is recognised — and
 * endless loops that keep starting background jobs.
 */
import { forEachNode } from './limits';
import type { SyntaxNode } from './parse';
import type { Value } from './words';

export interface FunctionInfo {
  /** Names the body runs, and whether it runs each in a new process (a pipe, `&`, `( )`, `$( )`). */
  calls: Map<string, boolean>;
  /** The body changes the caller's directory, so after a call the directory is unknown. */
  changesDirectory: boolean;
}

export interface Scope {
  /** Absolute current directory, or null once it is unknown. */
  cwd: string | null;
  /**
   * Where the shell may be instead, because a `cd` may have failed (`cd nodir; cat ../x` reads
   * from the old directory): relative paths are judged from each. Empty after `&&`, `if cd`,
   * `|| exit` or under `set -e`, which leave only the directory the cd entered.
   */
  otherCwds: string[];
  /** `set -e`: a failing command ends the script, so a failed cd does not carry on. */
  errexit: boolean;
  /** Directories pushd saved on this line, most recent last (null: unknown). */
  dirStack: (string | null)[];
  vars: Map<string, Value | string>;
  /** `declare -n ref=target`: ref stands for target (null: not yet bound). */
  namerefs: Map<string, string | null>;
  /** $1… values; 'unknown' inside function bodies. */
  positional: (string | Value)[] | 'unknown';
  aliases: Map<string, string>;
  functions: Map<string, FunctionInfo>;
  ifsChanged: boolean;
  /** How many shells deep (sh -c, eval, alias …) this text is. */
  depth: number;
  /** $0 when the text was given one (`sh -c 'text' NAME …`); otherwise `bash`. */
  zero?: string | Value;
}

export function copyScope(scope: Scope, over: Partial<Scope> = {}): Scope {
  return {
    ...scope,
    dirStack: [...scope.dirStack],
    otherCwds: [...scope.otherCwds],
    vars: new Map(scope.vars),
    namerefs: new Map(scope.namerefs),
    aliases: new Map(scope.aliases),
    functions: new Map(scope.functions),
    ...over,
  };
}

/** After text that ran in this very shell (eval, source, an alias): its effects are the caller's. */
export function adoptScope(into: Scope, from: Scope): void {
  into.cwd = from.cwd;
  into.otherCwds = from.otherCwds;
  into.errexit = from.errexit;
  into.dirStack = from.dirStack;
  into.vars = from.vars;
  into.namerefs = from.namerefs;
  into.aliases = from.aliases;
  into.functions = from.functions;
  into.ifsChanged = from.ifsChanged;
}

/** The variable a name stands for, following namerefs; null when a nameref is not bound. */
export function resolveName(scope: Scope, name: string): string | null {
  let current = name;
  for (let hops = 0; hops < 10; hops++) {
    if (!scope.namerefs.has(current)) return current;
    const target = scope.namerefs.get(current);
    if (target === null || target === undefined) return null;
    current = target;
  }
  return null;
}

/**
 * True when calling `name` starts processes without bound: some chain of calls leads back to
 * `name` and at least one call on the way runs in a new process (`f(){ f|f& }`, `:(){ :|:& }`,
 * or two functions calling each other in the background).
 */
export function spawnsWithoutBound(functions: Map<string, FunctionInfo>, name: string): boolean {
  // States are (function, whether a spawning call was taken on the way there).
  const seen = new Set<string>();
  const queue: [string, boolean][] = [[name, false]];
  while (queue.length > 0) {
    const [current, spawned] = queue.shift()!;
    const info = functions.get(current);
    if (!info) continue;
    for (const [callee, spawns] of info.calls) {
      const nowSpawned = spawned || spawns;
      if (callee === name && nowSpawned) return true;
      const key = `${nowSpawned ? 1 : 0}:${callee}`;
      if (seen.has(key)) continue;
      seen.add(key);
      queue.push([callee, nowSpawned]);
    }
  }
  return false;
}

/** A `while true`/`until false`/`for ((;;))` loop: it never ends by itself. */
export function endlessLoop(node: SyntaxNode): boolean {
  if (node.type === 'c_style_for_statement') return /^for\s*\(\(\s*[^;]*;\s*;/.test(node.text);
  const condition: string[] = [];
  for (let i = 0; i < node.childCount; i++) {
    const child = node.child(i);
    if (child?.isNamed && node.fieldNameForChild(i) === 'condition') condition.push(child.text.trim());
  }
  const text = condition.join(' ');
  // tree-sitter-bash parses `until` as a while_statement whose first child is the keyword.
  if (node.type === 'until_statement' || node.child(0)?.type === 'until') return text === 'false' || text === '! true' || text === '! :';
  return /^(true|:|\[ 1 \]|\[\[ 1 \]\]|\(\(\s*1\s*\)\))$/.test(text);
}

/** The loop body starts background jobs (`&`) and never waits for them. */
export function spawnsUnwaited(body: SyntaxNode): boolean {
  let background = false;
  let waits = false;
  forEachNode(body, (node) => {
    if (node.type === '&') background = true;
    if (node.type === 'command' && node.childForFieldName('name')?.text === 'wait') waits = true;
  });
  return background && !waits;
}
