import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { rewriteManifest, rewriteSpecifiers, stripTree } from "./strip-types.ts";

test("relative .ts specifiers become .js; packages, node: modules and other strings are left alone", () => {
  const code = [
    'import { a } from "./a.ts";',
    "import type_free from '../b/c.ts';",
    'export { d } from "./d.ts";',
    'import "./side-effect.ts";',
    'const lazy = await import("./lazy.ts");',
    'import { kube } from "@quarry/kube";',
    'import { x } from "node:fs";',
    'import { ws } from "@kubernetes/client-node/dist/web-socket-handler.js";',
    'const doc = "see services/x/src/main.ts";',
  ].join("\n");
  assert.equal(
    rewriteSpecifiers(code),
    [
      'import { a } from "./a.js";',
      "import type_free from '../b/c.js';",
      'export { d } from "./d.js";',
      'import "./side-effect.js";',
      'const lazy = await import("./lazy.js");',
      'import { kube } from "@quarry/kube";',
      'import { x } from "node:fs";',
      'import { ws } from "@kubernetes/client-node/dist/web-socket-handler.js";',
      'const doc = "see services/x/src/main.ts";',
    ].join("\n"),
  );
});

test("package.json exports (nested conditions) and main move to .js; .d.ts and other fields stay", () => {
  assert.deepEqual(
    rewriteManifest({
      name: "@quarry/kube",
      main: "./src/index.ts",
      types: "./src/index.d.ts",
      exports: { ".": "./src/index.ts", "./x": { types: "./src/x.d.ts", default: "./src/x.ts" } },
    }),
    {
      name: "@quarry/kube",
      main: "./src/index.js",
      types: "./src/index.d.ts",
      exports: { ".": "./src/index.js", "./x": { types: "./src/x.d.ts", default: "./src/x.js" } },
    },
  );
});

const dir = mkdtempSync(join(tmpdir(), "strip-types-test-"));
after(() => rmSync(dir, { recursive: true, force: true }));

test("a stripped tree runs under node without type stripping, node_modules untouched", () => {
  mkdirSync(join(dir, "src"));
  mkdirSync(join(dir, "libs", "util", "src"), { recursive: true });
  mkdirSync(join(dir, "node_modules", "dep"), { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({ type: "module", exports: { ".": "./src/main.ts" } }),
  );
  writeFileSync(
    join(dir, "src", "main.ts"),
    'import { twice } from "../libs/util/src/twice.ts";\ninterface Out { n: number }\nconst out: Out = { n: twice(21) };\nconsole.log(JSON.stringify(out));\n',
  );
  writeFileSync(
    join(dir, "libs", "util", "src", "twice.ts"),
    "export function twice(n: number): number {\n  return (n as number) * 2;\n}\n",
  );
  writeFileSync(join(dir, "node_modules", "dep", "keep.ts"), "export const x: number = 1;\n");
  // a hard link, as pnpm deploy makes them: the original must not change
  const original = join(dir, "original-package.json");
  linkSync(join(dir, "package.json"), original);
  assert.equal(stripTree(dir), 2);
  assert.equal(existsSync(join(dir, "src", "main.ts")), false);
  assert.equal(existsSync(join(dir, "node_modules", "dep", "keep.ts")), true);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).exports, {
    ".": "./src/main.js",
  });
  const out = execFileSync(process.execPath, ["--no-experimental-strip-types", join(dir, "src", "main.js")], {
    encoding: "utf8",
  });
  assert.equal(out.trim(), '{"n":42}');
});
