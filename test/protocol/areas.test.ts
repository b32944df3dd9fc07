/**
 * One vocabulary of areas (host/protocol/areas.ts) for everything loaded by area: the CLI's
 * handlers, the methods' schemas, the operations, and the build's policy-only core. Each check
 * below fails when one of them names an area differently from the others.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { HANDLER_MODULES } from '../../host/cli/core';
import { buildProgram } from '../../host/cli/main';
import { loadOp, OPS_MODULES } from '../../host/ops/load';
import { OPS } from '../../host/ops/index';
import { type Area, AREAS, areaOf } from '../../host/protocol/areas';
import { METHODS, type MethodName } from '../../host/protocol/methods';
import { METHOD_TABLES, methodSchemas } from '../../host/protocol/methods/load';
import { ROOT } from '../helpers';

/** Every handler name the command tree runs. */
function handlerNames(): string[] {
  const names: string[] = [];
  buildProgram((name) => {
    names.push(name);
    return async () => undefined;
  });
  return names;
}

test("every command's handler is named `<area>.<verb>` and lives in its area's file, which holds no other area's", async () => {
  const names = handlerNames();
  assert.ok(names.length > 40, `${names.length} handlers`);
  for (const name of names) {
    const area = name.slice(0, name.indexOf('.')) as Area;
    assert.ok(AREAS.includes(area), `${name}: ${area} is not an area`);
    assert.equal(typeof (await HANDLER_MODULES[area]())[name], 'function', `${name} is not in host/cli/handlers/${area}.ts`);
  }
  for (const area of AREAS) {
    for (const key of Object.keys(await HANDLER_MODULES[area]())) assert.ok(key.startsWith(`${area}.`), `host/cli/handlers/${area}.ts holds ${key}`);
  }
});

test("every method's schemas and operation load from its area's file alone", async () => {
  for (const method of Object.keys(METHODS) as MethodName[]) {
    const area = areaOf(method);
    assert.equal(await methodSchemas(method), METHODS[method], `${method}'s schemas are not in host/protocol/methods/${area}.ts`);
    if (method in OPS) assert.equal(await loadOp(method as keyof typeof OPS), OPS[method as keyof typeof OPS], `${method}'s operation is not in host/ops/${area}.ts`);
  }
  for (const [area, load] of Object.entries(METHOD_TABLES)) for (const m of Object.keys(await load())) assert.equal(areaOf(m as MethodName), area, `methods/${area}.ts defines ${m}`);
  for (const [area, load] of Object.entries(OPS_MODULES)) for (const m of Object.keys(await load())) assert.equal(areaOf(m as MethodName), area, `ops/${area}.ts implements ${m}`);
});

test("each loader imports an area's file by the area's name (what the build's policy-only core relies on)", () => {
  for (const [loader, dir] of [['host/cli/core.ts', './handlers/'], ['host/protocol/methods/load.ts', './'], ['host/ops/load.ts', './']] as const) {
    const entries = [...readFileSync(join(ROOT, loader), 'utf8').matchAll(/^ {2}(\w+): async \(\) => \(await import\('([^']+)'\)\)/gm)];
    assert.ok(entries.length >= 7, `${loader}: ${entries.length} areas found`);
    for (const [, area, path] of entries) {
      assert.ok(AREAS.includes(area as Area), `${loader}: ${area} is not an area`);
      assert.equal(path, `${dir}${area}`, `${loader} loads ${area} from ${path}`);
    }
  }
});

test("dist/avfs-policy.js holds the policy area's handlers and no other area's", () => {
  const file = join(ROOT, 'dist', 'avfs-policy.js');
  assert.ok(existsSync(file), 'npm run build first');
  const text = readFileSync(file, 'utf8');
  for (const name of handlerNames()) assert.equal(text.includes(JSON.stringify(name)), name.startsWith('policy.'), `${name} in the policy core`);
});
