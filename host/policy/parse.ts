/**
 * The shell parser: tree-sitter's native runtime (the `tree-sitter` package, N-API) with the
 * tree-sitter-bash grammar's native build, loaded once per process. Both are N-API modules, so one
 * build runs on any Node from 20 on, in worker threads too (the host decides in its operation
 * threads). Loading both and making a parser takes a few milliseconds, against ~40 ms to compile
 * the same grammar as wasm, which a one-shot CLI call paid at every start (docs/policy.md, "Cold start").
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AvfsError } from '../protocol/errors';

export type SyntaxNode = import('tree-sitter').SyntaxNode;

export interface BashParser {
  /** Parses `text` and calls `fn` with the root node (`hasError` is set when the text did not parse). */
  parse<T>(text: string, fn: (root: SyntaxNode) => T): T;
}

let loaded: BashParser | undefined;

/**
 * The bash grammar's binary for this platform, loaded directly from its package's prebuilds: the
 * package's entry point would also search for it with node-gyp-build and parse the grammar's 50 kB
 * node-types table, which the walk does not use (~1.3 ms of a cold call together). Where there is
 * no prebuild (another platform, a build from source), the entry point loads it.
 */
function bashGrammar(): import('tree-sitter').Language {
  /* eslint-disable @typescript-eslint/no-require-imports -- a native module, loaded on first use (loadBashParser) */
  const prebuilt = join(dirname(require.resolve('tree-sitter-bash/package.json')), 'prebuilds', `${process.platform}-${process.arch}`, 'tree-sitter-bash.node');
  return (existsSync(prebuilt) ? require(prebuilt) : require('tree-sitter-bash')) as import('tree-sitter').Language;
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/**
 * The parser, loaded on first use. Loaded with require, where it is needed: a call whose command
 * needs no parser never loads it. The modules stay outside the bundle (scripts/build.mjs), in
 * node_modules: tree-sitter finds its binary from its own package folder.
 */
export function loadBashParser(): BashParser {
  if (loaded) return loaded;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports -- native modules, loaded on first use (above) */
    const TreeSitter = require('tree-sitter') as typeof import('tree-sitter');
    /* eslint-enable @typescript-eslint/no-require-imports */
    const grammar = bashGrammar();
    // The grammar without its node-types table: given one, setLanguage builds a class per node type
    // (~5 ms by eval) for field getters the walk does not use (it asks childForFieldName).
    const bash = { name: grammar.name, language: grammar.language } as import('tree-sitter').Language;
    const parser = new TreeSitter();
    parser.setLanguage(bash);
    loaded = {
      parse<T>(text: string, fn: (root: SyntaxNode) => T): T {
        const tree = parser.parse(text);
        if (!tree) throw new AvfsError('Internal', 'the shell parser returned no tree');
        return fn(tree.rootNode);
      },
    };
    return loaded;
  } catch (e) {
    throw new AvfsError('Internal', `cannot load the shell parser: ${e instanceof Error ? e.message : String(e)}`);
  }
}
