/** The policy corpus file (corpus.jsonl): one case per line, validated. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { Action, Category } from '../../host/protocol/policy';

const Case = z.strictObject({
  cmd: z.string().optional(),
  argv: z.array(z.string()).optional(),
  cwd: z.string().optional(),
  /** The action in `workspace` mode (the sandbox). */
  expect: Action,
  /** The action with `--sandbox none` when it differs: code the policy does not read needs a person. */
  none: Action.optional(),
  categories: z.array(Category).optional(),
  note: z.string(),
});
export type Case = z.infer<typeof Case>;

export const MOUNT = '/workspace';

/** The sandbox modes the corpus runs in, and what a case expects in each. */
export const MODES = ['workspace', 'none'] as const;
export function expected(c: Case, mode: (typeof MODES)[number]): Action {
  return mode === 'none' ? (c.none ?? c.expect) : c.expect;
}

export function loadCorpus(): Case[] {
  const text = readFileSync(join(__dirname, 'corpus.jsonl'), 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l, i) => {
      const c = Case.parse(JSON.parse(l));
      assert.ok((c.cmd === undefined) !== (c.argv === undefined), `corpus line ${i + 1}: give cmd or argv`);
      return c;
    });
}
