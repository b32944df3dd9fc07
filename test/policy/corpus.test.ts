/**
 * The policy corpus: ordinary agent work that must stay allowed or checkpointed, and every
 * bypass family (quoting, wrappers, substitutions, downloaded code, host paths, hooks …).
 * Each line of corpus.jsonl is { cmd | argv, cwd?, expect, categories?, note }.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { Action, Decision, type PolicyCommand } from '../../host/protocol/policy';
import { createPolicyEngine, decideOnce, plainArgv, type PolicyEngine } from '../../host/policy/engine';
import { expected, loadCorpus, MODES, MOUNT } from './corpusFile';

/** The bypass families of issue 8; corpus notes start with the family's name. */
const FAMILIES = [
  "signals beyond the command's own processes",
  'options that make a tool run a program',
  'options that write a file',
  'options that read a file',
  'shell state that moves paths outside',
  'programs that run other programs from their arguments',
  'environment that hijacks what runs',
  'host system state',
  'resource exhaustion',
  'word splitting of known values',
  'positional parameters and unset variables',
  'inline code that starts programs',
  'code from a process substitution or xargs input',
  // Issue 21: families other agent tools' users reported.
  'obfuscated inline code',
  "other shells' -c text",
  'tools with shell escapes',
  'network and publishing tools the table does not know',
  'package installers of other ecosystems',
  'persistence and host configuration',
  'privilege through modes and user switchers',
  'secrets printed from the environment',
  'options and environment variables that run programs',
  'avfs itself from inside a run',
  'arithmetic contexts that run substitutions held in variables',
  'substitutions inside backticks in defaults and here-docs',
  'sh -c scripts that use $0',
  'shell state that changes what a name runs',
  'writing a file then running it',
  "symlinks judged from the link's folder",
  'stored git configuration',
];
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

  it('closes each bypass family with several members, their categories, and benign twins', () => {
    for (const family of FAMILIES) {
      const lines = cases.filter((c) => c.note.startsWith(family));
      const twins = lines.filter((c) => c.note.includes('benign twin'));
      const members = lines.filter((c) => !c.note.includes('benign twin'));
      assert.ok(members.length >= 8, `${family}: only ${members.length} members`);
      assert.ok(twins.length >= 3, `${family}: only ${twins.length} benign twins`);
      for (const c of members) {
        assert.ok(c.expect === 'require_approval' || c.expect === 'deny', `${family}: member ${c.cmd} expects ${c.expect}`);
        assert.ok(c.none === undefined || c.none === 'require_approval' || c.none === 'deny', `${family}: member ${c.cmd} expects ${c.none} unsandboxed`);
        assert.ok(c.categories && c.categories.length > 0 || c.expect === 'deny', `${family}: member ${c.cmd} names no category`);
      }
    }
  });

  for (const mode of MODES) {
    describe(`sandbox ${mode}`, () => {
      for (const c of cases) {
        const label = c.cmd ?? JSON.stringify(c.argv);
        const want = expected(c, mode);
        it(`${want}: ${label.replace(/\n/g, '\\n')}`, () => {
          const d = engine.decide(c.cmd !== undefined ? { shell: c.cmd } : { argv: c.argv! }, { mountpoint: MOUNT, cwd: c.cwd ?? MOUNT, home: '/home/user', rules: [], sandbox: mode });
          Decision.parse(d);
          assert.equal(d.action, want, `${c.note}\n${d.reason}\nparts:\n${d.parts.map((p) => `  ${p.action} ${p.reason}`).join('\n')}`);
          for (const cat of c.categories ?? []) assert.ok(d.categories.includes(cat), `expected category ${cat} in ${d.categories.join(',')}`);
          assert.ok(d.reason.length > 0 && d.rule.length > 0);
        });
      }
    });
  }

  it('unsandboxed, code the policy does not read is never allowed without a person', () => {
    for (const c of cases) {
      const ctx = { mountpoint: MOUNT, cwd: c.cwd ?? MOUNT, home: '/home/user', rules: [] };
      const d = engine.decide(c.cmd !== undefined ? { shell: c.cmd } : { argv: c.argv! }, ctx);
      // A caller that does not say is judged as unsandboxed.
      assert.equal(d.action, expected(c, 'none'), `absent sandbox: ${c.cmd ?? c.argv}`);
      if (d.categories.includes('code_execution')) assert.ok(d.action === 'require_approval' || d.action === 'deny', `${c.cmd ?? c.argv}: ${d.action}`);
    }
  });
});

/**
 * The host decides in its operation threads, each of which loads the native parser: two threads
 * at once must decide exactly as the main thread does.
 */
describe('policy in worker threads', () => {
  it('decides the whole corpus in two threads at once exactly as the main thread does', async () => {
    const engine = await createPolicyEngine();
    const here = loadCorpus().map((c) => engine.decide(c.cmd !== undefined ? { shell: c.cmd } : { argv: c.argv! }, { mountpoint: MOUNT, cwd: c.cwd ?? MOUNT, home: '/home/user', rules: [] }));
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, '..', 'fixtures', 'policyDecisions.ts')], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout), [here, here]);
  });
});

/**
 * A one-shot decision (decideOnce) loads the shell parser only when the command holds shell text
 * to read; either way it must decide exactly as the loaded engine does.
 */
