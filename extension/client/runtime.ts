// Which Node runs the vault host, checked before the host is started. The host loads
// better-sqlite3, a native module built for one Node ABI (NODE_MODULE_VERSION); the extension host
// runs on another runtime (Electron in desktop VS Code, Node 24 in code-server), and the machine's
// Node may be any release or none. So the installed extension ships its own Node
// (runtime/bin/node, with better-sqlite3 built for it: scripts/package.mjs) and runs the host on
// it; `avfs.nodePath` overrides it, and a checkout (no runtime/) uses `node` from PATH, for which
// `npm install` built the module. A Node that cannot load the module is reported with both versions
// and the fix, instead of a host that crashes at its first vault. No `vscode` import: unit-tested
// under node:test.
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';

/** Node releases by the NODE_MODULE_VERSION their native modules are built for. */
const NODE_BY_ABI: Record<string, string> = {
  '93': '16',
  '108': '18',
  '111': '19',
  '115': '20',
  '120': '21',
  '127': '22',
  '131': '23',
  '137': '24',
  '141': '25',
};
const MIN_NODE_MAJOR = 20;

/** What the probe (PROBE below) prints: the Node it ran on, and whether better-sqlite3 loaded there. */
export interface ProbeResult {
  node: string;
  abi: string;
  /** The error loading better-sqlite3 gave, or null when it loaded and opened a database. */
  sqliteError: string | null;
  /**
   * The module's folder, when its sources are there to rebuild it (a checkout); null when only the
   * compiled binary is (an installed VSIX).
   */
  rebuildIn: string | null;
}

export type RuntimeCheck = { ok: true; node: string; abi: string } | { ok: false; reason: string; fix: string };

/** The Node that runs the host, and how messages name it. */
export interface HostNode {
  nodePath: string;
  /** `"avfs.nodePath" ("…")`, or the shipped runtime with its path. */
  label: string;
  source: 'setting' | 'bundled' | 'path';
}

/** Where the VSIX puts its Node runtime, relative to the extension's folder. */
export const BUNDLED_NODE = join('runtime', 'bin', 'node');

/**
 * The Node for the host: `setting` (avfs.nodePath) when not empty; else the runtime shipped in the
 * extension's folder when it is there and executable; else `node` from PATH (a checkout).
 */
export function hostNode(setting: string, extensionRoot: string): HostNode {
  const set = setting.trim();
  if (set) return { nodePath: set, label: settingLabel(set), source: 'setting' };
  const bundled = join(extensionRoot, BUNDLED_NODE);
  try {
    accessSync(bundled, constants.X_OK);
    return { nodePath: bundled, label: `the extension's own Node (${JSON.stringify(bundled)})`, source: 'bundled' };
  } catch {
    return { nodePath: 'node', label: settingLabel('node'), source: 'path' };
  }
}

function settingLabel(nodePath: string): string {
  return `"avfs.nodePath" (${JSON.stringify(nodePath)})`;
}

// Runs in the candidate Node, in the directory of the host's bundle, so that better-sqlite3 is
// resolved exactly as the host resolves it. Opening a database is what loads the binary.
const PROBE = `
const out = { node: process.version, abi: process.versions.modules, sqliteError: null, rebuildIn: null };
try {
  const manifest = require.resolve('better-sqlite3/package.json', { paths: [process.cwd()] });
  const dir = require('path').dirname(manifest);
  if (require('fs').existsSync(require('path').join(dir, 'binding.gyp'))) out.rebuildIn = dir;
  const Database = require(dir);
  new Database(':memory:').close();
} catch (e) {
  out.sqliteError = String(e && e.message || e);
}
process.stdout.write(JSON.stringify(out));
`;

/**
 * Runs the probe with `nodePath` in `hostDir` (the folder of dist/avfs.js) and judges the result.
 * `label` names that Node in messages (default: as the avfs.nodePath setting).
 */
