/**
 * What a project's vault leaves out: `.git` (the repository stays the developer's; a vault holds the
 * working tree), the staging folders of an apply in progress, the exclude list given at creation,
 * and the project's own `.gitignore` files (bulk such as node_modules, build output), each read
 * from the directory it sits in, as git reads them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import ignore, { type Ignore } from 'ignore';

/** The staging folder of an apply in progress in the project (commit.ts), never carried either way. */
export const STAGING_PREFIX = '.avfs-apply-';

export class ProjectIgnore {
  private readonly perDir = new Map<string, Ignore | null>();
  private readonly top: Ignore;

  constructor(
    private readonly root: string,
    exclude: readonly string[],
  ) {
    this.top = ignore().add([...exclude]);
  }

  /** True if the path (relative to the project, `/`-separated) or a directory above it is left out. */
  ignored(rel: string, isDir: boolean): boolean {
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const sub = parts.slice(0, i).join('/');
      if (this.leftOut(sub, i < parts.length || isDir)) return true;
    }
    return false;
  }

  /** The path itself, its parents assumed kept (what a walk from the root asks). */
  leftOut(rel: string, isDir: boolean): boolean {
    const name = rel.slice(rel.lastIndexOf('/') + 1);
    if (name === '.git' || name.startsWith(STAGING_PREFIX)) return true;
    const asked = isDir ? rel + '/' : rel;
    if (this.top.ignores(asked)) return true;
    const parts = rel.split('/');
    for (let i = 0; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      const rules = this.rulesOf(dir);
      if (rules && rules.ignores(parts.slice(i).join('/') + (isDir ? '/' : ''))) return true;
    }
    return false;
  }

  private rulesOf(dir: string): Ignore | null {
    let r = this.perDir.get(dir);
    if (r !== undefined) return r;
    let text: string | undefined;
    try {
      text = fs.readFileSync(path.join(this.root, dir, '.gitignore'), 'utf8');
    } catch {
      text = undefined;
    }
    r = text === undefined ? null : ignore().add(text);
    this.perDir.set(dir, r);
    return r;
  }
}
