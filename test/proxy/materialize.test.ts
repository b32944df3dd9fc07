/**
 * `avfs proxy exec --materialize` through the real CLI: the command runs in a native working copy
 * of a real vault; what it changed is committed back in one transaction. Checked from outside: the
 * envelope's change summary, the vault as the CLI reads it afterwards, and real git.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { ExecutionEnvelope } from "../../host/protocol/exec";
import { workingTreeOf, workRootOf } from "../../host/proxy/workingCopy";
import { CLI, runCli, runJson, tempDir } from "../helpers";
import { client, type HostProcess, startHost } from "../daemon/helpers";

describe("avfs proxy exec --materialize", () => {
  const t = tempDir("avfs-mat-");
  const home = t.dir;
  const json = (args: string[]) => runJson(args, { home });
  const cli = (args: string[]) => runCli(args, { home });
  const flags = join(home, "flags");

  async function exec(
    vault: string,
    args: string[],
  ): Promise<{ env: ExecutionEnvelope; code: number }> {
    const r = await cli([
      "--json",
      "--vault",
      vault,
      "proxy",
      "exec",
      "--materialize",
      ...args,
    ]);
    let doc: unknown;
    try {
      doc = JSON.parse(r.stdout);
    } catch {
      throw new Error(
        `not exactly one JSON document (exit ${r.code}):\n${r.stdout}\nstderr: ${r.stderr}`,
      );
    }
    return { env: ExecutionEnvelope.parse(doc), code: r.code };
  }
  const cat = async (vault: string, p: string) =>
    (await cli(["--vault", vault, "cat", p])).stdout;
  const stat = async (vault: string, p: string) =>
    (await json(["--vault", vault, "stat", p])).json;
  /** Processes whose command line holds `text`. */
  const runningWith = (text: string) =>
    readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .filter((d) => {
        try {
          return readFileSync(`/proc/${d}/cmdline`, "utf8").includes(text);
        } catch {
          return false;
        }
      });
  const waitFor = async (what: () => boolean, ms = 20_000) => {
    const end = Date.now() + ms;
    while (!what()) {
      if (Date.now() > end) throw new Error("timed out waiting");
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  before(() => mkdirSync(flags, { recursive: true }));
  after(() => {
    rmSync(workRootOf(home), { recursive: true, force: true });
    t.cleanup();
  });

  test("every kind of change is summarised exactly and committed: rename, chmod, symlink, hard link, a deleted directory, edits", async () => {
    await json(["vault", "create", "kinds"]);
    await json([
      "--vault",
      "kinds",
      "write",
      "-p",
      "/src/app.py",
      "print(1)\n",
    ]);
    await json(["--vault", "kinds", "write", "-p", "/old/a/b.txt", "bbb\n"]);
    await json(["--vault", "kinds", "write", "/old/c.txt", "c\n"]);
    await json(["--vault", "kinds", "write", "/run.sh", "echo hi\n"]);
    await json(["--vault", "kinds", "write", "/notes.md", "n\n"]);
    await json(["--vault", "kinds", "write", "-p", "/keep/one.txt", "1\n"]);
    const script = [
      "mv notes.md NOTES.md",
      "chmod 755 run.sh",
      "ln -s src/app.py link",
      "ln src/app.py app-hard.py",
      "rm -r old",
      'echo "print(2)" >> src/app.py',
      "mkdir -p new/deep && printf xyz > new/deep/f.bin",
      "mv keep kept",
    ].join(" && ");
    const { env, code } = await exec("kinds", [
      "--sandbox",
      "none",
      "--shell",
      script,
    ]);
    assert.equal(code, 0, env.result.stderr);
    assert.equal(env.result.state, "completed");
    assert.equal(env.request.materialize, true);
    assert.equal(env.result.materialized?.committed, true);
    // Where the commit's time went, step by step: five figures that add up to (about) commit_ms.
    const steps = env.result.materialized?.commit_steps;
    assert.deepEqual(Object.keys(steps ?? {}).sort(), ["compare_ms", "finish_ms", "read_ms", "walk_ms", "write_ms"]);
    const sum = Object.values(steps!).reduce((a, b) => a + b, 0);
    assert.ok(sum > 0 && sum <= env.result.materialized!.commit_ms + 1, `steps ${JSON.stringify(steps)} against commit_ms ${env.result.materialized!.commit_ms}`);
    const c = env.result.changes!;
    assert.deepEqual(c.added, [
      {
        path: "/app-hard.py",
        type: "file",
        size: 18,
        hard_link_to: "/src/app.py",
      },
      { path: "/link", type: "symlink", size: 10, target: "src/app.py" },
      { path: "/new", type: "directory", size: 0 },
      { path: "/new/deep", type: "directory", size: 0 },
      { path: "/new/deep/f.bin", type: "file", size: 3 },
    ]);
    assert.deepEqual(c.deleted, [
      { path: "/old", type: "directory", size: 0 },
      { path: "/old/a", type: "directory", size: 0 },
      { path: "/old/a/b.txt", type: "file", size: 4 },
      { path: "/old/c.txt", type: "file", size: 2 },
    ]);
    assert.deepEqual(c.modified, [
      {
        path: "/run.sh",
        type: "file",
        size_before: 8,
        size_after: 8,
        content_changed: false,
        mode_before: "0644",
        mode_after: "0755",
      },
      {
        path: "/src/app.py",
        type: "file",
        size_before: 9,
        size_after: 18,
        content_changed: true,
      },
    ]);
    assert.deepEqual(c.renamed, [
      {
        from: "/notes.md",
        to: "/NOTES.md",
        type: "file",
        size: 2,
        content_changed: false,
      },
      {
        from: "/keep",
        to: "/kept",
        type: "directory",
        size: 0,
        content_changed: false,
      },
    ]);
    assert.deepEqual(c.totals, {
      added: 5,
      deleted: 4,
      modified: 2,
      renamed: 2,
      bytes_before: 9 + 4 + 2 + 8 + 2 + 2,
      bytes_after: 18 + 3 + 8 + 2 + 2,
    });
    // The vault holds exactly that.
    assert.equal(await cat("kinds", "/src/app.py"), "print(1)\nprint(2)\n");
    assert.equal(await cat("kinds", "/kept/one.txt"), "1\n");
    assert.equal(await cat("kinds", "/NOTES.md"), "n\n");
    assert.equal((await stat("kinds", "/run.sh")).mode, "0755");
    assert.equal((await stat("kinds", "/link")).target, "src/app.py");
    const [a, b] = [
      await stat("kinds", "/src/app.py"),
      await stat("kinds", "/app-hard.py"),
    ];
    assert.equal(a.ino, b.ino, "the hard link is one file in the vault");
    assert.equal(a.nlink, 2);
    for (const gone of ["/old", "/notes.md", "/keep"])
      assert.equal((await stat("kinds", gone)).error, "NotFound");
    assert.equal(await cat("kinds", "/new/deep/f.bin"), "xyz");
  });

  test("a warm second run costs its changes: the copy is brought up to date from the journal, and sees writes made in between", async () => {
    await json(["vault", "create", "warm"]);
    const src = join(home, "src", "f");
    mkdirSync(src, { recursive: true });
    for (let i = 0; i < 50; i++) writeFileSync(join(src, `${i}.txt`), `${i}\n`);
    assert.equal(
      (await json(["--vault", "warm", "import", src, "/f"])).code,
      0,
    );
    const first = await exec("warm", ["--sandbox", "none", "--", "true"]);
    assert.equal(first.env.result.materialized?.synced, "full");
    assert.equal(first.env.result.materialized?.pulled, 51);
    assert.deepEqual(first.env.result.changes?.totals.added, 0);
    await json(["--vault", "warm", "write", "/f/7.txt", "seven\n"]);
    await json(["--vault", "warm", "rm", "/f/8.txt"]);
    const second = await exec("warm", [
      "--sandbox",
      "none",
      "--shell",
      "cat f/7.txt; ls f | wc -l",
    ]);
    assert.equal(second.code, 0);
    assert.equal(second.env.result.materialized?.synced, "journal");
    assert.equal(
      second.env.result.materialized?.pulled,
      1,
      "only the written path is pulled",
    );
    assert.equal(second.env.result.stdout, "seven\n49\n");
    assert.equal(second.env.result.changes?.totals.modified, 0);
    // The run's own commit does not make the next run pull it again.
    const third = await exec("warm", [
      "--sandbox",
      "none",
      "--shell",
      "echo 9b > f/9.txt",
    ]);
    assert.equal(third.env.result.changes?.modified.length, 1);
    const fourth = await exec("warm", [
      "--sandbox",
      "none",
      "--",
      "cat",
      "f/9.txt",
    ]);
    assert.equal(fourth.env.result.materialized?.synced, "journal");
    assert.equal(fourth.env.result.materialized?.pulled, 0);
    assert.equal(fourth.env.result.stdout, "9b\n");
  });

  /**
   * Starts a materialized run that makes its writes, then waits for a flag file (outside the vault,
   * only looked at) and ends. It marks its start in its working copy, and removes the mark at its end.
   */
  function waitingRun(vault: string, name: string, writes: string) {
    const flag = join(flags, name);
    const mark = join(workingTreeOf(home, vault), `.started-${name}`);
    const child = spawn(
      process.execPath,
      [
        CLI,
        "--json",
        "--vault",
        vault,
        "proxy",
        "exec",
        "--materialize",
        "--sandbox",
        "none",
        "--shell",
        `${writes}; touch .started-${name}; while [ ! -e ${flag} ]; do sleep 0.05; done; rm .started-${name}`,
      ],
      {
        env: { ...process.env, AVFS_HOME: home },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const out: Buffer[] = [];
    child.stdout.on("data", (d: Buffer) => out.push(d));
    const closed = new Promise<number>((resolve) =>
      child.on("close", (code) => resolve(code ?? -1)),
    );
    const done = () =>
      closed.then((code) => ({
        env: ExecutionEnvelope.parse(
          JSON.parse(Buffer.concat(out).toString("utf8")),
        ),
        code,
      }));
    return {
      child,
      closed,
      started: () => waitFor(() => existsSync(mark)),
      release: () => writeFileSync(flag, ""),
      done,
    };
  }

  test("a CLI write to a path the run also changed is a typed conflict: nothing of the run is committed, the other write is kept, the run's files are kept aside", async () => {
    await json(["vault", "create", "clash"]);
    await json(["--vault", "clash", "write", "/shared.txt", "base\n"]);
    const run = waitingRun(
      "clash",
      "clash",
      "echo run > shared.txt; echo run > own.txt",
    );
    await run.started();
    assert.equal(
      (await json(["--vault", "clash", "write", "/shared.txt", "cli\n"])).code,
      0,
    );
    run.release();
    const { env, code } = await run.done();
    assert.equal(code, 125);
    assert.equal(env.result.state, "failed");
    assert.equal(env.result.error?.error, "WorkingCopyConflict");
    assert.deepEqual(env.result.error?.paths, ["/shared.txt"]);
    assert.equal(await cat("clash", "/shared.txt"), "cli\n");
    assert.equal((await stat("clash", "/own.txt")).error, "NotFound");
    assert.equal(env.result.materialized?.commit_steps, null, "nothing was committed");
    const kept = env.result.materialized?.kept_aside;
    assert.ok(
      kept && readFileSync(join(kept, "own.txt"), "utf8") === "run\n",
      "the run's files are kept aside",
    );
    // The next run starts from the vault as it is.
    const next = await exec("clash", [
      "--sandbox",
      "none",
      "--shell",
      "cat shared.txt; ls",
    ]);
    assert.equal(next.env.result.materialized?.synced, "full");
    assert.equal(next.env.result.stdout, "cli\nshared.txt\n");
  });

  test("a CLI write to another path during the run is merged: both are in the vault, and in the next run's copy", async () => {
    await json(["vault", "create", "merge"]);
    const run = waitingRun("merge", "merge", "echo run > own.txt");
    await run.started();
    assert.equal(
      (await json(["--vault", "merge", "write", "/other.txt", "cli\n"])).code,
      0,
    );
    run.release();
    const { env, code } = await run.done();
    assert.equal(code, 0, JSON.stringify(env.result.error));
    assert.deepEqual(env.result.changed_files, ["/own.txt"]);
    assert.equal(env.result.materialized?.merged, 1);
    assert.equal(await cat("merge", "/own.txt"), "run\n");
    assert.equal(await cat("merge", "/other.txt"), "cli\n");
    const next = await exec("merge", [
      "--sandbox",
      "none",
      "--shell",
      "cat other.txt",
    ]);
    assert.equal(next.env.result.materialized?.pulled, 0);
    assert.equal(next.env.result.stdout, "cli\n");
  });

  test("a run that times out commits nothing: the vault stays as it was, and the next run does not see its files", async () => {
    await json(["vault", "create", "slow"]);
    await json(["--vault", "slow", "write", "/a.txt", "a\n"]);
    const { env, code } = await exec("slow", [
      "--sandbox",
      "none",
      "--timeout",
      "1500",
      "--shell",
      "echo half > half.txt; echo x >> a.txt; sleep 30",
    ]);
    assert.equal(code, 124);
    assert.equal(env.result.state, "timed_out");
    assert.equal(env.result.materialized?.committed, false);
    assert.equal(env.result.changes, null);
    assert.equal((await stat("slow", "/half.txt")).error, "NotFound");
    assert.equal(await cat("slow", "/a.txt"), "a\n");
    const next = await exec("slow", [
      "--sandbox",
      "none",
      "--shell",
      "ls; cat a.txt",
    ]);
    assert.equal(next.env.result.materialized?.synced, "full");
    assert.equal(next.env.result.stdout, "a.txt\na\n");
  });

  test("kill -9 of the avfs process mid-run: the command is stopped, the vault stays at its last commit, the next run rebuilds the copy", async () => {
    await json(["vault", "create", "killed"]);
    await json(["--vault", "killed", "write", "/a.txt", "a\n"]);
    const run = waitingRun(
      "killed",
      "killed",
      "echo half > half.txt; echo x >> a.txt",
    );
    await run.started();
    run.child.kill("SIGKILL");
    await run.closed;
    // The run's guard stops the command (it would otherwise wait for its flag forever).
    await waitFor(() => runningWith(`${flags}/killed`).length === 0);
    assert.equal((await stat("killed", "/half.txt")).error, "NotFound");
    assert.equal(await cat("killed", "/a.txt"), "a\n");
    const next = await exec("killed", [
      "--sandbox",
      "none",
      "--shell",
      "ls; cat a.txt",
    ]);
    assert.equal(next.code, 0, JSON.stringify(next.env.result.error));
    assert.equal(next.env.result.materialized?.synced, "full");
    assert.equal(next.env.result.stdout, "a.txt\na\n");
  });

  test("a quota hit during the commit is a typed error and the vault is unchanged", async () => {
    await json(["vault", "create", "small"]);
    await json(["--vault", "small", "write", "/a.txt", "a\n"]);
    assert.equal(
      (await json(["--vault", "small", "quota", "set", "max_files", "5"])).code,
      0,
    );
    const { env, code } = await exec("small", [
      "--sandbox",
      "none",
      "--shell",
      "echo b > a.txt; for i in 1 2 3 4 5 6 7 8; do echo $i > f$i; done",
    ]);
    assert.equal(code, 125);
    assert.equal(env.result.state, "failed");
    assert.equal(env.result.error?.error, "QuotaExceeded");
    assert.equal(
      await cat("small", "/a.txt"),
      "a\n",
      "nothing of the run was committed",
    );
    assert.equal((await stat("small", "/f1")).error, "NotFound");
    assert.ok(existsSync(join(env.result.materialized!.kept_aside!, "f8")));
    // Deleting the vault removes its working copy, and what was kept aside of it.
    assert.ok(existsSync(workingTreeOf(home, "small").replace(/\/tree$/, "")));
    assert.equal((await json(["vault", "delete", "--yes", "small"])).code, 0);
    assert.ok(!existsSync(workingTreeOf(home, "small").replace(/\/tree$/, "")));
  });

  test("real git: a repository made in the copy is a sound repository in the vault, read through its FUSE mount", async () => {
    await json(["vault", "create", "git"]);
    for (let i = 0; i < 30; i++)
      await json([
        "--vault",
        "git",
        "write",
        "-p",
        `/src/m${i}.py`,
        `x = ${i}\n`,
      ]);
    const git = "git -c user.name=a -c user.email=a@b";
    const made = await exec("git", [
      "--shell",
      `git init -q -b main && ${git} add -A && ${git} commit -q -m init && chmod +x src/m1.py && ${git} commit -qam mode && git rev-parse HEAD`,
    ]);
    assert.equal(made.code, 0, made.env.result.stderr);
    const head = made.env.result.stdout.trim();
    assert.ok(
      made.env.result.changes!.added.some((e) => e.path === "/.git/HEAD"),
    );
    assert.deepEqual(
      made.env.result.changes!.modified.map((m) => [m.path, m.mode_after]),
      [["/src/m1.py", "0755"]],
    );
    // Through the mount (no --materialize): git finds the same history, a clean tree and sound objects.
    const r = await cli([
      "--json",
      "--vault",
      "git",
      "proxy",
      "exec",
      "--shell",
      "git rev-parse HEAD && git status --porcelain && git fsck --strict 2>&1 && git log --oneline | wc -l",
    ]);
    const env = ExecutionEnvelope.parse(JSON.parse(r.stdout));
    assert.equal(r.code, 0, env.result.stderr);
    assert.equal(env.result.stdout, `${head}\n2\n`);
  });

  test("flags that name a mount are refused with --materialize", async () => {
    await json(["vault", "create", "flags"]);
    const { env, code } = await exec("flags", [
      "--mountpoint",
      join(home, "mp"),
      "--",
      "true",
    ]);
    assert.equal(code, 125);
    assert.equal(env.result.error?.error, "InvalidInput");
  });
});

describe("--materialize through a running vault host (exec/run, the request shape the MCP exec tool and the vault shell send)", () => {
  const t = tempDir("avfs-mat-host-");
  const home = t.dir;
  let host: HostProcess | undefined;
  before(async () => {
    await runJson(["vault", "create", "h"], { home });
    await runJson(["--vault", "h", "write", "/a.txt", "a\n"], { home });
    host = await startHost(home);
  });
  after(async () => {
    await host?.stop();
    rmSync(workRootOf(home), { recursive: true, force: true });
    t.cleanup();
  });

  test("a client of the host runs a materialized command; its changes are committed and the host's clients read them", async () => {
    const c = await client(home);
    try {
      const env = ExecutionEnvelope.parse(
        await c.call("exec/run", {
          vault: "h",
          command: {
            shell: "echo b >> a.txt && mkdir d && ln -s ../a.txt d/l",
          },
          materialize: true,
          sandbox: "none",
        }),
      );
      assert.equal(
        env.result.state,
        "completed",
        JSON.stringify(env.result.error),
      );
      assert.equal(env.result.materialized?.committed, true);
      assert.deepEqual(env.result.changed_files, ["/a.txt", "/d", "/d/l"]);
      const read = await c.call("fs/readFile", { vault: "h", path: "/a.txt" });
      assert.equal(Buffer.from(read.data, "base64").toString(), "a\nb\n");
      // The CLI's own call is handed to the host too, and the copy is warm there.
      const r = await runCli(
        [
          "--json",
          "--vault",
          "h",
          "proxy",
          "exec",
          "--materialize",
          "--sandbox",
          "none",
          "--",
          "cat",
          "d/l",
        ],
        { home },
      );
      const again = ExecutionEnvelope.parse(JSON.parse(r.stdout));
      assert.equal(again.result.stdout, "a\nb\n");
      assert.equal(again.result.materialized?.synced, "journal");
    } finally {
      c.close();
    }
  });

  test("the commit-back runs on the host's operation threads: its other clients are answered while thousands of files are committed", async () => {
    const order: string[] = [];
    let settling!: () => void;
    const settled = new Promise<void>((r) => (settling = r));
    const c = await client(home, {
      setup: (conn) =>
        conn.onNotification("exec/state", (p: { state: string }) => {
          if (p.state === "settling") settling();
        }),
    });
    const other = await client(home);
    try {
      // The user's rule lets the script run (unsandboxed, the policy cannot read it).
      const rules = join(home, "rules.json");
      writeFileSync(
        rules,
        JSON.stringify({
          version: 1,
          rules: [{ id: "many", regex: "^bash many\\.sh$", action: "allow" }],
        }),
      );
      await runJson(["policy", "set-user-rules", rules], { home });
      await runJson(
        [
          "--vault",
          "h",
          "write",
          "/many.sh",
          "mkdir many && for i in $(seq 6000); do echo $i > many/f$i; done\n",
        ],
        { home },
      );
      const run = c
        .call("exec/run", {
          vault: "h",
          command: { argv: ["bash", "many.sh"] },
          materialize: true,
          sandbox: "none",
        })
        .then((env) => {
          order.push("commit done");
          return ExecutionEnvelope.parse(env);
        });
      await settled;
      // A small read is answered on the host's own thread: with the commit there, it would wait for the commit's end.
      const read = await other.call("fs/readFile", {
        vault: "h",
        path: "/a.txt",
      });
      order.push("read answered");
      assert.match(Buffer.from(read.data, "base64").toString(), /^a\n/);
      const env = await run;
      assert.equal(
        env.result.state,
        "completed",
        JSON.stringify(env.result.error),
      );
      assert.equal(
        env.result.changes?.totals.added,
        6001,
        "the directory and its files",
      );
      assert.deepEqual(order, ["read answered", "commit done"]);
      const listed = await other.call("fs/readDirectory", {
        vault: "h",
        path: "/many",
      });
      assert.equal(listed.entries.length, 6000);
    } finally {
      c.close();
      other.close();
    }
  });
});
