/**
 * The sandbox plan kept between runs (host/sandbox/planCache.ts): used again only while nothing
 * its answers came from has changed, on a real file system. Each change below is one a run's plan
 * must see at once: a secret made in a shown folder, a token written into a shown config, a new
 * tool folder on PATH, a mount over a folder, another mountpoint.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadSandboxSettings, planSandbox, type PlanInput } from '../../host/sandbox/plan';
import { PLAN_CACHE_FILE, planCacheUse } from '../../host/sandbox/planCache';

const base = realpathSync(mkdtempSync('/var/tmp/avfs-plancache-'));
const home = join(base, 'home');
const avfs = join(base, 'avfs');
for (const d of [join(home, '.config', 'git'), join(home, '.cargo', 'bin'), join(home, '.tool', 'bin'), avfs]) mkdirSync(d, { recursive: true });
writeFileSync(join(home, '.config', 'git', 'config'), '[user]\n  name = me\n');
writeFileSync(join(home, '.cargo', 'config.toml'), '[build]\njobs = 2\n');
const PATH = `${join(home, '.cargo', 'bin')}:${join(home, '.tool', 'bin')}:/usr/bin:/bin`;
const cacheFile = join(avfs, PLAN_CACHE_FILE);

const input = (over: Partial<PlanInput> = {}): PlanInput => ({
  bwrap: '/usr/bin/bwrap', userns: false, avfsHome: avfs, home, mountpoint: join(avfs, 'mnt', `x.exec-${Math.random()}`), readonly: false, network: false,
  settings: loadSandboxSettings(avfs), env: { PATH }, pidMax: false, ...over,
});
/** A plan, and whether it was the kept one. */
function plan(over: Partial<PlanInput> = {}) {
  const kept = planCacheUse.kept;
  const spec = planSandbox(input(over));
  return { spec, kept: planCacheUse.kept > kept };
}
/** The same plan made afresh (nothing kept). */
function fresh(over: Partial<PlanInput> = {}) {
  rmSync(cacheFile, { force: true });
  const spec = planSandbox(input(over));
  rmSync(cacheFile, { force: true });
  return spec;
}
/** Past the window in which a change keeps a plan from being kept. */
const settle = () => spawnSync('sleep', ['0.25']);
const shownAndHidden = (s: ReturnType<typeof planSandbox>) => ({ shown: [...s.homeReadOnly, ...s.pathReadOnly], hidden: s.hiddenAgain.map((h) => h.path), links: s.pathLinks });

