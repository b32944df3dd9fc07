/**
 * How much the policy reads. Past these limits it does not guess: the command gets an `unknown`
 * part (so at least `require_approval`) whose reason names the limit, and a plain reading of
 * its words still catches denied commands. The limits keep a decision within bounded time and
 * stack: the walker recurses once per level of syntax, and a thousand nested `$(…)` would
 * otherwise exhaust the stack.
 */
import type { SyntaxNode } from './parse';

/** Shells inside shells (`sh -c`, `eval`, aliases, `trap` …). */
export const MAX_SHELL_DEPTH = 8;
/** Characters of command text. */
export const MAX_TEXT = 64 * 1024;
/** Judged parts; further commands are folded into one `…` part, their findings kept. */
export const MAX_PARTS = 500;
/** Levels of syntax (nested substitutions, subshells, braces, arrays, expansions) in one text. */
export const MAX_NESTING = 256;

/** True when the tree under `root` is more than `limit` levels deep; walks without recursion. */
export function nestedDeeperThan(root: SyntaxNode, limit: number): boolean {
  const cursor = root.walk();
  let depth = 0;
  for (;;) {
    if (cursor.gotoFirstChild()) {
      if (++depth > limit) return true;
      continue;
    }
    while (!cursor.gotoNextSibling()) {
      if (!cursor.gotoParent()) return false;
      depth--;
    }
  }
}

/** Calls `visit` on every node under `root` (itself included), without recursion. */
export function forEachNode(root: SyntaxNode, visit: (node: SyntaxNode) => void): void {
  const stack: SyntaxNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    visit(node);
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child) stack.push(child);
    }
  }
}
