/**
 * The shell parser: web-tree-sitter with the tree-sitter-bash grammar, loaded once per process.
 * Parsing is synchronous after `loadBashParser()` resolves.
 */
import { setFlagsFromString } from 'node:v8';
import { AvfsError } from '../protocol/errors';
import { BASH_WASM, locateWasm, RUNTIME_WASM } from './wasm';


export type SyntaxNode = import('web-tree-sitter').Node;

export interface BashParser {
  /**
   * Parses `text` and calls `fn` with the root node (`hasError` is set when the text did not
   * parse). The tree lives in wasm memory and is freed when `fn` returns, so keep no nodes.
   */
  parse<T>(text: string, fn: (root: SyntaxNode) => T): T;
}

export interface ParserOptions {
  /**
   * The process makes a decision or two and exits (the CLI). V8 then compiles the 1.3 MB
   * grammar with its baseline compiler only: by default it also optimises the whole module on
   * background threads, and a one-shot process waits for that work at exit, several times the
   * cost of the parse itself (docs/policy.md, "Cold start", has the figures). A long-lived process (the
   * host, a mount server) should leave this off, since optimised code parses faster once warm.
   * The choice is process-wide and fixed by the first load: it cannot change once wasm is compiled.
   */
  oneShot?: boolean;
}

let loading: Promise<BashParser> | undefined;

export function loadBashParser(options: ParserOptions = {}): Promise<BashParser> {
  if (options.oneShot && !loading) setFlagsFromString('--liftoff-only');
  loading ??= load().catch((e: unknown) => {
    loading = undefined;
    throw new AvfsError('Internal', `cannot load the shell parser: ${e instanceof Error ? e.message : String(e)}`);
  });
  return loading;
}

async function load(): Promise<BashParser> {
  // The CJS build of web-tree-sitter: its ESM build needs import.meta.url, which a CJS bundle
  // lacks. Required here, not at the top: a call whose command needs no parser never loads it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const TreeSitter = require('web-tree-sitter') as typeof import('web-tree-sitter');
  const runtime = locateWasm(RUNTIME_WASM);
  await TreeSitter.Parser.init({ locateFile: () => runtime });
  const bash = await TreeSitter.Language.load(locateWasm(BASH_WASM));
  const parser = new TreeSitter.Parser();
  parser.setLanguage(bash);
  return {
    parse<T>(text: string, fn: (root: SyntaxNode) => T): T {
      const tree = parser.parse(text);
      if (!tree) throw new AvfsError('Internal', 'the shell parser returned no tree');
      try {
        return fn(tree.rootNode);
      } finally {
        tree.delete();
      }
    },
  };
}
