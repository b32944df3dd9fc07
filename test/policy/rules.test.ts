/** Rule files: validation errors that name the field, loading, and precedence across sources. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AvfsError } from '../../host/protocol/errors';
import type { PolicyRule, RuleSet } from '../../host/protocol/policy';
import { createPolicyEngine, type PolicyEngine } from '../../host/policy/engine';
import { compileRules, loadUserRules, parseRuleFile, userRulesPath, writeUserRules } from '../../host/policy/rules';

const user = (rules: PolicyRule[]): RuleSet => ({ source: 'user', origin: '/home/u/.avfs/policy.json', rules });
const vault = (rules: PolicyRule[]): RuleSet => ({ source: 'vault', origin: 'vault:v', rules });

function invalid(text: string): AvfsError {
  try {
    parseRuleFile(text, 'rules.json', 'user');
  } catch (e) {
    assert.ok(e instanceof AvfsError, String(e));
    assert.equal(e.kind, 'PolicyFileInvalid');
    assert.equal(e.exitCode, 24);
    assert.equal(e.details.file, 'rules.json');
    return e;
  }
  assert.fail('the file was accepted');
}

describe('rule files', () => {
  it('accepts every matcher kind and keeps the order', () => {
    const set = parseRuleFile(
      JSON.stringify({
        version: 1,
        rules: [
          { id: 'a', exact: ['npm', 'test'], action: 'allow' },
          { prefix: ['git', 'push'], action: 'deny', reason: 'no pushes' },
          { glob: 'npx prettier *', action: 'allow' },
          { regex: '^terraform (plan|show)\\b', action: 'require_approval' },
          { category: 'networked', action: 'deny' },
        ],
      }),
      'f.json',
      'user',
    );
    assert.equal(set.rules.length, 5);
    assert.equal(set.source, 'user');
    assert.equal(set.rules[1]!.reason, 'no pushes');
  });

  it('names the field of a bad file', () => {
    assert.equal(invalid('{ nope').details.field, '');
    assert.match(invalid('{ nope').message, /not valid JSON/);
    assert.equal(invalid(JSON.stringify({ rules: [{ exact: ['ls'] }] })).details.field, 'rules.0.action');
    assert.equal(invalid(JSON.stringify({ rules: [{ exact: ['ls'], action: 'maybe' }] })).details.field, 'rules.0.action');
    assert.equal(invalid(JSON.stringify({ rules: [{ action: 'allow' }] })).details.field, 'rules.0.exact');
    assert.equal(invalid(JSON.stringify({ rules: [{ exact: ['ls'], prefix: ['ls'], action: 'allow' }] })).details.field, 'rules.0.prefix');
    assert.equal(invalid(JSON.stringify({ rules: [{ regex: '([', action: 'deny' }] })).details.field, 'rules.0.regex');
    assert.equal(invalid(JSON.stringify({ rules: [{ category: 'nuclear', action: 'deny' }] })).details.field, 'rules.0.category');
    assert.equal(invalid(JSON.stringify({ rules: [{ exact: [], action: 'deny' }] })).details.field, 'rules.0.exact');
    assert.equal(invalid(JSON.stringify({ rules: [], extra: 1 })).details.field, '');
    assert.equal(invalid(JSON.stringify({ rules: [{ exact: ['ls'], action: 'allow', colour: 'red' }] })).details.field, 'rules.0');
    assert.equal(invalid(JSON.stringify({ version: 2, rules: [] })).details.field, 'version');
    assert.equal(invalid(JSON.stringify([])).details.field, '');
  });

  describe('the user file in the avfs home', () => {
    let home: string;
    before(() => {
      home = mkdtempSync(join(tmpdir(), 'avfs-policy-'));
    });
    after(() => rmSync(home, { recursive: true, force: true }));

    it('is optional', () => {
      assert.equal(loadUserRules(home), null);
    });
    it('is loaded from <home>/policy.json, and reported as changed unless avfs policy wrote it as it is', () => {
      writeFileSync(userRulesPath(home), JSON.stringify({ rules: [{ prefix: ['make'], action: 'allow' }] }));
      const set = loadUserRules(home)!;
      assert.equal(set.origin, join(home, 'policy.json'));
      assert.deepEqual(set.rules[0]!.prefix, ['make']);
      assert.equal(set.changedOutside, true, 'no digest was recorded for it');
      writeUserRules(home, { rules: [{ prefix: ['make'], action: 'allow' }] });
      assert.equal(loadUserRules(home)!.changedOutside, undefined);
      // One byte changed by anything else (here: a space) is a change.
      writeFileSync(userRulesPath(home), readFileSync(userRulesPath(home), 'utf8') + ' ');
      assert.equal(loadUserRules(home)!.changedOutside, true);
      writeUserRules(home, null);
      assert.equal(loadUserRules(home), null);
    });
    it('is an error when invalid, never a silent fallback', () => {
      writeFileSync(userRulesPath(home), JSON.stringify({ rules: [{ prefix: 'make', action: 'allow' }] }));
      assert.throws(() => loadUserRules(home), (e: unknown) => e instanceof AvfsError && e.kind === 'PolicyFileInvalid' && e.details.field === 'rules.0.prefix' && e.details.file === join(home, 'policy.json'));
    });
  });
});

describe('rule precedence', () => {
  let engine: PolicyEngine;
  before(async () => {
    engine = await createPolicyEngine();
  });
  const decide = (shell: string, rules: RuleSet[], sandbox: 'workspace' | 'none' = 'workspace') =>
    engine.decide({ shell }, { mountpoint: '/w', cwd: '/w', home: '/home/u', rules, sandbox });

  it('uses the built-in defaults with no rules', () => {
    assert.equal(decide('npm install', []).action, 'require_approval');
    assert.equal(decide('npm install', []).rule, 'builtin:package_install');
  });

  it('lets a user argv rule decide ordinary categories', () => {
    const rules = [user([{ id: 'npm-ok', prefix: ['npm', 'install'], action: 'allow' }])];
    const d = decide('npm install', rules);
    assert.equal(d.action, 'allow');
    assert.equal(d.rule, 'user:npm-ok');
    assert.equal(decide('npm ci', rules).action, 'require_approval', 'prefix matches whole tokens only');
  });

  it('matches exact argv, prefix, glob and regex by the program base name', () => {
    const rules = [
      user([
        { exact: ['git', 'status'], action: 'deny' },
        { glob: 'make *', action: 'require_approval' },
        { regex: '^cargo (build|test)\\b', action: 'allow' },
      ]),
    ];
    assert.equal(decide('/usr/bin/git status', rules).action, 'deny');
    assert.equal(decide('git status -s', rules).action, 'allow', 'exact does not match extra arguments');
    assert.equal(decide('make all', rules).action, 'require_approval');
    assert.equal(decide('make', rules).action, 'allow_with_checkpoint', 'glob `make *` needs an argument');
    assert.equal(decide('cargo build --release', rules).action, 'allow');
    assert.equal(decide('cargo install x', rules).action, 'require_approval');
  });

  it('judges every part against the rules: a deny rule is not hidden by a chain', () => {
    const rules = [user([{ id: 'no-force', prefix: ['git', 'push', '--force'], action: 'deny' }])];
    const d = decide('git add . && git commit -m x; git push --force', rules);
    assert.equal(d.action, 'deny');
    assert.equal(d.rule, 'user:no-force');
    assert.equal(d.parts.length, 3);
  });

  it('never lets an allow rule lower a guard category', () => {
    const rules = [user([{ glob: 'cat *', action: 'allow' }, { prefix: ['git', 'show'], action: 'allow' }])];
    assert.equal(decide('cat README.md', rules).action, 'allow');
    assert.equal(decide('cat /etc/shadow', rules).action, 'deny');
    assert.equal(decide('git show > ~/.ssh/authorized_keys', rules).action, 'deny');
    assert.equal(decide('git show HEAD:x > .git/hooks/pre-commit', rules).action, 'deny');
  });

  it('deny wins over allow across sources: a vault cannot loosen the user', () => {
    const rules = [user([{ prefix: ['npm', 'publish'], action: 'deny' }]), vault([{ exact: ['npm', 'publish'], action: 'allow' }])];
    assert.equal(decide('npm publish', rules).action, 'deny');
    const rules2 = [user([{ prefix: ['npm', 'publish'], action: 'allow' }]), vault([{ exact: ['npm', 'publish'], action: 'deny' }])];
    assert.equal(decide('npm publish', rules2).action, 'deny');
    assert.equal(decide('npm publish', rules2).rule, 'vault:#1');
  });

  it('lets the user change a category, but a vault only tighten one', () => {
    const loose = [user([{ category: 'networked', action: 'allow' }])];
    assert.equal(decide('curl https://example.com', loose).action, 'allow');
    assert.equal(decide('curl https://example.com', loose).rule, 'user:#1');
    const container = [user([{ category: 'container', action: 'require_approval' }])];
    assert.equal(decide('docker ps', container).action, 'require_approval');
    const vaultLoosens = [vault([{ category: 'container', action: 'allow' }, { category: 'read_only', action: 'require_approval' }])];
    assert.equal(decide('docker ps', vaultLoosens).action, 'deny');
    assert.equal(decide('ls', vaultLoosens).action, 'require_approval');
    const compiled = compileRules(vaultLoosens);
    assert.match(compiled.categories.container.note ?? '', /can only tighten/);
  });

  it('never lets a vault rule loosen what the built-in table or the user decided', () => {
    const loosen = [vault([{ prefix: ['docker'], action: 'allow' }, { prefix: ['curl'], action: 'allow' }, { regex: '.*', action: 'allow' }])];
    assert.equal(decide('docker run --privileged --pid=host alpine', loosen).action, 'deny');
    assert.equal(decide('curl https://example.com', loosen).action, 'require_approval');
    assert.equal(decide('rm -rf build', loosen).action, 'allow_with_checkpoint');
    const userDeny = [user([{ category: 'networked', action: 'deny' }]), vault([{ glob: 'wget *', action: 'allow' }])];
    assert.equal(decide('wget https://example.com/x', userDeny).action, 'deny');
    // It can still tighten.
    assert.equal(decide('ls', [vault([{ exact: ['ls'], action: 'require_approval' }])]).action, 'require_approval');
  });

  it('holds a user file changed outside avfs policy to tightening, like a vault', () => {
    const changed: RuleSet = { ...user([{ prefix: ['docker'], action: 'allow' }, { category: 'privilege', action: 'allow' }, { prefix: ['ls'], action: 'deny' }]), changedOutside: true };
    assert.equal(decide('docker run --privileged alpine', [changed]).action, 'deny');
    assert.equal(decide('sudo rm -rf /', [changed]).action, 'deny');
    assert.equal(decide('ls', [changed]).action, 'deny');
    assert.match(compileRules([changed]).categories.privilege.note ?? '', /changed outside/);
    const same = user([{ prefix: ['docker'], action: 'allow' }]);
    assert.equal(decide('docker ps', [same]).action, 'allow', 'the person\'s own file still decides');
  });

  it('judges code it cannot read by the sandbox mode; absent is none', () => {
    const absent = (shell: string) => engine.decide({ shell }, { mountpoint: '/w', cwd: '/w', home: '/home/u', rules: [] }).action;
    for (const line of ['python3 evil.py', 'bash bomb.sh', 'make', 'npm test', 'some-tool --flag', './run.sh']) {
      assert.equal(decide(line, []).action, 'allow_with_checkpoint', line);
      assert.equal(decide(line, [], 'none').action, 'require_approval', line);
      assert.equal(absent(line), 'require_approval', line);
    }
    for (const line of ['rm -rf build', 'cp a b', 'sed -i s/a/b/ f', 'ls']) assert.equal(decide(line, []).action, decide(line, [], 'none').action, line);
    // The user may choose otherwise for their unsandboxed runs.
    assert.equal(decide('npm test', [user([{ category: 'code_execution', action: 'allow_with_checkpoint' }])], 'none').action, 'allow_with_checkpoint');
  });

  it('takes the strictest of several matching rules', () => {
    const rules = [user([{ prefix: ['make'], action: 'allow' }]), vault([{ prefix: ['make', 'deploy'], action: 'require_approval' }])];
    assert.equal(decide('make build', rules).action, 'allow');
    assert.equal(decide('make deploy', rules).action, 'require_approval');
  });

  it('keeps parse failures from being allowed even by a broad allow rule', () => {
    const rules = [user([{ regex: '.*', action: 'allow' }])];
    assert.notEqual(decide('ls "unterminated', rules).action, 'allow');
  });
});