describe('policy decided once, the parser loaded only when needed', () => {
  const ctx = (cwd?: string) => ({ mountpoint: MOUNT, cwd: cwd ?? MOUNT, home: '/home/user', rules: [] });
  let engine: PolicyEngine;
  let loads = 0;
  const load = async () => {
    loads++;
    return engine;
  };
  before(async () => {
    engine = await createPolicyEngine();
  });

  it('decides the whole corpus, as shell text and as plain argv, exactly as the engine does', async () => {
    let plainLines = 0;
    for (const c of loadCorpus()) {
      const forms: PolicyCommand[] = c.cmd !== undefined ? [{ shell: c.cmd }] : [{ argv: c.argv! }];
      // A shell command of plain words is also judged as the argv a caller would pass with `--`.
      if (c.cmd !== undefined && /^[\w@%+=:,./ -]+$/.test(c.cmd)) forms.push({ argv: c.cmd.split(/ +/).filter(Boolean) });
      for (const cmd of forms) assert.deepEqual(await decideOnce(load, cmd, ctx(c.cwd)), engine.decide(cmd, ctx(c.cwd)), JSON.stringify(cmd));
      // Shell text read as plain words (no parser) decides as the parser's reading does.
      const plain = c.cmd !== undefined ? plainArgv(c.cmd) : undefined;
      if (plain) {
        plainLines++;
        assert.deepEqual(engine.decide({ argv: plain }, ctx(c.cwd)), engine.decide({ shell: c.cmd! }, ctx(c.cwd)), c.cmd);
      }
    }
    assert.ok(plainLines >= 200, `${plainLines} plain lines checked`);
  });

  it('an argv of plain words needs no parser; shell text, and a program given shell text, do', async () => {
    const loaded = async (cmd: PolicyCommand) => {
      loads = 0;
      await decideOnce(load, cmd, ctx());
      return loads > 0;
    };
    assert.equal(await loaded({ argv: ['npm', 'test'] }), false);
    assert.equal(await loaded({ argv: ['rm', '-rf', '/'] }), false);
    // Shell text of plain words is that argv; anything the shell reads more into needs the parser.
    assert.equal(await loaded({ shell: 'npm test' }), false);
    assert.equal(await loaded({ shell: 'rm -rf /' }), false);
    assert.equal((await decideOnce(load, { shell: 'rm -rf /' }, ctx())).action, 'deny');
    for (const text of ['npm test | cat', 'A=1 ls', 'LD_PRELOAD=/tmp/x.so ls', 'export PATH', 'cd /etc', 'eval ls', 'exec rm -rf /', 'if true', 'rm -rf ~', 'rm -rf $HOME', "rm 'x'", 'ls *', '%1', 'ls\tx', 'ls\nrm -rf /']) {
      assert.equal(await loaded({ shell: text }), true, text);
    }
    assert.equal(await loaded({ argv: ['bash', '-c', 'rm -rf ~'] }), true);
    assert.equal((await decideOnce(load, { argv: ['bash', '-c', 'rm -rf ~'] }, ctx())).action, 'deny');
  });
});

/**
 * Inputs past what the parser or the walker reads: a decision (never a throw), at least
 * require_approval with the reason naming the limit, and a denied command inside still denied.
 */
describe('policy limits', () => {
  let engine: PolicyEngine;
  before(async () => {
    engine = await createPolicyEngine();
  });
  const decide = (shell: string) => Decision.parse(engine.decide({ shell }, { mountpoint: MOUNT, cwd: MOUNT, home: '/home/user', rules: [] }));
  const nest = (open: string, inner: string, close: string, n: number) => open.repeat(n) + inner + close.repeat(n);

  const approvals: [string, string, RegExp][] = [
    ['1,000 nested $(…)', nest('echo $(', 'ls', ')', 1000), /nests deeper than/],
    ['5,000 nested subshells', nest('(', 'ls', ')', 5000), /nests deeper than|does not parse/],
    ['3,000 nested braces', nest('{ ', 'ls', '; }', 3000), /nests deeper than/],
    ['1,000 nested arrays of substitutions', nest('a=($(echo ', 'x', '))', 1000), /nests deeper than/],
    ['2,000 nested ${…:-…}', nest('echo ${x:-', 'y', '}', 2000), /nests deeper than/],
    ['2,000 nested if', nest('if true; then ', 'ls', '; fi', 2000), /nests deeper than|more than 500 commands/],
    ['a 100,000-character command', 'echo ' + 'a'.repeat(100_000), /longer than/],
    ['20,000 commands', 'ls; '.repeat(20_000), /more than 500 commands/],
  ];
  for (const [name, shell, why] of approvals) {
    it(`decides ${name} without throwing, at least require_approval`, () => {
      const d = decide(shell);
      assert.ok(d.action === 'require_approval' || d.action === 'deny', `${name}: ${d.action}`);
      assert.match(d.reason + d.parts.map((p) => p.reason).join(' '), why);
    });
  }

  it('still denies a denied command hidden past a limit', () => {
    assert.equal(decide(nest('echo $(', 'rm -rf /', ')', 1000)).action, 'deny');
    assert.equal(decide('ls; '.repeat(20_000) + 'rm -rf ~').action, 'deny');
    assert.equal(decide('rm -rf / ' + 'a'.repeat(100_000)).action, 'deny');
  });

  it('bounds brace expansion: 2^60 words are not computed, and the unread ones are unknown', () => {
    const d = decide('rm -rf ' + '{a,b}'.repeat(60));
    assert.equal(d.action, 'require_approval');
    assert.ok(d.categories.includes('unknown'));
    // Twenty thousand braces that expand to nothing are read in one pass.
    assert.equal(decide('cat ' + '{x}'.repeat(20_000)).action, 'allow');
  });
});