export async function checkRuntime(nodePath: string, hostDir: string, env: NodeJS.ProcessEnv, timeoutMs = 15_000, label = settingLabel(nodePath)): Promise<RuntimeCheck> {
  const setting = label;
  let stdout: string;
  try {
    stdout = await new Promise<string>((resolve, reject) => {
      execFile(nodePath, ['-e', PROBE], { cwd: hostDir, env, timeout: timeoutMs, encoding: 'utf8' }, (error, out, err) => {
        if (error) reject(Object.assign(error, { stderr: err }));
        else resolve(out);
      });
    });
  } catch (e) {
    const error = e as NodeJS.ErrnoException & { stderr?: string; killed?: boolean };
    if (error.code === 'ENOENT' || error.code === 'EACCES') {
      return {
        ok: false,
        reason: `${setting} cannot be run (${error.code}): the vault host needs Node ${MIN_NODE_MAJOR} or later.`,
        fix: `Install Node ${MIN_NODE_MAJOR}+ or set "avfs.nodePath" to the path of a Node binary.`,
      };
    }
    const why = error.killed ? `did not answer within ${timeoutMs / 1000} s` : (error.stderr || error.message).trim().split('\n')[0];
    return { ok: false, reason: `${setting} failed to run a version check: ${why}`, fix: 'Set "avfs.nodePath" to a working Node binary.' };
  }
  let probe: ProbeResult;
  try {
    probe = JSON.parse(stdout) as ProbeResult;
  } catch {
    return { ok: false, reason: `${setting} is not Node.js (its version check printed ${JSON.stringify(stdout.slice(0, 80))}).`, fix: 'Set "avfs.nodePath" to a Node binary.' };
  }
  return judgeProbe(probe, nodePath, label);
}

/** Pure: a probe's result, judged. */
export function judgeProbe(probe: ProbeResult, nodePath: string, label = settingLabel(nodePath)): RuntimeCheck {
  const setting = label;
  const major = Number(/^v(\d+)\./.exec(probe.node)?.[1] ?? 0);
  if (major < MIN_NODE_MAJOR) {
    return {
      ok: false,
      reason: `${setting} runs Node ${probe.node}; the vault host needs Node ${MIN_NODE_MAJOR} or later.`,
      fix: `Set "avfs.nodePath" to a Node ${MIN_NODE_MAJOR}+ binary.`,
    };
  }
  if (probe.sqliteError === null) return { ok: true, node: probe.node, abi: probe.abi };
  const mismatch = parseAbiMismatch(probe.sqliteError);
  if (mismatch) {
    const built = describeAbi(mismatch.built);
    return {
      ok: false,
      reason:
        `The vault host's native module better-sqlite3 was built for ${built} (NODE_MODULE_VERSION ${mismatch.built}), ` +
        `but ${setting} runs Node ${probe.node} (NODE_MODULE_VERSION ${probe.abi}).`,
      fix: probe.rebuildIn
        ? `Set "avfs.nodePath" to a ${built} binary, or rebuild the module for Node ${probe.node}: run \`npm rebuild better-sqlite3\` with that Node in ${dirnameOf(probe.rebuildIn)}.`
        : `Clear "avfs.nodePath" to run the host on the extension's own Node, or set it to a ${built} binary.`,
    };
  }
  return {
    ok: false,
    reason: `The vault host's native module better-sqlite3 does not load on Node ${probe.node} (${setting}): ${firstLine(probe.sqliteError)}`,
    fix: 'Reinstall the extension\'s dependencies with that Node (`npm install`), or set "avfs.nodePath" to the Node they were installed with.',
  };
}

/** The two NODE_MODULE_VERSIONs in Node's "compiled against a different Node.js version" error. */
export function parseAbiMismatch(message: string): { built: string; running: string } | undefined {
  const m = /NODE_MODULE_VERSION\s+(\d+)[\s\S]*?NODE_MODULE_VERSION\s+(\d+)/.exec(message);
  return m?.[1] && m[2] ? { built: m[1], running: m[2] } : undefined;
}

/** "Node 20" for 115; the bare number for an ABI this table does not know. */
export function describeAbi(abi: string): string {
  const major = NODE_BY_ABI[abi];
  return major ? `Node ${major}` : `the Node.js release with NODE_MODULE_VERSION ${abi}`;
}

/** The project folder of a module folder (…/node_modules/better-sqlite3 → …). */
function dirnameOf(moduleDir: string): string {
  return moduleDir.replace(/[\\/]node_modules[\\/]better-sqlite3[\\/]?$/, '');
}

function firstLine(text: string): string {
  return text.trim().split('\n')[0] ?? '';
}
