import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
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
