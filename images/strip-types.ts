// Turns a deployed service tree's TypeScript into the JavaScript Node would
// run anyway: every .ts file outside node_modules becomes a .js file with
// Node's own type stripping (module.stripTypeScriptTypes, "strip" mode: the
// same erasure, so the same program), relative import specifiers and
// package.json exports/main move from .ts to .js. Why: a process that runs .ts
// loads Node's type stripper (a Wasm build of swc), 17-19 MiB of RSS for the
// process's whole life (docs/performance.md, "Fleet memory"); the image's
// entrypoint then runs src/main.js (bundled by images/bundle.ts).
// Used by images/Dockerfile and dev/image-builder/src/build-layout.ts after relink-workspace.ts; no dependencies.
// Usage: node images/strip-types.ts <deployed-dir>
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { stripTypeScriptTypes } from "node:module";
import { join } from "node:path";

/** `from "./x.ts"`, `import "../y.ts"`, `import("./z.ts")`, `export … from "./w.ts"`: relative only. */
const RELATIVE_TS_SPECIFIER = /(\bfrom\s*|\bimport\s*\(?\s*)(["'])(\.{1,2}\/[^"'\n]+)\.ts\2/g;

/** The source with its relative .ts specifiers pointing at the .js files this script writes. */
export function rewriteSpecifiers(code: string): string {
  return code.replace(
    RELATIVE_TS_SPECIFIER,
    (_m, lead: string, q: string, path: string) => `${lead}${q}${path}.js${q}`,
  );
}

/** package.json's exports and main, .ts targets renamed to .js (nested conditions included). */
export function rewriteManifest(manifest: Record<string, unknown>): Record<string, unknown> {
  const rename = (v: unknown): unknown => {
    if (typeof v === "string") return v.endsWith(".ts") && !v.endsWith(".d.ts") ? `${v.slice(0, -3)}.js` : v;
    if (v && typeof v === "object")
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, rename(x)]));
    return v;
  };
  const out = { ...manifest };
  for (const key of ["exports", "main"]) if (key in out) out[key] = rename(out[key]);
  return out;
}

/** Strips every .ts file under `dir` (not under node_modules, not .d.ts); returns how many. */
export function stripTree(dir: string): number {
  let count = 0;
  for (const name of readdirSync(dir)) {
    if (name === "node_modules") continue;
    const path = join(dir, name);
    const st = statSync(path);
    if (st.isDirectory()) count += stripTree(path);
    else if (name === "package.json") {
      const manifest = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
      // pnpm deploy hard-links files (to its store, or to the workspace's own): a write in place
      // would change the original, so the link is removed and a new file written
      rmSync(path);
      writeFileSync(path, `${JSON.stringify(rewriteManifest(manifest), null, 2)}\n`);
    } else if (name.endsWith(".ts") && !name.endsWith(".d.ts")) {
      const code = stripTypeScriptTypes(readFileSync(path, "utf8"), { mode: "strip" });
      writeFileSync(`${path.slice(0, -3)}.js`, rewriteSpecifiers(code));
      rmSync(path);
      count++;
    }
  }
  return count;
}

if (import.meta.main) {
  const app = process.argv[2];
  if (!app) throw new Error("usage: node images/strip-types.ts <deployed-dir>");
  console.log(`type-stripped ${stripTree(app)} files to .js`);
}
