import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { RUNTIME_HELPERS, staleFiles } from "./gen-validators.ts";

test("the committed validators are what scripts/gen-validators.ts generates from the schemas", async () => {
  assert.deepEqual(await staleFiles(), [], "run `node scripts/gen-validators.ts`");
});

test("the stand-in for ajv's ucs2length counts as ajv does, lone surrogates included", () => {
  const requireFromApi = createRequire(join(import.meta.dirname, "..", "libs", "api", "package.json"));
  const ajvLength = (requireFromApi("ajv/dist/runtime/ucs2length") as { default: (s: string) => number })
    .default;
  const helper = RUNTIME_HELPERS["ajv/dist/runtime/ucs2length"];
  assert.ok(helper);
  const ours = new Function(`${helper.code}\nreturn ${helper.name};`)() as (s: string) => number;
  for (const s of ["", "abc", "😀", "a😀b", "\uD800", "a\uD800", "\uDC00x", "\uD800\uD800\uDC00", "é"])
    assert.equal(ours(s), ajvLength(s), JSON.stringify(s));
});

// Every module a service loads at start (main.ts's imports, main's own top level left out), as
// the service would resolve them: none may be ajv's, which the generated code replaces.
const LIST_MODULES = `
import { registerHooks } from "node:module";
const urls = [];
registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); urls.push(r.url); return r; } });
for (const spec of JSON.parse(process.env.SPECIFIERS)) await import(spec);
console.log(JSON.stringify(urls));
`;

test("no service loads ajv at start: its validators are generated code", () => {
  const services = join(import.meta.dirname, "..", "services");
  for (const service of readdirSync(services)) {
    const dir = join(services, service, "src");
    if (!existsSync(join(dir, "main.ts"))) continue;
    const specifiers = [
      ...readFileSync(join(dir, "main.ts"), "utf8").matchAll(
        /^import\s+(?!type\s)[^;]*?from\s*"([^"]+)";/gms,
      ),
    ]
      .map((m) => m[1]!)
      .map((s) => (s.startsWith(".") ? pathToFileURL(join(dir, s)).href : s));
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", LIST_MODULES], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, SPECIFIERS: JSON.stringify(specifiers) },
    });
    const urls = JSON.parse(out.trim().split("\n").at(-1) ?? "[]") as string[];
    assert.ok(urls.length > 100, `${service}: ${urls.length} modules: the imports did not load`);
    assert.deepEqual(
      urls.filter((u) => /\/node_modules\/ajv\//.test(u)),
      [],
      `${service} loads ajv`,
    );
  }
});
