/** Real tools, run in a real mount: what an agent's commands do in a vault. */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { lstat, readdir, readFile, readlink, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { bash, fuseMissing, type MountFixture, mountFixture, waitFor } from './helpers';

describe('real tools in a vault mount', { skip: fuseMissing }, () => {
  let f: MountFixture;
  let work: string;
  const run = (script: string, dir = work) => bash(script, dir, { GIT_CONFIG_NOSYSTEM: '1', HOME: join(f.dir, 'userhome') });
  before(async () => {
    f = await mountFixture({ vault: 'tools' });
    mkdirSync(join(f.dir, 'userhome'));
  });
  after(async () => f.cleanup());

  const fresh = async (name: string) => {
    work = join(f.mnt, name);
    await bash(`mkdir -p ${name}`, f.mnt);
    return work;
  };

  test('git: init, add, commit, branch, merge, gc, fsck', async () => {
    await fresh('git');
    await run(`
      git init -q -b main .
      git config user.email t@example.com && git config user.name Tester
      mkdir -p src && for i in $(seq 50); do echo "line $i" > src/f$i.txt; done
      git add -A && git commit -qm initial
      git checkout -qb feature && echo feature >> src/f1.txt && git commit -qam feature
      git checkout -q main && echo main >> src/f2.txt && git commit -qam main
      git merge -q --no-edit feature
      git gc -q && git fsck --strict
    `);
    const log = await run('git log --oneline | wc -l');
    assert.equal(log.trim(), '4');
    assert.equal(await readFile(join(work, 'src/f1.txt'), 'utf8'), 'line 1\nfeature\n');
    assert.equal((await run('git status --porcelain')).trim(), '', 'the work tree is clean after the merge');
    assert.match(await run('git count-objects -v'), /packs: 1/);
  });

  test('npm init and npm install of a local package (no network)', async () => {
    const pkgSrc = join(f.dir, 'local-dep');
    mkdirSync(pkgSrc);
    writeFileSync(join(pkgSrc, 'package.json'), JSON.stringify({ name: 'local-dep', version: '1.2.3', main: 'index.js', bin: { 'local-dep': 'cli.js' } }));
    writeFileSync(join(pkgSrc, 'index.js'), "module.exports = 'from local-dep';\n");
    writeFileSync(join(pkgSrc, 'cli.js'), "#!/usr/bin/env node\nconsole.log('cli ok');\n");
    const tgz = (await bash('npm pack --silent', pkgSrc, { npm_config_cache: join(f.dir, 'npm-cache') })).trim();
    await fresh('npm');
    const env = `export npm_config_cache=${join(f.dir, 'npm-cache')} npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false`;
    await run(`${env}; npm init -y >/dev/null && npm install --offline ${join(pkgSrc, tgz)} >/dev/null`);
    const pkg = JSON.parse(await readFile(join(work, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.ok(pkg.dependencies['local-dep']);
    assert.equal((await run(`node -e "console.log(require('local-dep'))"`)).trim(), 'from local-dep');
    assert.equal((await run('npx --offline local-dep')).trim(), 'cli ok', 'the bin link is an executable symlink');
    assert.ok((await stat(join(work, 'package-lock.json'))).size > 0);
  });

  test('python writes files and compileall', async () => {
    await fresh('py');
    await run(`
      python3 - <<'EOF'
import os
os.makedirs('pkg/sub', exist_ok=True)
for i in range(20):
    with open(f'pkg/sub/m{i}.py', 'w') as fh:
        fh.write(f'VALUE = {i}\\n' * 50)
open('pkg/__init__.py', 'w').close()
open('pkg/sub/__init__.py', 'w').close()
EOF
      python3 -m compileall -q pkg
      python3 -c "import pkg.sub.m7 as m; assert m.VALUE == 7"
    `);
    const pyc = await run('ls pkg/sub/__pycache__ | grep -c "m.*\\.pyc$"');
    assert.equal(pyc.trim(), '20');
  });

  test('sed -i, rename over an existing file, truncate, touch -d', async () => {
    await fresh('edit');
    await run(`
      printf 'alpha\\nbeta\\ngamma\\n' > t.txt
      sed -i 's/beta/BETA/' t.txt
      echo old > target && echo new > source && mv source target
      printf '0123456789' > tr && truncate -s 4 tr && truncate -s +2 tr
      touch -d '2001-02-03 04:05:06 UTC' dated
    `);
    assert.equal(await readFile(join(work, 't.txt'), 'utf8'), 'alpha\nBETA\ngamma\n');
    assert.equal(await readFile(join(work, 'target'), 'utf8'), 'new\n');
    assert.equal((await run('ls')).split('\n').filter(Boolean).join(','), 'dated,t.txt,target,tr', 'sed left no temp file');
    assert.deepEqual(await readFile(join(work, 'tr')), Buffer.from('0123\0\0'));
    assert.equal((await stat(join(work, 'dated'))).mtime.toISOString(), '2001-02-03T04:05:06.000Z');
  });

  /** Every entry under `root` with type, mode, size and bytes, and the times a tool set, to the nanosecond. */
  const treeWithTimes = async (root: string, times: 'am' | 'm' | 'none'): Promise<string[]> => {
    const out: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      for (const name of (await readdir(dir)).sort()) {
        const p = join(dir, name);
        const r = rel ? `${rel}/${name}` : name;
        const st = await lstat(p, { bigint: true });
        const t = times === 'none' ? '' : times === 'm' || st.isSymbolicLink() ? ` m=${st.mtimeNs}` : ` a=${st.atimeNs} m=${st.mtimeNs}`;
        const kind = st.isSymbolicLink() ? `-> ${await readlink(p)}` : st.isDirectory() ? '/' : `size=${st.size} ${(await readFile(p)).toString('base64').slice(0, 40)}`;
        out.push(`${r} ${kind} mode=${(Number(st.mode) & 0o7777).toString(8)}${st.isSymbolicLink() ? '' : t}`);
        if (st.isDirectory()) await walk(p, r);
      }
    };
    await walk(root, '');
    return out;
  };

  test('cp -p, cp -rp, rsync -t, touch -d, touch -m -d and touch -a -d keep times exactly as in a plain directory', async () => {
    const src = join(f.dir, 'time-src');
    await bash(
      `mkdir -p ${src}/d/e && printf 'old text\n' > ${src}/old.txt && head -c 200000 /dev/urandom > ${src}/d/blob && echo x > ${src}/d/e/x && ln -s ../old.txt ${src}/d/link
      `,
      f.dir,
    );
    // Reading a file moves its atime (relatime: it is older than a day), so the source's times are
    // set again before each copy.
    const setTimes = `touch -a -d '2018-06-07 08:09:10.111222333 UTC' ${src}/old.txt && touch -m -d '2019-01-02 03:04:05.987654321 UTC' ${src}/old.txt
       touch -d '2017-05-05 05:05:05.5 UTC' ${src}/d/blob ${src}/d/e/x ${src}/d/e && touch -d '2016-01-01 UTC' ${src}/d`;
    const plain = join(f.dir, 'time-plain');
    mkdirSync(plain);
    const mount = await fresh('times');
    const script = `
      ${setTimes}
      mkdir cp && cp -p ${src}/old.txt cp/
      ${setTimes}
      cp -rp ${src}/d cpr
      mkdir touch && touch -d '2020-02-02 20:20:20.123456789 UTC' touch/new && cp ${src}/old.txt touch/existing && touch -d '@1700000000.5' touch/existing
      touch -d '2015-05-05 05:05:05.000000005 UTC' touch/m touch/a touch/old && touch -m -d '2021-03-04 05:06:07.123456789 UTC' touch/m && touch -a -d '2022-04-05 06:07:08.987654321 UTC' touch/a
      touch -m -d '1960-06-06 06:06:06.666666666 UTC' touch/old && touch -d '2050-01-01 00:00:00.000000001 UTC' touch/new
      mkdir rs && cp -r ${src}/. rs/ && rsync -rlt ${src}/ rs/ && rsync -rlt ${src}/ rs2/`;
    for (const dir of [mount, plain]) await run(script, dir);
    for (const [sub, times] of [['cp', 'am'], ['cpr', 'am'], ['touch', 'am'], ['rs', 'm'], ['rs2', 'm']] as const) {
      assert.deepEqual(await treeWithTimes(join(mount, sub), times), await treeWithTimes(join(plain, sub), times), `${sub}: the mount differs from a plain directory`);
    }
    const st = await stat(join(mount, 'cp', 'old.txt'), { bigint: true });
    assert.equal(st.mtimeNs, 1546398245987654321n, 'cp -p kept the source mtime');
    assert.equal(st.atimeNs, 1528358950111222333n, 'cp -p kept the source atime');
    const times = async (name: string) => {
      const t = await stat(join(mount, 'touch', name), { bigint: true });
      return [t.atimeNs, t.mtimeNs];
    };
    assert.deepEqual(await times('m'), [1430802305000000005n, 1614834367123456789n], 'touch -m changed only mtime');
    assert.deepEqual(await times('a'), [1649138828987654321n, 1430802305000000005n], 'touch -a changed only atime');
    assert.deepEqual(await times('old'), [1430802305000000005n, -302032433333333334n], 'a time before 1970');
  });

  test('tar x: the same tree, bytes, modes and modification times as in a plain directory', async () => {
    // GNU tar sets only mtime (atime UTIME_OMIT); its default format keeps whole seconds, the
    // POSIX (pax) format nanoseconds. Extracted atimes are the extraction's own, so not compared.
    const src = join(f.dir, 'tar-src');
    await bash(
      `mkdir -p ${src}/pkg/lib && echo '{}' > ${src}/pkg/package.json && printf 'x%.0s' $(seq 5000) > ${src}/pkg/lib/index.js && chmod 755 ${src}/pkg/lib/index.js && ln -s lib/index.js ${src}/pkg/main.js
       touch -m -d '2019-01-02 03:04:05.987654321 UTC' ${src}/pkg/package.json && touch -m -d '1999-12-31 23:59:59.5 UTC' ${src}/pkg/lib/index.js
       touch -h -d '2018-08-08 08:08:08.080808080 UTC' ${src}/pkg/main.js && touch -m -d '2017-07-07 07:07:07.7 UTC' ${src}/pkg/lib ${src}/pkg
       tar cf ${f.dir}/pkg.tar -C ${src} pkg && tar cf ${f.dir}/pkg-pax.tar --format=posix -C ${src} pkg`,
      f.dir,
    );
    const plain = join(f.dir, 'tar-plain');
    mkdirSync(plain);
    const mount = await fresh('tarx');
    for (const dir of [mount, plain]) await run(`mkdir gnu pax && tar xf ${f.dir}/pkg.tar -C gnu && tar xf ${f.dir}/pkg-pax.tar -C pax`, dir);
    for (const format of ['gnu', 'pax']) {
      assert.deepEqual(await treeWithTimes(join(mount, format), 'm'), await treeWithTimes(join(plain, format), 'm'), `${format}: the mount differs from a plain directory`);
    }
    const st = await stat(join(mount, 'pax', 'pkg', 'package.json'), { bigint: true });
    assert.equal(st.mtimeNs, 1546398245987654321n, 'the archive mtime, to the nanosecond');
    assert.equal((await stat(join(mount, 'gnu', 'pkg', 'package.json'), { bigint: true })).mtimeNs, 1546398245000000000n);
  });

  test('symlinks and readlink; hard links share a stable inode', async () => {
    await fresh('links');
    await run(`
      echo content > file
      ln -s file rel && ln -s /nonexistent dangling && mkdir d && ln -s ../file d/up
      ln file hard && ln hard d/hard2
      echo more >> d/hard2
    `);
    assert.equal(await readlink(join(work, 'rel')), 'file');
    assert.equal(await readlink(join(work, 'dangling')), '/nonexistent');
    assert.equal(await readFile(join(work, 'd/up'), 'utf8'), 'content\nmore\n');
    assert.equal((await run('readlink -f d/up')).trim(), join(work, 'file'));
    const inos = (await run('stat -c %i file hard d/hard2')).trim().split('\n');
    assert.equal(new Set(inos).size, 1, `one inode for all names: ${inos.join(' ')}`);
    assert.equal((await run('stat -c %h file')).trim(), '3');
    const before = (await run('stat -c %i file')).trim();
    await run('rm hard d/hard2');
    // Another name's cached attributes expire within the 1 s attribute cache (docs/fuse.md).
    const settled = await waitFor(async () => (await run('stat -c %i:%h file')).trim() === `${before}:1`, 1500, 50);
    assert.ok(settled, 'the inode number is stable and the link count follows');
  });

  test('chmod +x and exec; rm -rf of a tree', async () => {
    await fresh('exec');
    await run(`
      printf '#!/bin/sh\\necho ran-$1\\n' > s.sh
      ! ./s.sh 2>/dev/null
      chmod +x s.sh
    `);
    assert.equal((await run('./s.sh ok')).trim(), 'ran-ok');
    assert.equal(((await stat(join(work, 's.sh'))).mode & 0o777).toString(8), '755');
    await run('mkdir -p tree/a/b/c && for i in $(seq 30); do echo $i > tree/a/b/c/f$i; ln -s f$i tree/a/l$i; done && rm -rf tree');
    assert.equal((await run('ls -A')).trim(), 's.sh');
  });

  test('unlink of an open file; df; flock', async () => {
    await fresh('misc');
    const out = await run(`
      python3 - <<'EOF'
import os
f = open('open.txt', 'w+')
f.write('before ')
f.flush()
os.unlink('open.txt')
assert not os.path.exists('open.txt')
assert os.listdir('.') == [], os.listdir('.')
f.write('after unlink')
f.flush()
f.seek(0)
print(f.read())
f.close()
EOF
      mkdir gone && exec 3>gone/held && echo x >&3 && rm gone/held && rmdir gone && exec 3>&-
      df -P . | tail -1
      flock -n lock -c 'flock -n lock -c "echo second-got-it" || echo second-blocked'
    `);
    const lines = out.trim().split('\n');
    assert.equal(lines[0], 'before after unlink');
    assert.match(lines[1] ?? '', /^avfs:tools\s+\d+/);
    assert.equal(lines[2], 'second-blocked');
  });

  test('SQLite in WAL mode inside the mount', async () => {
    await fresh('sqlite');
    const out = await run(`
      python3 - <<'EOF'
import sqlite3, os
a = sqlite3.connect('app.db')
assert a.execute('PRAGMA journal_mode=WAL').fetchone()[0] == 'wal'
a.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
with a:
    a.executemany('INSERT INTO t (v) VALUES (?)', [('x' * 100,) for _ in range(5000)])
b = sqlite3.connect('app.db')
assert os.path.exists('app.db-wal') and os.path.exists('app.db-shm')
print(b.execute('SELECT COUNT(*) FROM t').fetchone()[0])
with a:
    a.execute('DELETE FROM t WHERE id % 2 = 0')
print(b.execute('SELECT COUNT(*) FROM t').fetchone()[0])
a.execute('PRAGMA wal_checkpoint(TRUNCATE)')
print(b.execute('PRAGMA integrity_check').fetchone()[0])
a.close(); b.close()
EOF
    `);
    assert.deepEqual(out.trim().split('\n'), ['5000', '2500', 'ok']);
  });
});