describe('sandbox plan: kept between runs', () => {
  after(() => rmSync(base, { recursive: true, force: true }));

  test('with nothing changed the kept plan is used, for any one-shot mountpoint, and it equals a plan made afresh', () => {
    settle();
    const first = plan();
    assert.equal(first.kept, false);
    assert.ok(existsSync(cacheFile), 'the plan was kept');
    const second = plan();
    assert.equal(second.kept, true);
    assert.deepEqual(shownAndHidden(second.spec), shownAndHidden(fresh()));
    assert.deepEqual(second.spec.pathReadOnly, [join(home, '.cargo'), join(home, '.tool', 'bin')]);
    // The run's own parts are its own, not the kept plan's.
    assert.notEqual(second.spec.mountpoint, first.spec.mountpoint);
  });

  test('a secret made in a shown folder, or a token written into a shown config, after the plan was kept is hidden at the next plan', () => {
    settle();
    plan();
    assert.equal(plan().kept, true);
    writeFileSync(join(home, '.config', 'git', 'credentials'), 'https://me:tok@example.com\n');
    const a = plan();
    assert.equal(a.kept, false);
    assert.ok(a.spec.hiddenAgain.some((h) => h.path === join(home, '.config', 'git', 'credentials')), JSON.stringify(a.spec.hiddenAgain));
    settle();
    plan();
    assert.equal(plan().kept, true);
    // Rewritten in place: the folder's times stay, the file's own change.
    writeFileSync(join(home, '.cargo', 'config.toml'), '[registry]\ntoken = "cio-secret"\n');
    const b = plan();
    assert.equal(b.kept, false);
    assert.ok(b.spec.hiddenAgain.some((h) => h.path === join(home, '.cargo', 'config.toml')), JSON.stringify(b.spec.hiddenAgain));
    settle();
    assert.deepEqual(shownAndHidden(plan().spec), shownAndHidden(fresh()));
  });

  test('a link made, a PATH changed, a settings list changed: each plans afresh', () => {
    settle();
    plan();
    assert.equal(plan().kept, true);
    const target = join(base, 'opt', 'bin');
    mkdirSync(target, { recursive: true });
    symlinkSync(target, join(home, 'bin'));
    settle();
    const linked = plan({ env: { PATH: `${join(home, 'bin')}:${PATH}` } });
    assert.equal(linked.kept, false);
    assert.deepEqual(linked.spec.pathLinks, [{ path: join(home, 'bin'), target }]);
    assert.equal(plan({ env: { PATH: `${join(home, 'bin')}:${PATH}` } }).kept, true);
    assert.equal(plan().kept, false, 'another PATH');
    const settings = { ...loadSandboxSettings(avfs), home_read_only: ['.gitconfig'] };
    assert.equal(plan({ settings }).kept, false);
    assert.deepEqual(plan({ settings }).spec.homeReadOnly, []);
  });

  test('a plan kept with one mountpoint is not used where the mount is a folder it looked at; one that met its own mount is not kept', () => {
    settle();
    plan();
    assert.equal(plan().kept, true);
    // The run's mount over ~/.tool: its bin is the agent's to write, never shown as a tool folder.
    const over = plan({ mountpoint: join(home, '.tool') });
    assert.equal(over.kept, false);
    assert.deepEqual(over.spec.pathReadOnly, [join(home, '.cargo')]);
    assert.equal(plan({ mountpoint: join(home, '.tool') }).kept, false, 'a plan that met the run\'s mount depends on where it is');
  });

  test('a folder changed just before the plan keeps it from being kept; a damaged file is planned over', () => {
    writeFileSync(join(home, '.tool', 'bin', 'new-tool'), '');
    rmSync(cacheFile, { force: true });
    plan();
    assert.equal(existsSync(cacheFile), false, 'a change within the window of the clock\'s tick');
    settle();
    plan();
    writeFileSync(cacheFile, '{"key": 1, "deps": "nothing"');
    assert.equal(plan().kept, false);
    writeFileSync(cacheFile, JSON.stringify({ key: 'x', part: {}, deps: [], looked: [] }));
    assert.equal(plan().kept, false);
    // The right key, a part cut down by hand: planned over, never half used.
    const good = JSON.parse(readFileSync(cacheFile, 'utf8'));
    writeFileSync(cacheFile, JSON.stringify({ ...good, part: { ...good.part, hiddenAgain: 'none' } }));
    const over = plan();
    assert.equal(over.kept, false);
    assert.ok(Array.isArray(over.spec.hiddenAgain));
    assert.equal(plan().kept, true);
    assert.ok(JSON.parse(readFileSync(cacheFile, 'utf8')).deps.length > 0);
  });

  test('a mount over a folder the plan looked at (as root) plans afresh, one over a folder it only passed through as well', { skip: process.getuid?.() !== 0 ? 'mounting needs root' : false }, () => {
    for (const at of [join(home, '.tool'), join(home, '.cargo', 'bin')]) {
      settle();
      plan();
      assert.equal(plan().kept, true);
      // A mount changes what is there (a FUSE mount over a PATH folder makes it the agent's), not the folder above it.
      const r = spawnSync('mount', ['-t', 'tmpfs', 'avfs-test', at]);
      assert.equal(r.status, 0, String(r.stderr));
      try {
        const covered = plan();
        assert.equal(covered.kept, false, at);
        assert.deepEqual(shownAndHidden(covered.spec), shownAndHidden(fresh()));
      } finally {
        spawnSync('umount', [at]);
      }
    }
  });
});
