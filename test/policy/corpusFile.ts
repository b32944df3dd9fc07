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
  expect: Action,
  categories: z.array(Category).optional(),
  note: z.string(),
});
export type Case = z.infer<typeof Case>;

export const MOUNT = '/workspace';

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
