import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, test } from "node:test";
import { bundleTree, pinImportMetaUrl, relativeSpecifier } from "./bundle.ts";

const work = mkdtempSync(join(tmpdir(), "quarry-bundle-test-"));
after(() => rmSync(work, { recursive: true, force: true }));

test("relative specifiers: ./ in the same folder or below, ../ above, dotted folders kept", () => {
  assert.equal(relativeSpecifier("/app/src", "/app/src/chunk-A.js"), "./chunk-A.js");
  assert.equal(relativeSpecifier("/app/src", "/app/src/.hidden/x.js"), "./.hidden/x.js");
  assert.equal(
    relativeSpecifier("/app/src", "/app/node_modules/.pnpm/undici@8/node_modules/undici/index.js"),
    "../node_modules/.pnpm/undici@8/node_modules/undici/index.js",
  );
});

test("import.meta.url becomes the module's own file, resolved against the bundle's URL", () => {
  assert.equal(
    pinImportMetaUrl('const r = createRequire(import.meta.url); f(import.meta.url, "x")', "../libs/a.js"),
    'const r = createRequire(new URL("../libs/a.js", import.meta.url).href); f(new URL("../libs/a.js", import.meta.url).href, "x")',
  );
  assert.equal(pinImportMetaUrl("import.meta.main", "./a.js"), "import.meta.main");
});

function writeTree(app: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(app, path)), { recursive: true });
    writeFileSync(join(app, path), content);
  }
}

const pkg = (name: string, main: string) => JSON.stringify({ name, version: "1.0.0", main });

test("the bundled tree runs as the unbundled one did, from anywhere it is moved to", () => {
  const app = join(work, "app");
  writeTree(app, {
    // a lib whose own dependency is reachable only from the lib's folder (as pnpm lays them out)
    "libs/greet/package.json": JSON.stringify({ name: "greet", type: "module", exports: "./src/index.js" }),
    "libs/greet/src/index.js": [
      'import { createRequire } from "node:module";',
      'import { fileURLToPath } from "node:url";',
      "export const word = () => createRequire(import.meta.url)('private-dep').word;",
      "export const isEntry = fileURLToPath(import.meta.url) === process.argv[1];",
    ].join("\n"),
    "libs/greet/node_modules/private-dep/package.json": pkg("private-dep", "index.cjs"),
    "libs/greet/node_modules/private-dep/index.cjs": 'exports.word = "hello";',
    "node_modules/greet/package.json": JSON.stringify({
      name: "greet",
      type: "module",
      exports: "./index.js",
    }),
    "node_modules/greet/index.js": 'export * from "../../libs/greet/src/index.js";',
    // a package imported only at first use, which records that it was evaluated
    "node_modules/lazy-pkg/package.json": pkg("lazy-pkg", "index.cjs"),
    "node_modules/lazy-pkg/index.cjs": "globalThis.lazyLoaded = true; exports.value = 'lazy value';",
    "src/later.js": "export const later = 'from a chunk';",
    "src/main.js": [
      'import { word, isEntry } from "greet";',
      "const before = globalThis.lazyLoaded === true;",
      'const { value } = await import("lazy-pkg");',
      'const { later } = await import("./later.js");',
      "console.log(JSON.stringify({ word: word(), isEntry, before, value, later }));",
    ].join("\n"),
  });
  return bundleTree(app).then(({ files }) => {
    const chunks = files.filter((f) => /^chunk-.*\.js$/.test(f));
    assert.ok(files.includes("main.js") && files.includes("main.js.map"), files.join(" "));
    assert.equal(chunks.length, 1, "the relative dynamic import is a chunk");
    const main = readFileSync(join(app, "src", "main.js"), "utf8");
    assert.ok(!main.includes("from a chunk"), "the chunk's code is not in main.js");
    assert.ok(!main.includes("lazy value"), "the lazy package is not in main.js");
    assert.ok(!main.includes("hello"), "the createRequire'd package is not bundled");
    assert.ok(!readdirSync(app).some((f) => f.startsWith(".bundle-")), "no staging folder left");

    const expected = {
      word: "hello",
      isEntry: false,
      before: false,
      value: "lazy value",
      later: "from a chunk",
    };
    const runIn = (dir: string) =>
      JSON.parse(
        execFileSync(process.execPath, [join(dir, "src", "main.js")], { cwd: work, encoding: "utf8" }),
      );
    assert.deepEqual(runIn(app), expected);
    const moved = join(work, "elsewhere");
    renameSync(app, moved);
    assert.deepEqual(runIn(moved), expected, "nothing in the bundle names the folder it was built in");
  });
});
