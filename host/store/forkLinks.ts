/**
 * Who forked from whom, and how gc and delete find a vault's forks without guessing.
 *
 * A fork names its parent in its own `meta` (`parent`). A vault also records each fork made from
 * it (`fork.<name>`), and `forks_recorded` marks that record as complete from the vault's creation
 * on. Discovery reads every vault's parent. A vault file that cannot be read might be a fork of
 * the vault at hand (its gc would free chunks the file may need once repaired) when:
 * - the records of that vault or of one of its readable descendants name it: it is (was) a fork;
 * - else, when all those records are complete: it is not;
 * - else (vaults made before the record existed): it is, unless the file holds no tree at all
 *   (empty, or not SQLite), which references no chunk.
 * When it might be, gc and delete stop with StorageError naming it (fail closed).
 */
import { existsSync } from 'node:fs';
import { AvfsError } from '../protocol/errors';
import { type Db, inspectDb, tableNames, vaultFileProblem } from './db';
import { backendOfFile, inspectMeta } from './engine';
import type { AvfsHome } from './home';

export const FORK_KEY_PREFIX = 'fork.';
export const FORKS_RECORDED_KEY = 'forks_recorded';

interface ForkLinks {
  parent: string | null;
  /** Forks this vault records having made. */
  forks: string[];
  /** Whether `forks` lists every fork ever made from this vault. */
  complete: boolean;
}

const NO_LINKS: ForkLinks = { parent: null, forks: [], complete: true };

/** A vault's fork links, read directly and read-only (any schema version has `meta`). */
function readLinks(home: AvfsHome, name: string): ForkLinks {
  const file = home.vaultFile(name);
  if (!existsSync(file)) return NO_LINKS;
  const problem = vaultFileProblem(file);
  if (problem?.kind === 'empty' || problem?.kind === 'not-sqlite') {
    throw new AvfsError('StorageError', `cannot read vault ${name}: ${problem.reason}`, { vault: name, reason: problem.reason, no_tree: true });
  }
  let db: Db | undefined;
  try {
    let rows: Array<{ key: string; value: string }>;
    const kind = backendOfFile(file);
    if (kind === 'lmdb' || kind === 'postgres') rows = inspectMeta(file, ['parent', FORKS_RECORDED_KEY], [FORK_KEY_PREFIX]);
    else {
      db = inspectDb(file);
      if (!tableNames(db).has('meta')) return NO_LINKS;
      rows = db.prepare("SELECT key, value FROM meta WHERE key = 'parent' OR key = ? OR key LIKE 'fork.%'").all(FORKS_RECORDED_KEY) as Array<{ key: string; value: string }>;
    }
    return {
      parent: rows.find((r) => r.key === 'parent')?.value ?? null,
      forks: rows.filter((r) => r.key.startsWith(FORK_KEY_PREFIX)).map((r) => r.key.slice(FORK_KEY_PREFIX.length)),
      complete: rows.some((r) => r.key === FORKS_RECORDED_KEY),
    };
  } catch (e) {
    const why = e instanceof AvfsError && typeof e.details.reason === 'string' ? e.details.reason : (e as Error).message;
    throw new AvfsError('StorageError', `cannot read vault ${name}: ${why}`, { vault: name, reason: why });
  } finally {
    db?.close();
  }
}

/** The parent named in a vault file; an unreadable file is an error, never "no parent". */
export function parentOf(home: AvfsHome, name: string): string | null {
  return readLinks(home, name).parent;
}

interface ForkTree {
  /** Every vault that descends from the root, nearest first. */
  descendants: string[];
  parents: Map<string, string | null>;
}

/**
 * The vaults descending from `root`. With `strict` (gc, delete), a vault whose file cannot be
 * read fails the call unless the records prove it is not in the tree.
 */
function forkTree(home: AvfsHome, root: string, strict: boolean): ForkTree {
  const links = new Map<string, ForkLinks>();
  const unreadable = new Map<string, AvfsError>();
  for (const n of home.names()) {
    if (n === root) continue;
    try {
      links.set(n, readLinks(home, n));
    } catch (e) {
      unreadable.set(n, e as AvfsError);
    }
  }
  const parents = new Map([...links].map(([n, l]) => [n, l.parent] as const));
  const descendants: string[] = [];
  const walk = (p: string) => {
    for (const [n, par] of parents) {
      if (par === p && !descendants.includes(n)) {
        descendants.push(n);
        walk(n);
      }
    }
  };
  walk(root);
  if (strict && unreadable.size > 0) {
    let rootLinks: ForkLinks;
    try {
      rootLinks = readLinks(home, root);
    } catch {
      rootLinks = { parent: null, forks: [], complete: false };
    }
    const tree = [rootLinks, ...descendants.map((d) => links.get(d)!)];
    const complete = tree.every((l) => l.complete);
    const recorded = new Set(tree.flatMap((l) => l.forks));
    for (const [n, e] of unreadable) {
      if (!recorded.has(n) && (complete || e.details.no_tree === true)) continue;
      throw new AvfsError(
        'StorageError',
        `${e.message}; it might be a fork of ${root}, so this stops rather than guess: repair it, or remove it with 'avfs vault delete ${n}'`,
        { vault: n, reason: e.details.reason, for_vault: root },
      );
    }
  }
  return { descendants, parents };
}

/** The vaults whose parent is `name`. With `strict: false` (display only), unreadable vaults are left out. */
export function childrenOf(home: AvfsHome, name: string, opts: { strict?: boolean } = {}): string[] {
  const t = forkTree(home, name, opts.strict ?? true);
  return t.descendants.filter((d) => t.parents.get(d) === name);
}

/** Every vault that descends from `name`; fails closed as described above. */
export function descendantsOf(home: AvfsHome, name: string): string[] {
  return forkTree(home, name, true).descendants;
}
