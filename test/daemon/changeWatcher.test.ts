/**
 * The host's watcher of the vaults folder: a vault another process is creating (its file claimed,
 * its schema not written yet) is looked at again, quietly, until it reads; it is told as created
 * once, and nothing is logged as a failure.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ChangeWatcher,
  type VaultChangeNotice,
} from "../../host/daemon/events";
import { AvfsHome } from "../../host/store/home";
import { Vault } from "../../host/store/vault";
import { Vfs } from "../../host/vfs/vfs";
import { writeFileSync } from "node:fs";
import { runCli, tempDir } from "../helpers";
import { client, startHost } from "./helpers";

/** A started watcher of a home in `dir`, with what it tells and what it logs. */
function watching(dir: string) {
  const home = new AvfsHome(dir);
  const notices: VaultChangeNotice[] = [];
  const logs: string[] = [];
  const w = new ChangeWatcher(
    home,
    (n) => notices.push(n),
    (m) => logs.push(m),
  );
  w.start();
  return { home, notices, logs, w };
}

test("vaults created by other processes while the watcher runs are told as created, with no failure logged", async () => {
  const t = tempDir("avfs-watch-");
  const { notices, logs, w } = watching(t.dir);
  try {
    const names = Array.from({ length: 8 }, (_, i) => `new-${i}`);
    const results = await Promise.all(
      names.map((n) => runCli(["vault", "create", n], { home: t.dir })),
    );
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    const deadline = Date.now() + 10_000;
    const created = () =>
      new Set(notices.filter((n) => n.kind === "created").map((n) => n.vault));
    while (created().size < names.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual([...created()].sort(), names);
    assert.deepEqual(logs, [], "a vault being created is not a failure");
  } finally {
    w.stop();
    t.cleanup();
  }
});

test("a vault whose creator claims its file and writes it much later is told as created once it reads, with no failure logged", async () => {
  const t = tempDir("avfs-watch-slow-");
  const { home, notices, logs, w } = watching(t.dir);
  try {
    // What a creator on a loaded machine does: the claim (an empty file), then, long after the
    // watcher's rechecks of a changed file would have run out, the schema and a first file.
    writeFileSync(home.vaultFile("slow"), "", { mode: 0o600 });
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(notices.length, 0, "nothing is told of a file that does not read as a vault yet");
    const v = Vault.create("slow", home.vaultFile("slow"));
    new Vfs(v).writeFile("/a.txt", Buffer.from("a"));
    v.close();
    const deadline = Date.now() + 10_000;
    while (
      !notices.some((n) => n.kind === "created") &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      notices.filter((n) => n.kind === "created").map((n) => n.vault),
      ["slow"],
    );
    assert.deepEqual(logs, [], "a vault being created is not a failure");
  } finally {
    w.stop();
    t.cleanup();
  }
});

test("vaults the host itself creates (on its operation threads) are told as created once, with no failure in its log", async () => {
  const t = tempDir("avfs-watch-host-");
  const host = await startHost(t.dir);
  const notices: VaultChangeNotice[] = [];
  const c = await client(t.dir, {
    name: "watcher test",
    setup: (conn) =>
      conn.onNotification("vault/changed", (n: VaultChangeNotice) => {
        notices.push(n);
      }),
  });
  try {
    const names = Array.from({ length: 8 }, (_, i) => `made-${i}`);
    for (const name of names) await c.call("vault/create", { name });
    const deadline = Date.now() + 10_000;
    const created = () =>
      notices.filter((n) => n.kind === "created").map((n) => n.vault);
    while (new Set(created()).size < names.length && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(
      [...created()].sort(),
      names,
      "each vault told as created, once",
    );
    assert.doesNotMatch(host.log(), /reading the journal/);
  } finally {
    c.close();
    await host.stop();
    t.cleanup();
  }
});
