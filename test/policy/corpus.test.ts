/**
 * The policy corpus: ordinary agent work that must stay allowed or checkpointed, and every
 * bypass family (quoting, wrappers, substitutions, downloaded code, host paths, hooks …).
 * Each line of corpus.jsonl is { cmd | argv, cwd?, expect, categories?, note }.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { z } from 'zod';
import { Action, Category, Decision } from '../../host/protocol/policy';
import { createPolicyEngine, type PolicyEngine } from '../../host/policy/engine';

const Case = z.strictObject({
  cmd: z.string().optional(),
  argv: z.array(z.string()).optional(),
  cwd: z.string().optional(),
  expect: Action,
  categories: z.array(Category).optional(),
  note: z.string(),
});
type Case = z.infer<typeof Case>;

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

describe('policy corpus', () => {
  const cases = loadCorpus();
  let engine: PolicyEngine;
  before(async () => {
    engine = await createPolicyEngine();
  });

  it('has at least 200 commands covering every action', () => {
    assert.ok(cases.length >= 200, `only ${cases.length} cases`);
    for (const a of Action.options) assert.ok(cases.some((c) => c.expect === a), `no case expects ${a}`);
  });

  for (const c of cases) {
    const label = c.cmd ?? JSON.stringify(c.argv);
    it(`${c.expect}: ${label.replace(/\n/g, '\\n')}`, () => {
      const d = engine.decide(c.cmd !== undefined ? { shell: c.cmd } : { argv: c.argv! }, { mountpoint: MOUNT, cwd: c.cwd ?? MOUNT, home: '/home/user', rules: [] });
      Decision.parse(d);
      assert.equal(d.action, c.expect, `${c.note}\n${d.reason}\nparts:\n${d.parts.map((p) => `  ${p.action} ${p.reason}`).join('\n')}`);
      for (const cat of c.categories ?? []) assert.ok(d.categories.includes(cat), `expected category ${cat} in ${d.categories.join(',')}`);
      assert.ok(d.reason.length > 0 && d.rule.length > 0);
    });
  }
});
